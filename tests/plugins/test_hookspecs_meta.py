"""Every hook spec has a docstring with its return value and an example, a built-in implementation,
and one spelling across kind, spec, hook and run-file key. Its docs section, contract suite and
entry-point test: tests/plugins/test_hook_examples.py."""

from __future__ import annotations

import inspect

import pytest

from debate_core.plugin import _hookspecs as hookspecs


@pytest.mark.parametrize("hook_name", sorted(hookspecs.HOOK_KINDS))
def test_hook_is_documented_with_return_value_and_example(hook_name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook_name)) or ""
    assert "Returns:" in doc and "Example::" in doc and "@hookimpl" in doc


@pytest.mark.parametrize("hook_name", sorted(hookspecs.HOOK_KINDS))
def test_hook_has_a_builtin_implementation(hook_name: str) -> None:
    from debate_core.plugin import get_registry

    registry = get_registry()
    registry.listing()
    manager = registry.plugin_manager
    owners = {impl.plugin_name for impl in getattr(manager.hook, hook_name).get_hookimpls()}
    assert any(owner.startswith("debate-core:") for owner in owners), f"no built-in implements {hook_name}"


def test_one_spelling_per_kind_across_kind_spec_hook_and_config_key() -> None:
    """The kind name == the spec class's prefix (snake case) == the run-file key that picks one;
    the hook is debate_ + the kind's plural. One key is named for what it picks, not the kind:
    ``debate.final_answer`` picks the answer rule that gives the debate's final answer."""
    import re

    from debate_core.config import RunConfig, component_choices
    from debate_core.plugin import SPEC_TYPES, kind_label

    for spec_type in SPEC_TYPES:
        prefix = spec_type.__name__.removesuffix("Spec")
        assert re.sub(r"(?<!^)(?=[A-Z])", "_", prefix).lower() == spec_type.kind
    hooks = {kind: hook for hook, kind in hookspecs.HOOK_KINDS.items()}
    for kind, hook in hooks.items():
        assert hook == "debate_" + kind_label(kind, plural=True).replace(" ", "_")
    picked_one = {path.rsplit(".", 1)[-1]: kind for path, kind, _ in component_choices(RunConfig()) if "[" not in path}
    named_for_what_it_picks = {"final_answer": "answer_rule"}
    assert all(named_for_what_it_picks.get(key, key) == kind for key, kind in picked_one.items()), picked_one
