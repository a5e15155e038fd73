"""``debate train``, ``debate eval`` and ``debate preflight`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry
from debate_core.training.progress import Progress
from tests.training.trainer_harness import BASE_OVERRIDES, SERVICES, read_metrics


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.toml"
    path.write_text('[run]\nname = "cli"\nseed = 3\n', encoding="utf-8")
    return path


def test_train_resume_and_eval(
    registry: Registry, run_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "out"
    overrides = [*BASE_OVERRIDES, "training.num_iterations=2", "evaluation.num_problems=1"]
    assert main(["train", str(run_file), *overrides, "--run-dir", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"run directory: {run}" in out and "RL iterations 2" in out and "evaluations of 1 problem:" in out
    assert "final" in out.split("evaluations of 1 problem:")[1].splitlines()[1].split()  # the table's header
    # the next commands: the report, an evaluation and a debate with the last checkpoint, from the
    # run's resolved config, which holds the overrides (the run file alone would be another run)
    resolved = run / "config.toml"
    assert f"  debate report {run}" in out
    assert (
        f"  debate eval {resolved} --checkpoint {run}" in out and f"  debate run {resolved} --checkpoint {run}" in out
    )
    # a second start in the same directory is refused; --resume continues it
    assert main(["train", str(run_file), *overrides, "--run-dir", str(run)]) == 1
    assert "already holds a run" in capsys.readouterr().err
    assert (
        main(
            [
                "train",
                str(run_file),
                *overrides[:-2],
                "training.num_iterations=3",
                "evaluation.num_problems=1",
                "--resume",
                str(run),
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "training.num_iterations" in captured.err  # the changed key is reported
    resumed_config = run / "config.resumed_step_000002.toml"  # the config of the resumed segment
    assert f"  debate eval {resumed_config} --checkpoint {run}" in captured.out
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [1, 2, 3]
    assert (  # the hint as printed evaluates the run's last checkpoint
        main(
            [
                "eval",
                str(resumed_config),
                "--checkpoint",
                str(run),
                "--json",
                "--out",
                str(tmp_path / "eval.json"),
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["checkpoint"].endswith("step_000003_sampler.npz")  # the weights saved for sampling
    opened = SERVICES[-1].log
    assert not any(label.startswith(("create_lora", "create_training")) for _, label in opened)
    # the --out file: what --json prints, plus its label, each problem's values and the resolved run file
    written = json.loads((tmp_path / "eval.json").read_text())
    assert {k: written[k] for k in report} == report and written["label"] == "eval"
    assert set(written["per_problem"]) <= set(report["metrics"]) and "[evaluation]" in written["config"]
    assert "eval_tiny_sums/debate/pass@3" in report["metrics"]


def test_preflight_reports_each_check(registry: Registry, run_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["preflight", str(run_file), *BASE_OVERRIDES, "--num-problems", "2"])
    out = capsys.readouterr().out
    assert "direct accuracy" in out and "valid comparisons" in out and "pass@3" in out and "judge accuracy" in out
    assert code == (1 if "[FAIL]" in out else 0)


def test_bad_arguments_are_one_line_errors(
    registry: Registry, run_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["train", str(run_file), "training.batch_size=0"]) == 1
    assert "training.batch_size" in capsys.readouterr().err
    assert main(["train", str(run_file), *BASE_OVERRIDES, "--resume", str(run_file.parent / "nothing")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main(["preflight", str(run_file), *BASE_OVERRIDES, "--num-problems", "0"]) == 1


def test_progress_degrades_to_lines_off_a_terminal(tmp_path: Path) -> None:
    import io

    stream = io.StringIO()
    progress = Progress("auto", stream)
    assert progress.mode == "lines"
    progress.start("iter 1/2", 3)
    for _ in range(3):
        progress.debate_done(10)
    progress.finish({"reward": 0.5})
    assert stream.getvalue() == "iter 1/2  reward 0.5\n"

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    bar = Progress("auto", tty)
    bar.start("iter 1/2", 2)
    bar.debate_done(5)
    bar.finish({"reward": 1.0})
    assert bar.mode == "bar" and "[" in tty.getvalue() and "debates" in tty.getvalue()


def test_resume_without_a_run_file_uses_the_runs_own_config_and_its_overrides(
    registry: Registry, run_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/training.md#checkpoints-stops-faults: the hint printed after a stop, followed verbatim,
    # continues the same run (its command-line overrides included), not the run file's defaults
    run = tmp_path / "out"
    overrides = [*BASE_OVERRIDES, "training.num_iterations=2", "evaluation.num_problems=1"]
    assert main(["train", str(run_file), *overrides, "--run-dir", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"reproduce: debate train {run / 'config.toml'} --run-dir NEW_DIR" in out
    assert main(["train", "--resume", str(run), "training.num_iterations=3"]) == 0
    captured = capsys.readouterr()
    assert "RL iterations 3" in captured.out
    assert f"  debate eval {run / 'config.resumed_step_000002.toml'} --checkpoint {run}" in captured.out
    assert "differs from the run's at: training.num_iterations" in captured.err  # only the key asked for
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [1, 2, 3]


def test_train_without_a_run_file_or_resume_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train"]) == 1
    assert capsys.readouterr().err.strip().endswith("or --resume RUN_DIR to continue a run")
