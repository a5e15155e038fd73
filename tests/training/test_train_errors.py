"""``debate train``'s errors name the right place, in one line (issue 55): a typo in a
command-line override names the override, a missing dataset file is refused before any run
directory is announced or made, a missing ``--resume`` target does not exist, and a finished run
says it is finished and how to go on."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry
from tests.training.trainer_harness import BASE_OVERRIDES


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "base.toml"
    path.write_text('[run]\nname = "errors"\nseed = 3\n', encoding="utf-8")
    return path


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """Standard error, which must be exactly one line."""
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_typo_in_an_override_names_the_override_not_the_run_file(
    registry: Registry, run_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["train", str(run_file), *BASE_OVERRIDES, "trainig.batch_size=2", "--run-dir", str(tmp_path / "r")]) == 1
    )
    line = error_line(capsys)
    assert line.startswith("debate: error: override 'trainig.batch_size=2' on the command line: trainig: unknown key")
    assert "base.toml" not in line and "did you mean 'training'" in line
    assert not (tmp_path / "r").exists()


def test_a_bad_key_in_the_run_file_still_names_the_file(
    registry: Registry, run_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file.write_text("[trainig]\nbatch_size = 2\n", encoding="utf-8")
    assert main(["config", "check", str(run_file), "training.batch_size=2"]) == 1
    assert error_line(capsys).startswith(f"debate: error: {run_file}: trainig: unknown key")


def test_a_missing_dataset_file_is_refused_before_a_run_directory(
    registry: Registry, run_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run-missingdata"
    missing = tmp_path / "missing.jsonl"
    overrides = [*BASE_OVERRIDES, "dataset.name=jsonl", f"dataset.options.path={missing}"]
    assert main(["train", str(run_file), *overrides, "--run-dir", str(run)]) == 1
    line = error_line(capsys)  # no "run directory: ..." before it
    assert "dataset" in line and "missing.jsonl" in line and "no such dataset file" in line
    assert not run.exists()


def test_resume_of_a_directory_that_does_not_exist(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["train", "--resume", str(tmp_path / "does-not-exist")]) == 1
    assert error_line(capsys) == (
        f"debate: error: --resume {tmp_path / 'does-not-exist'}: does not exist; "
        f"start a run there with --run-dir {tmp_path / 'does-not-exist'}"
    )


def test_resume_of_a_finished_run_says_it_is_finished_and_how_to_go_on(
    registry: Registry, run_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "done"
    overrides = [*BASE_OVERRIDES, "training.num_iterations=2", "evaluation.num_problems=1"]
    assert main(["train", str(run_file), *overrides, "--run-dir", str(run)]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", str(run)]) == 1
    assert error_line(capsys) == (
        f"debate: error: --resume {run}: already finished at step 2 (nothing to do; "
        f"`debate train --resume {run} training.num_iterations=4` to go on)"
    )
    # the way on it names works
    assert main(["train", "--resume", str(run), "training.num_iterations=4"]) == 0
    assert "RL iterations 4" in capsys.readouterr().out
