"""docs/architecture.md matches the tree: its layout table names every top-level module and every
package and sub-package of debate_core (and nothing else) in one short row each, and its layer
diagram is the import-linter layers contract."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "core" / "src" / "debate_core"


ROW_LIMIT = 200
"""The most characters a layout row's ``what`` may take: a row says what a package holds, not all of it."""


def _layout_rows() -> list[tuple[str, str]]:
    layout = PAGE.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \| (.+) \|$", layout, flags=re.MULTILINE)


def test_the_layout_table_names_every_module_and_package_of_the_core() -> None:
    listed = {where.removeprefix("core/src/debate_core/") for where, _ in _layout_rows()}
    listed = {
        where for where in listed if not where.startswith(("core/", "plugins/", "examples/", "tests/", "benchmarks/"))
    }
    packages = {
        f"{p.relative_to(PACKAGE).as_posix()}/"
        for p in PACKAGE.rglob("*")
        if p.is_dir() and (p / "__init__.py").exists()
    }
    modules = {p.name for p in PACKAGE.iterdir() if p.suffix == ".py" and p.name != "__main__.py"}
    assert listed == packages | modules


def test_every_layout_row_is_short() -> None:
    long_rows = [where for where, what in _layout_rows() if len(what) > ROW_LIMIT]
    assert not long_rows, f"docs/architecture.md#layout rows over {ROW_LIMIT} characters: {long_rows}"


def test_every_folder_and_module_the_layout_table_names_exists() -> None:
    """The ``where`` of each row, and the modules and folders a package's row names (``fixtures.py``,
    ``local/``), are in the tree."""
    rows = _layout_rows()
    missing = [where for where, _ in rows if not (ROOT / where).exists()]
    for where, what in rows:
        if where.startswith("core/src/debate_core/") and where.endswith("/"):
            for name in re.findall(r"`([a-z_]+(?:\.py|/))`", what):
                if not any((ROOT / where).rglob(name.rstrip("/"))):
                    missing.append(f"{where}{name}")
    assert not missing, f"docs/architecture.md#layout names what is not in the tree: {missing}"


def test_the_layer_diagram_is_the_layers_contract() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["type"] == "layers")["layers"]
    diagram = PAGE.split("## Layers", 1)[1].split("```", 2)[1]
    rows = [line.split("  ")[0].strip() for line in diagram.strip().splitlines()]
    assert [set(re.split(r"\s*·\s*", row)) for row in rows] == [set(re.split(r"\s*[|:]\s*", layer)) for layer in layers]
