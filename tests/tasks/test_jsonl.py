"""The jsonl dataset: field mapping, answer extraction, splits and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from debate_core.config.structuring import structure
from debate_core.errors import ConfigError
from debate_core.tasks.errors import DatasetError
from debate_core.tasks.jsonl import JsonlDataset, JsonlDatasetOptions


def write(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    return path


def test_gsm8k_style_mapping_with_regex(tmp_path: Path) -> None:
    rows = [{"q": f"How many {i}?", "a": f"steps...\n#### {i * 10}"} for i in range(10)]
    options = JsonlDatasetOptions(
        path=str(write(tmp_path / "gsm.jsonl", rows)),
        question_field="q",
        answer_field="a",
        answer_regex=r"####\s*(.+)$",
        test_fraction=0.2,
    )
    data = JsonlDataset(options)
    train, test = data.problems("train"), data.problems("test")
    assert [p.answer for p in train] == [str(i * 10) for i in range(8)]
    assert [p.question for p in test] == ["How many 8?", "How many 9?"]
    assert train[0].id == "gsm-1" and train[0].metadata["source"].endswith("gsm.jsonl:1")
    assert "solution" not in train[0].metadata


def test_a_worked_solution_field_becomes_the_warmstart_reference(tmp_path: Path) -> None:
    rows = [{"q": "How many 3?", "a": "1+2=3\n#### 3"}, {"q": "How many 4?", "a": "#### 4", "why": "  "}]
    rows.append({"q": "How many 5?", "a": "#### 5"})  # no "why" at all
    path = write(tmp_path / "gsm.jsonl", rows)
    options = JsonlDatasetOptions(path=str(path), question_field="q", answer_field="a", answer_regex=r"####\s*(.+)$")
    with_solutions = JsonlDataset(attrs.evolve(options, solution_field="a")).problems("train")
    assert with_solutions[0].answer == "3" and with_solutions[0].metadata["solution"] == "1+2=3\n#### 3"
    blank = JsonlDataset(attrs.evolve(options, solution_field="why", test_fraction=0.0)).problems("train")
    assert "solution" not in blank[1].metadata  # an empty worked solution is none
    assert "solution" not in blank[2].metadata  # and so is a missing one


def test_nested_fields_ids_numbers_and_open_prompts(tmp_path: Path) -> None:
    rows = [{"meta": {"id": "p7"}, "prompt": {"text": "Write a poem"}, "sol": [3.0]}]
    path = write(tmp_path / "x.jsonl", rows)
    base = {"path": str(path), "question_field": "prompt.text", "id_field": "meta.id"}
    (problem,) = JsonlDataset(JsonlDatasetOptions(**base, answer_field="sol.0")).problems("train")
    assert (problem.id, problem.question, problem.answer) == ("p7", "Write a poem", "3")
    (open_prompt,) = JsonlDataset(JsonlDatasetOptions(**base, answer_field=None)).problems("train")
    assert open_prompt.answer is None
    from_toml = structure({**base, "answer_field": ""}, JsonlDatasetOptions, "dataset.options")  # TOML has no null
    assert from_toml.answer_field is None


def test_separate_test_file_and_limit(tmp_path: Path) -> None:
    train = write(tmp_path / "train.jsonl", [{"question": f"q{i}", "answer": i} for i in range(5)])
    test = write(tmp_path / "test.jsonl", [{"question": "t", "answer": "1"}])
    data = JsonlDataset(JsonlDatasetOptions(path=str(train), test_path=str(test), limit=3))
    assert [p.question for p in data.problems("train")] == ["q0", "q1", "q2"]
    assert [p.question for p in data.problems("test")] == ["t"]


def test_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "ok", "answer": 1}\n{"question": \n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl:2: not valid JSON"):
        JsonlDataset(JsonlDatasetOptions(path=str(path))).problems("train")
    path.write_text('{"question": "ok", "solution": 1}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: no field 'answer' \(the record has: question, solution\)"):
        JsonlDataset(JsonlDatasetOptions(path=str(path))).problems("train")
    with pytest.raises(DatasetError, match="does not match the answer"):
        JsonlDataset(JsonlDatasetOptions(path=str(path), answer_field="solution", answer_regex="####(.*)")).problems(
            "train"
        )
    with pytest.raises(DatasetError, match="no such dataset file"):
        JsonlDataset(JsonlDatasetOptions(path=str(tmp_path / "missing.jsonl"))).problems("train")
    with pytest.raises(DatasetError, match="no test split"):
        JsonlDataset(JsonlDatasetOptions(path=str(path), answer_field="solution")).problems("test")


def test_option_validation() -> None:
    with pytest.raises(ConfigError, match="answer_regex"):
        structure({"path": "x", "answer_regex": "(unclosed"}, JsonlDatasetOptions, "dataset.options")
    with pytest.raises(ConfigError, match="path"):
        structure({}, JsonlDatasetOptions, "dataset.options")
