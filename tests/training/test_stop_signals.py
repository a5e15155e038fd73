"""``debate train`` stopped by a signal during training (docs/training.md, "SIGINT / SIGTERM"): the
first SIGTERM lets the update in flight finish, checkpoints and prints the command that resumes;
a second one stops at once with one line. Either way the lock is released and the run resumes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from debate_core.plugin import Registry
from tests.training.trainer_harness import make_config, train_quietly

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

CHILD = """
import sys
sys.path.insert(0, {root!r})
from tests.training.trainer_harness import BASE_OVERRIDES, harness_registry
from debate_core.cli import main
with harness_registry():
    sys.exit(main(["train", {config!r}, *BASE_OVERRIDES, "training.save_every=1", "evaluation.num_problems=0",
                   {sink!r}, "--run-dir", {run!r}]))
"""

HANG_S = 300.0
"""A child that has not exited by then hangs (start-up and two iterations take a few seconds)."""


def train_with_signals(tmp_path: Path, times: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``debate train`` in a child that sends itself SIGTERM ``times`` times, one right after the
    other, once the record of step 2 is written."""
    config_file = tmp_path / "run.toml"
    config_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    sink = f"logging.sinks=[{{name='jsonl'}}, {{name='signal_after', options={{step=2, times={times}}}}}]"
    script = CHILD.format(root=str(Path(__file__).parents[2]), config=str(config_file), sink=sink, run=str(run))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return done, run


def resumes_to_the_end(registry: Registry, run: Path) -> None:
    """The stopped run's lock is free and the run resumes to its last iteration."""
    config = make_config("training.save_every=1", "evaluation.num_problems=0")
    assert train_quietly(config, registry, run, resume=True, handle_signals=False).iterations == 4


def test_a_sigterm_during_training_checkpoints_and_says_how_to_resume(registry: Registry, tmp_path: Path) -> None:
    done, run = train_with_signals(tmp_path, times=1)
    assert done.returncode == 143, done.stderr
    assert f"stopped by SIGTERM; checkpoint at step 2. Continue with: debate train --resume {run}" in done.stderr
    assert "Traceback" not in done.stderr
    resumes_to_the_end(registry, run)


def test_a_second_sigterm_stops_at_once_with_one_line(registry: Registry, tmp_path: Path) -> None:
    done, run = train_with_signals(tmp_path, times=2)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert (done.returncode, lines[-1]) == (143, "debate: terminated"), done.stderr
    assert "Traceback" not in done.stderr
    assert (run / "config.toml").is_file()  # a run that recorded a step is kept, to resume
    resumes_to_the_end(registry, run)
