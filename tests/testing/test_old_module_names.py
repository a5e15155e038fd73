"""Modules renamed by what they hold keep their old import paths as aliases that warn, so code
written against the old names keeps working while it is moved."""

from __future__ import annotations

import importlib
import sys

import pytest

RENAMED = {
    "debate_core.components": "debate_core.component_specs",
    "debate_core.testing.contracts": "debate_core.testing.reward_parser_contracts",
    "debate_core.testing.component_contracts": "debate_core.testing.other_kind_contracts",
}


@pytest.mark.parametrize(("old", "new"), RENAMED.items())
def test_an_old_module_path_warns_and_gives_the_same_names(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        alias = importlib.import_module(old)
    current = importlib.import_module(new)
    assert alias.__all__ == current.__all__
    assert all(getattr(alias, name) is getattr(current, name) for name in current.__all__)
