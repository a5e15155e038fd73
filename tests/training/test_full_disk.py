"""A full disk while the run writes its files (docs/training.md, "Checkpoints, stops, faults"):
one line, a checkpoint of the last completed step, and a resume that ends where an
uninterrupted run ends."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import debate_core.debate.transcripts as transcripts
import debate_core.training.loop as loop
from debate_core.cli import main
from debate_core.plugins import Registry
from debate_core.runtime.manifests import latest_checkpoint
from tests.training.fault_runs import RUN, stable
from tests.training.trainer_harness import BASE_OVERRIDES


def full_disk_on(call: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, raising ENOSPC on its ``call``-th use (naming the file, as the OS does)."""
    calls = [0]

    def write(path: Path, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == call:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, *args, **kwargs)

    return write


WRITERS = {
    # the second iteration's transcript is written before its update: step 1 is checkpointed
    "a transcript": (transcripts, "atomic_write_text", 2, 1),
    # step 2's evaluation is written after its update, before its record: no step's weights are
    # left to checkpoint, so the run resumes from the last checkpoint (none: it starts over)
    "an evaluation record": (loop, "atomic_write_json", 1, None),
}


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_a_full_disk_ends_the_run_in_one_line_with_a_checkpoint_and_resumes(
    what: str,
    registry: Registry,
    tmp_path: Path,
    uninterrupted: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, name, call, checkpointed = WRITERS[what]
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    argv = ["train", str(run_file), *BASE_OVERRIDES, *RUN, "training.save_every=0"]
    with monkeypatch.context() as patch:
        patch.setattr(module, name, full_disk_on(call, getattr(module, name)))
        assert main([*argv, "--run-dir", str(run)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    assert err[-1].startswith("debate: error: ") and "No space left on device" in err[-1]
    assert f"debate train --resume {run}" in err[-1]
    checkpoint = latest_checkpoint(run / "checkpoints")
    if checkpointed is None:
        assert checkpoint is None and "last checkpoint: none yet" in err[-1]
    else:
        assert checkpoint is not None and checkpoint.reason == "failure: OSError"  # the last completed step's
        assert checkpoint.step == checkpointed and f"last checkpoint: step {checkpointed}" in err[-1]
    assert main(["train", "--resume", str(run)]) == 0
    assert stable(run / "metrics.jsonl") == stable(uninterrupted / "metrics.jsonl")
