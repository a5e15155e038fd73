"""The plugin system's 0.1 documented module paths (docs/api-reference.md of 0.1:
``debate_core.plugins``, ``debate_core.hookspecs``, ``debate_core.component_specs``) keep working
as aliases of the ``debate_core.plugin`` package that warn; the undocumented old names are gone."""

from __future__ import annotations

import importlib
import sys

import pytest

DOCUMENTED = {
    "debate_core.plugins": "debate_core.plugin._registry",
    "debate_core.hookspecs": "debate_core.plugin._hookspecs",
    "debate_core.component_specs": "debate_core.plugin._specs",
}


@pytest.mark.parametrize(("old", "home"), DOCUMENTED.items())
def test_a_documented_module_path_warns_and_gives_the_same_names(old: str, home: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=r"import its names from debate_core\.plugin"):
        alias = importlib.import_module(old)
    current = importlib.import_module(home)
    public = importlib.import_module("debate_core.plugin")
    assert alias.__all__ == current.__all__
    assert all(getattr(alias, name) is getattr(current, name) for name in current.__all__)
    assert all(getattr(public, name) is getattr(current, name) for name in current.__all__ if name in public.__all__)


@pytest.mark.parametrize(
    "old",
    [
        "debate_core.components",
        "debate_core.testing.contracts",
        "debate_core.testing.component_contracts",
        "debate_core.rewards.result_checks",
        "debate_core.plugin_manager",
        "debate_core.plugin_results",
    ],
)
def test_an_undocumented_old_name_is_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
