"""A full disk while a run writes its files: one line naming the file, a non-zero exit, a
checkpoint of the last finished step where one can be written, and a resume (once there is room)
that equals the uninterrupted run (docs/training.md#a-full-disk)."""

from __future__ import annotations

import errno
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from debate_core.cli import main
from debate_core.errors import OutputWriteError
from debate_core.files import atomic_write_text
from debate_core.plugin import Registry
from debate_core.runtime.manifests import latest_checkpoint
from debate_core.training.sinks import MultiSink
from tests.training.full_disk import ENOSPC, FullDisk, full_disk
from tests.training.trainer_harness import BASE_OVERRIDES, harness_registry, read_metrics

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

VOLATILE = ("time/", "throughput/")


def stable(run: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith(VOLATILE)} for r in read_metrics(run / "metrics.jsonl")]


@attrs.frozen
class Case:
    target: str
    """The file whose write fills the disk (relative to the run directory)."""
    overrides: tuple[str, ...] = ()
    at: int = 1
    stays_full: bool = True
    checkpoint: int | None = None
    """The step of the latest checkpoint once the run has stopped (None: no checkpoint)."""
    said: str = ""
    """A line the run prints before the error line."""


CASES = {
    # the weights are those of step 2 when step 3's transcript fails: that step is checkpointed
    "transcript": Case(
        "transcripts/step_000003/debate_00.json", ("training.save_every=0",), stays_full=False, checkpoint=2
    ),
    # ... unless the checkpoint cannot be written either: it says so, and the run starts over
    "transcript, disk stays full": Case(
        "transcripts/step_000003/debate_00.json",
        ("training.save_every=0",),
        checkpoint=None,
        said="could not checkpoint before exiting: backend 'scripted': save_state('step_000002') failed: "
        "OutputWriteError: cannot write",
    ),
    "reward sidecar": Case(
        "transcripts/step_000002/debate_00.rewards.json", ("training.save_every=0",), stays_full=False, checkpoint=1
    ),
    # the update of step 3 is done but unrecorded: the last checkpoint (step 2) stands
    "metrics record": Case(
        "metrics.jsonl", at=3, checkpoint=2, said="step 3 failed before it was recorded; last checkpoint: step 2"
    ),
    "evaluation record": Case(
        "eval/step_000004_final.json",
        checkpoint=2,
        said="step 4 failed before it was recorded; last checkpoint: step 2",
    ),
    # a manifest that fails is retried under a fresh name before the run exits
    "checkpoint manifest": Case(
        "checkpoints/step_000002.json", ("training.save_every=1",), stays_full=False, checkpoint=2
    ),
    "checkpoint manifest, disk stays full": Case(
        "checkpoints/step_000002.json",
        ("training.save_every=1",),
        checkpoint=1,
        said="could not checkpoint before exiting",
    ),
    "checkpoint state": Case(
        "checkpoints/backend/step_000002.npz",
        ("training.save_every=1",),
        checkpoint=1,
        said="could not checkpoint before exiting",
    ),
    "summary": Case("summary.json", checkpoint=4),
}


@pytest.fixture(scope="module")
def straight_runs(tmp_path_factory: pytest.TempPathFactory) -> Mapping[tuple[str, ...], Path]:
    """Uninterrupted runs, one per set of overrides the cases use."""
    runs: dict[tuple[str, ...], Path] = {}
    folder = tmp_path_factory.mktemp("straight")
    run_file = folder / "run.toml"
    run_file.write_text("[run]\nseed = 3\n", encoding="utf-8")
    with harness_registry():
        for overrides in sorted({case.overrides for case in CASES.values()}):
            run = folder / f"run{len(runs)}"
            assert main(["train", str(run_file), *BASE_OVERRIDES, *overrides, "--run-dir", str(run)]) == 0
            runs[overrides] = run
    return runs


@pytest.mark.parametrize("name", list(CASES))
def test_a_full_disk_ends_the_run_with_one_line_and_resumes_to_the_same_run(
    name: str,
    registry: Registry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    straight_runs: Mapping[tuple[str, ...], Path],
) -> None:
    case = CASES[name]
    run_file = tmp_path / "run.toml"
    run_file.write_text("[run]\nseed = 3\n", encoding="utf-8")
    run = tmp_path / "run"
    monkeypatch.delenv("DEBATE_DEBUG", raising=False)
    capsys.readouterr()
    with full_disk(monkeypatch, FullDisk(run, case.target, case.at, case.stays_full)) as disk:
        code = main(["train", str(run_file), *BASE_OVERRIDES, *case.overrides, "--run-dir", str(run)])
    err = capsys.readouterr().err
    assert code == 1 and disk.failures
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("debate: error:")]
    assert len(errors) == 1 and err.splitlines()[-1] == errors[0]
    assert f"cannot write {run / case.target}: {ENOSPC}" in errors[0]
    if not case.target.startswith("checkpoints/backend"):  # that one is the backend's own error
        assert errors[0].startswith(f"debate: error: cannot write {run / case.target}: {ENOSPC}")
    assert errors[0].endswith(f"; once it can be written, continue with: debate train --resume {run}")
    assert case.said in err
    checkpoint = latest_checkpoint(run / "checkpoints")
    assert (checkpoint.step if checkpoint else None) == case.checkpoint
    # space is freed: the resume finishes the run, and it is the uninterrupted one
    assert main(["train", "--resume", str(run)]) == 0
    capsys.readouterr()
    assert stable(run) == stable(straight_runs[case.overrides])
    assert json.loads((run / "summary.json").read_text())["iterations"] == 4


def test_a_full_disk_never_leaves_half_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out" / "summary.json"
    atomic_write_text(path, "old")
    with (
        full_disk(monkeypatch, FullDisk(tmp_path, "out/summary.json")),
        pytest.raises(OutputWriteError, match=f"^{re.escape(f'cannot write {path}: {ENOSPC}')}$"),
    ):
        atomic_write_text(path, "new")
    assert path.read_text() == "old" and [p.name for p in path.parent.iterdir()] == ["summary.json"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_the_metrics_sink_on_a_full_device_names_it_and_closes_cleanly() -> None:
    from debate_core.builtin.metric_sinks import JsonlSink

    sink = JsonlSink(Path("/dev/full"))
    with pytest.raises(OutputWriteError, match=f"^cannot write /dev/full: {ENOSPC}$"):
        sink.write(1, {"loss": 0.5})
    sink.close()  # nothing buffered to fail again


class PluginSink:
    def __init__(self, error: OSError) -> None:
        self.error = error

    def write(self, step: int, metrics: Any) -> None:
        raise self.error

    def close(self) -> None:
        raise self.error


def test_a_plugin_sinks_os_error_names_its_file_or_the_sink() -> None:
    with_file = OSError(errno.EDQUOT, "Disk quota exceeded", "/runs/x/tensorboard/events")
    sinks = MultiSink([PluginSink(with_file)], ["tensorboard"])
    with pytest.raises(OutputWriteError, match=r"^cannot write /runs/x/tensorboard/events: Disk quota exceeded$"):
        sinks.write(1, {})
    without = MultiSink([PluginSink(OSError(errno.EROFS, "Read-only file system"))], ["wandb"])
    with pytest.raises(OutputWriteError, match=r"^cannot write metric sink 'wandb': Read-only file system$"):
        without.write(1, {})
    with pytest.raises(OutputWriteError, match="metric sink 'wandb'"):
        without.close()


LOCAL_RUN = (
    "backend.name=local",
    "backend.options.num_threads=1",
    "dataset.name=arithmetic",
    "reward.name=v2",
    "debate.num_agents=2",
    "debate.max_rounds=1",
    "debate.max_tokens=16",
    "training.batch_size=2",
    "training.num_iterations=1",
    "training.save_every=1",
    "evaluation.num_problems=0",
    "logging.progress=off",
)
FILE_SIZE_LIMIT = 200_000
"""Bytes any one file may hold: the run's own files fit, the local model's weights do not."""


def _file_size_limited() -> None:
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


def test_a_failed_write_inside_the_backends_own_save_prints_the_resume_command(tmp_path: Path) -> None:
    """The local backend's first checkpoint cannot be written (safetensors' own writer fails, as on
    a full disk): the run ends in one line naming the file, with the resume command."""
    import subprocess
    import sys

    pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    run = tmp_path / "run"
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "debate_core.cli", "train", str(run_file), *LOCAL_RUN, "--run-dir", str(run)],
        preexec_fn=_file_size_limited,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("debate: error:")]
    assert done.returncode == 1 and len(errors) == 1, done.stderr
    weights = run / "checkpoints" / "backend" / "step_000001" / "weights.safetensors"
    assert f"cannot write {weights}: File too large" in errors[0]
    assert errors[0].endswith(f"; once it can be written, continue with: debate train --resume {run}")
    assert latest_checkpoint(run / "checkpoints") is None and not list((run / "checkpoints" / "backend").iterdir())
