"""Every hook spec is documented (arguments, return value, example) and exercised by a test."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from debate_core import hookspecs

TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("hook_name", sorted(hookspecs.HOOK_KINDS))
def test_hook_is_documented_with_return_value_and_example(hook_name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook_name)) or ""
    assert "Returns:" in doc and "Example::" in doc and "@hookimpl" in doc


def test_every_hook_function_has_a_kind() -> None:
    hooks = {name for name, fn in vars(hookspecs).items() if name.startswith("debate_") and callable(fn)}
    assert hooks == set(hookspecs.HOOK_KINDS)


@pytest.mark.parametrize("hook_name", sorted(hookspecs.HOOK_KINDS))
def test_hook_is_exercised_by_a_test_beyond_this_one(hook_name: str) -> None:
    """The registry test registers every hook; a built-in implements each one too."""
    this = Path(__file__).resolve()
    kind = hookspecs.HOOK_KINDS[hook_name]
    users = [
        p
        for p in TESTS.rglob("test_*.py")
        if p.resolve() != this and (hook_name in p.read_text() or f'"{kind}"' in p.read_text())
    ]
    assert users, f"no test mentions {hook_name} or kind {kind!r}"


@pytest.mark.parametrize("hook_name", sorted(hookspecs.HOOK_KINDS))
def test_hook_has_a_builtin_implementation(hook_name: str) -> None:
    from debate_core.plugins import get_registry

    registry = get_registry()
    registry.listing()
    manager = registry._manager
    owners = {impl.plugin_name for impl in getattr(manager.hook, hook_name).get_hookimpls()}
    assert any(owner.startswith("debate-core:") for owner in owners), f"no built-in implements {hook_name}"
