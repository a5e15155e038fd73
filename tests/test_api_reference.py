"""Every public name is documented: docs/api-reference.md is generated from the public modules'
``__all__`` and docstrings, and must be current, and no public name may lack a docstring."""

from __future__ import annotations

import importlib
from pathlib import Path

from debate_core.tools.api_reference import PUBLIC_MODULES, api_reference_markdown, describe, public_names, undocumented

PAGE = Path(__file__).resolve().parents[1] / "docs" / "api-reference.md"


def test_every_public_name_has_a_docstring() -> None:
    assert undocumented() == []


def test_every_public_module_declares_its_names_and_they_exist() -> None:
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        assert public_names(module), f"{module_name} has no __all__"
        for name in public_names(module):
            assert hasattr(module, name), f"{module_name}.{name} is in __all__ but missing"


def test_the_reference_page_is_current() -> None:
    assert PAGE.read_text(encoding="utf-8") == api_reference_markdown(), (
        "docs/api-reference.md is stale: run `python -m debate_core.tools.api_reference > docs/api-reference.md`"
    )


def test_a_name_without_a_docstring_is_reported() -> None:
    """The check above can fail."""
    import types

    module = types.ModuleType("probe")
    module.__all__ = ["undocumented_function"]  # type: ignore[attr-defined]

    def undocumented_function() -> None:
        pass

    module.undocumented_function = undocumented_function  # type: ignore[attr-defined]
    assert describe(module, "undocumented_function") == ("function", "")
