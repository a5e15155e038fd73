"""A SIGKILL in the middle of a run leaves a run directory that resumes to the same result."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import make_config

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

CHILD = """
import sys
sys.path.insert(0, {root!r})
from tests.training.trainer_harness import BASE_OVERRIDES, harness_registry
from debate_core.cli import main
with harness_registry():
    main(["train", {config!r}, *BASE_OVERRIDES, "training.num_iterations=6", "training.save_every=1",
          "evaluation.num_problems=0", "--run-dir", {run!r}])
"""


HANG_S = 300.0
"""How long the child may take to write its third metric record before it counts as hung: start-up
and three short iterations, with room for a machine busy with other work."""


def stable(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith(("time/", "throughput/"))} for r in records]


def test_sigkill_mid_run_resumes_to_the_same_metrics(registry: Registry, tmp_path: Path) -> None:
    config_file = tmp_path / "run.toml"
    config_file.write_text("", encoding="utf-8")
    run = tmp_path / "killed"
    script = CHILD.format(root=str(Path(__file__).parents[2]), config=str(config_file), run=str(run))
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    deadline = time.monotonic() + HANG_S
    metrics = run / "metrics.jsonl"
    while time.monotonic() < deadline and child.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 3:
            break
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL  # killed mid-run, not finished

    config = make_config("training.num_iterations=6", "training.save_every=1", "evaluation.num_problems=0")
    resumed = asyncio.run(
        run_training(config, registry, RunDirectory(run), resume=True, progress=Progress("off"), handle_signals=False)
    )
    assert resumed.iterations == 6
    straight = tmp_path / "straight"
    asyncio.run(run_training(config, registry, RunDirectory(straight), progress=Progress("off"), handle_signals=False))
    assert stable(run / "metrics.jsonl") == stable(straight / "metrics.jsonl")
