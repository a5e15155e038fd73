"""The huggingface dataset: a clear message without the library or the network, and the
field mapping when the library answers (a stand-in module, as this machine is offline)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from debate_core.tasks.errors import DatasetError
from debate_core.tasks.huggingface import HuggingFaceDataset, HuggingFaceOptions


def test_missing_library_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(DatasetError, match="needs the 'datasets' package"):
        HuggingFaceDataset(HuggingFaceOptions(path="openai/gsm8k")).problems("train")


def fake_datasets(rows: list[dict[str, Any]] | Exception) -> types.ModuleType:
    module = types.ModuleType("datasets")
    calls: list[tuple[str, str | None, str]] = []

    def load_dataset(path: str, name: str | None = None, *, split: str) -> list[dict[str, Any]]:
        calls.append((path, name, split))
        if isinstance(rows, Exception):
            raise rows
        return rows

    module.load_dataset = load_dataset  # type: ignore[attr-defined]
    module.calls = calls  # type: ignore[attr-defined]
    return module


def test_rows_become_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    module = fake_datasets([{"question": "2+2?", "answer": "so\n#### 4"}, {"question": "3+3?", "answer": "#### 6"}])
    monkeypatch.setitem(sys.modules, "datasets", module)
    options = HuggingFaceOptions(path="openai/gsm8k", name="main", answer_regex=r"####\s*(.+)$", limit=1)
    (problem,) = HuggingFaceDataset(options).problems("test")
    assert (problem.question, problem.answer, problem.id) == ("2+2?", "4", "openai-gsm8k-test-0")
    assert module.calls == [("openai/gsm8k", "main", "test")]  # type: ignore[attr-defined]


def test_unreachable_dataset_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", fake_datasets(ConnectionError("offline")))
    with pytest.raises(DatasetError, match=r"could not load Hugging Face dataset 'x/y'.*ConnectionError: offline"):
        HuggingFaceDataset(HuggingFaceOptions(path="x/y")).problems("train")
