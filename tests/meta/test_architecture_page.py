"""docs/architecture.md matches the tree: its layout table names every module and package of
debate_core (and nothing else), and its layer diagram is the import-linter layers contract."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "core" / "src" / "debate_core"


def test_the_layout_table_names_every_module_and_package_of_the_core() -> None:
    listed = set(re.findall(r"^\| `core/src/debate_core/([a-z_]+(?:\.py|/))`", PAGE, flags=re.MULTILINE))
    in_tree = {
        f"{p.name}/" if p.is_dir() else p.name
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.name != "__main__.py")
    }
    in_tree.add("__init__.py")
    assert listed == in_tree


def test_every_folder_and_module_the_layout_table_names_exists() -> None:
    """The ``where`` of each row, and the modules and folders a package's row names (``fixtures.py``,
    ``local/``), are in the tree."""
    layout = PAGE.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (.+) \|$", layout, flags=re.MULTILINE)
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
