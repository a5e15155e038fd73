"""The seed configurations (docs/training.md#the-seed-configurations): each run file holds every
value its table says comes from a write-up, and each default the table states for a key of the
run file's sections is the project's (a component's options have that component's defaults)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from debate_core.config import RunConfig, unstructure

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "training.md"
_HEADING = re.compile(r"^### `(examples/[^`]+\.toml)`$")
_CELL_VALUE = re.compile(r"`([^`]*)`")


def seed_tables() -> dict[str, list[list[str]]]:
    """File -> the rows (cells) of the table under its heading in the section."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("\n## The seed configurations\n", 1)[1].split("\n## ", 1)[0]
    tables: dict[str, list[list[str]]] = {}
    current: str | None = None
    for line in section.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = heading.group(1)
            tables[current] = []
        elif current and line.startswith("| `"):
            tables[current].append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return tables


def toml_value(literal: str) -> Any:
    return tomllib.loads(f"v = {literal}")["v"]


def lookup(raw: dict[str, Any], dotted: str) -> Any:
    """A key of a run file; a component written as a bare name (``parser = "xml"``) has that ``name``."""
    node: Any = raw
    for part in dotted.split("."):
        if isinstance(node, str) and part == "name":
            return node
        assert isinstance(node, dict) and part in node, f"no key {dotted}"
        node = node[part]
    return node


TABLES = seed_tables()


def test_the_section_covers_every_seed_file() -> None:
    assert set(TABLES) == {
        "examples/seed002-tinker.toml",
        "examples/seed002-math-tinker.toml",
        "examples/seed000-tinker.toml",
    }
    assert all(len(rows) >= 6 for rows in TABLES.values())


@pytest.mark.parametrize("path", sorted(TABLES))
def test_each_file_holds_the_values_of_its_table(path: str) -> None:
    raw = tomllib.loads((ROOT / path).read_text(encoding="utf-8"))
    for key_cell, value_cell, source, _ in TABLES[path]:
        key, value = _CELL_VALUE.fullmatch(key_cell), _CELL_VALUE.fullmatch(value_cell)
        assert key and value and source, (path, key_cell)
        assert lookup(raw, key.group(1)) == toml_value(value.group(1)), (path, key.group(1))


def test_the_easier_problems_file_differs_from_the_default_only_as_its_table_says() -> None:
    default = tomllib.loads((ROOT / "examples/seed002-tinker.toml").read_text(encoding="utf-8"))
    easier = tomllib.loads((ROOT / "examples/seed002-math-tinker.toml").read_text(encoding="utf-8"))
    listed = {_CELL_VALUE.fullmatch(row[0]).group(1) for row in TABLES["examples/seed002-math-tinker.toml"]}  # type: ignore[union-attr]
    for row in TABLES["examples/seed002-tinker.toml"]:
        key = _CELL_VALUE.fullmatch(row[0]).group(1)  # type: ignore[union-attr]
        if key not in listed:
            assert lookup(easier, key) == lookup(default, key), key


@pytest.mark.parametrize("path", sorted(TABLES))
def test_the_stated_project_defaults_are_the_projects(path: str) -> None:
    defaults = unstructure(RunConfig())
    for key_cell, _, _, default_cell in TABLES[path]:
        stated = _CELL_VALUE.match(default_cell)
        key = _CELL_VALUE.fullmatch(key_cell).group(1)  # type: ignore[union-attr]
        if stated is None or ".options." in key:  # a component's options have the component's defaults
            continue
        assert lookup(defaults, key) == toml_value(stated.group(1)), (path, key)
