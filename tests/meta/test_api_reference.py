"""Every public name is documented: docs/api-reference.md is generated from the public modules'
``__all__`` and docstrings, and must be current, and no public name may lack a docstring."""

from __future__ import annotations

import importlib
from pathlib import Path

from debate_core.tools.api_reference import PUBLIC_MODULES, api_reference_markdown, describe, public_names, undocumented

PAGE = Path(__file__).resolve().parents[2] / "docs" / "api-reference.md"


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


def test_the_stable_api_is_marked_and_every_name_is_rendered_by_mkdocstrings() -> None:
    import re

    page = PAGE.read_text(encoding="utf-8")
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        section = page.split(f"## `{module_name}` (", 1)[1].split("\n## ", 1)[0]
        directive = section.split(f"::: {module_name}\n", 1)[1]
        rendered = re.findall(r"^        - (\S+)$", directive, flags=re.MULTILINE)
        assert sorted(rendered) == sorted(public_names(module)), module_name
        for name in public_names(module):
            row = next(line for line in section.splitlines() if line.startswith(f"| `{name}` |"))
            marked_stable = "| **stable** |" in row
            in_namespace = module_name == "debate_core" or any(
                getattr(importlib.import_module("debate_core"), n) is getattr(module, name)
                for n in public_names(importlib.import_module("debate_core"))
                if not isinstance(getattr(module, name), str | int | float)
            )
            assert marked_stable == in_namespace, (module_name, name)
    # the records a reward reads and the helpers plugin authors need are in the stable API
    stable = page.split("## `debate_core` (stable)", 1)[1].split("\n## ", 1)[0]
    for name in ("DebateRecord", "Turn", "ParsedResponse", "Comparison", "RewardResult", "extract_last_boxed"):
        assert f"| `{name}` |" in stable and f"        - {name}\n" in stable
