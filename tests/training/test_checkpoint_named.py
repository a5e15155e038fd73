"""``debate eval --checkpoint`` and ``debate run --checkpoint`` say which checkpoint they loaded:
the argument, the step and the weights' path (issue 55)."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry
from tests.training.trainer_harness import BASE_OVERRIDES


def test_eval_and_run_name_the_checkpoint_and_its_step(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text('[run]\nname = "named"\nseed = 3\n', encoding="utf-8")
    run = tmp_path / "main"
    overrides = [*BASE_OVERRIDES, "training.num_iterations=2", "evaluation.num_problems=1"]
    assert main(["train", str(run_file), *overrides, "--run-dir", str(run)]) == 0
    capsys.readouterr()
    resolved = str(run / "config.toml")

    assert main(["eval", resolved, "--checkpoint", str(run), "--mode", "direct"]) == 0
    captured = capsys.readouterr()
    said = f"checkpoint {run}: step 2 (weights "
    assert f"debate: {said}" in captured.err  # before the evaluation's wait
    policy = next(line for line in captured.out.splitlines() if line.startswith("policy: "))
    assert policy.startswith(f"policy: {said}") and "step_000002" in policy

    assert main(["run", resolved, "--checkpoint", str(run), "--question", "What is 1+1?", "--quiet"]) == 0
    loaded = [line for line in capsys.readouterr().err.splitlines() if "checkpoint" in line]
    assert len(loaded) == 1 and loaded[0].startswith(f"debate: {said}") and "step_000002" in loaded[0]
