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
    manager = registry.plugin_manager
    owners = {impl.plugin_name for impl in getattr(manager.hook, hook_name).get_hookimpls()}
    assert any(owner.startswith("debate-core:") for owner in owners), f"no built-in implements {hook_name}"


def test_one_spelling_per_kind_across_kind_spec_hook_and_config_key() -> None:
    """The kind name == the spec class's prefix (snake case) == the run-file key that picks one;
    the hook is debate_ + the kind's plural."""
    import re

    from debate_core.components import SPEC_TYPES
    from debate_core.config import RunConfig, component_choices
    from debate_core.plugins import kind_label

    for spec_type in SPEC_TYPES:
        prefix = spec_type.__name__.removesuffix("Spec")
        assert re.sub(r"(?<!^)(?=[A-Z])", "_", prefix).lower() == spec_type.kind
    hooks = {kind: hook for hook, kind in hookspecs.HOOK_KINDS.items()}
    for kind, hook in hooks.items():
        assert hook == "debate_" + kind_label(kind, plural=True).replace(" ", "_")
    picked_one = {path.rsplit(".", 1)[-1]: kind for path, kind, _ in component_choices(RunConfig()) if "[" not in path}
    assert all(key == kind for key, kind in picked_one.items()), picked_one
