"""A run killed with SIGKILL right after one of its checkpoints, in a child process: the fault
tests' way of stopping a run at an exact point (the trainer harness's plugins registered, so the
child can train on the scripted backend too)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

CHILD = """
import os, signal, sys
sys.path.insert(0, {root!r})
from tests.training.trainer_harness import harness_registry
from debate_core.training import checkpointing
save = checkpointing.Checkpointer.save
async def save_then_die(self, *args, **kwargs):
    await save(self, *args, **kwargs)
    if self.position.step == {step}:
        os.kill(os.getpid(), signal.SIGKILL)  # right after the checkpoint's manifest is written
checkpointing.Checkpointer.save = save_then_die
from debate_core.cli import main
with harness_registry():
    main(["train", {config!r}, *{overrides!r}, "--run-dir", {run!r}])
"""


def kill_after_checkpoint(config: Path, overrides: Sequence[str], run: Path, step: int) -> None:
    """``debate train config overrides --run-dir run`` in a child process that kills itself right
    after writing the checkpoint of ``step``; fails unless it died so, that checkpoint written."""
    root = str(Path(__file__).parents[2])
    script = CHILD.format(root=root, step=step, config=str(config), overrides=list(overrides), run=str(run))
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    assert (run / "checkpoints" / f"step_{step:06d}.json").is_file()
