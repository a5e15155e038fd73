"""Metric sinks on resume (docs/training.md#metric-sinks-on-resume): a resumed run continues the same
run in each sink that has the notion (wandb: the run id kept in the run directory, resume allowed;
tensorboard: the same log directory, the redone steps purged) and ``--resume`` says what each continues."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from debate_core.builtin.metric_sinks import WANDB_RUN_FILE
from debate_core.plugin import Registry
from tests.training.trainer_harness import make_config, read_metrics, train_quietly

WANDB = "logging.sinks=[{name = 'jsonl'}, {name = 'wandb', options = {mode = 'offline', project = 'p'}}]"
TENSORBOARD = "logging.sinks=[{name = 'jsonl'}, {name = 'tensorboard'}]"


def fake_module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    for key, value in attributes.items():
        setattr(module, key, value)
    return module


class FakeWandbRun:
    def __init__(self, calls: list[dict[str, Any]], **init: Any) -> None:
        self.logged: list[int] = []
        calls.append({"init": init, "logged": self.logged})

    def log(self, metrics: dict[str, Any], step: int) -> None:
        self.logged.append(step)

    def finish(self) -> None:
        pass


def two_then_four(registry: Registry, run: Path, sinks: str) -> list[str]:
    """Train 2 iterations, then resume the run to 4: the resume's lines about its sinks."""
    train_quietly(make_config(sinks, "training.num_iterations=2"), registry, run, handle_signals=False)
    return resume_to_four(registry, run, sinks)


def resume_to_four(registry: Registry, run: Path, sinks: str) -> list[str]:
    import contextlib
    import io

    stream = io.StringIO()
    with contextlib.redirect_stderr(stream):
        train_quietly(make_config(sinks, "training.num_iterations=4"), registry, run, resume=True, handle_signals=False)
    return [line for line in stream.getvalue().splitlines() if line.startswith(("metric sink", "metrics:"))]


def test_a_resumed_run_continues_the_same_wandb_run_whose_id_the_run_directory_keeps(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setitem(sys.modules, "wandb", fake_module("wandb", init=lambda **kw: FakeWandbRun(calls, **kw)))
    run = tmp_path / "arithmetic"
    lines = two_then_four(registry, run, WANDB)
    kept = json.loads((run / WANDB_RUN_FILE).read_text(encoding="utf-8"))["id"]
    first, second = (call["init"] for call in calls)
    assert first["id"] == second["id"] == kept != run.name  # a fresh id: another runs/arithmetic is another run
    assert first["resume"] == second["resume"] == "allow" and first["dir"] == str(run)
    assert [call["logged"] for call in calls] == [[1, 2], [3, 4]]
    assert lines == [
        f"metrics: appends to {run / 'metrics.jsonl'} after its record of step 2",
        f"metric sink wandb: continues wandb run {kept} in project p (offline: `wandb sync` joins its files to the "
        "run) from step 3 (resume='allow'; wandb keeps the first value of a step it was already sent)",
    ]

    other = tmp_path / "other" / "arithmetic"  # the same name, another directory: another wandb run
    train_quietly(make_config(WANDB, "training.num_iterations=1"), registry, other, handle_signals=False)
    assert calls[-1]["init"]["id"] not in (kept, run.name)


def test_a_run_logged_to_wandb_before_ids_were_kept_resumes_under_its_directorys_name(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setitem(sys.modules, "wandb", fake_module("wandb", init=lambda **kw: FakeWandbRun(calls, **kw)))
    run = tmp_path / "old-run"
    train_quietly(make_config(WANDB, "training.num_iterations=2"), registry, run, handle_signals=False)
    (run / WANDB_RUN_FILE).unlink()  # as the sink left a run directory before it kept the id
    (run / "wandb").mkdir()
    resume_to_four(registry, run, WANDB)
    assert calls[-1]["init"]["id"] == "old-run"
    assert json.loads((run / WANDB_RUN_FILE).read_text(encoding="utf-8"))["id"] == "old-run"


@pytest.mark.skipif(importlib.util.find_spec("wandb") is None, reason="wandb is not installed (pip install wandb)")
def test_wandb_offline_writes_the_resumed_process_under_the_same_run_id(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_MODE", "offline")
    run = tmp_path / "run"
    lines = two_then_four(registry, run, WANDB)
    kept = json.loads((run / WANDB_RUN_FILE).read_text(encoding="utf-8"))["id"]
    offline = sorted(p.name for p in (run / "wandb").glob("offline-run-*"))
    assert len(offline) == 2 and all(name.endswith(f"-{kept}") for name in offline), offline
    assert all((run / "wandb" / name / f"run-{kept}.wandb").is_file() for name in offline)
    assert any(f"continues wandb run {kept}" in line for line in lines)


class FakeWriter:
    opened: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.scalars: list[int] = []
        FakeWriter.opened.append({**kwargs, "steps": self.scalars})

    def add_scalar(self, name: str, value: float, step: int) -> None:
        if name == "reward/configured":
            self.scalars.append(step)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_resumed_run_writes_tensorboard_events_to_the_same_directory_purging_the_redone_steps(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FakeWriter.opened = []
    monkeypatch.setitem(sys.modules, "tensorboard", fake_module("tensorboard"))
    writer_module = "torch.utils.tensorboard" if importlib.util.find_spec("torch") else "tensorboardX"
    monkeypatch.setitem(sys.modules, writer_module, fake_module(writer_module, SummaryWriter=FakeWriter))
    run = tmp_path / "run"
    lines = two_then_four(registry, run, TENSORBOARD)
    log_dir = str(run / "tensorboard")
    assert [(w["log_dir"], w["purge_step"], w["steps"]) for w in FakeWriter.opened] == [
        (log_dir, None, [1, 2]),
        (log_dir, 3, [3, 4]),
    ]
    assert lines[-1] == (
        f"metric sink tensorboard: continues the event files in {log_dir}; "
        "events of step 3 on are replaced (purge_step)"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("tensorboard") is None or importlib.util.find_spec("torch") is None,
    reason="tensorboard (with torch) is not installed",
)
def test_tensorboard_shows_each_redone_step_once_after_a_resume(registry: Registry, tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = tmp_path / "run"
    train_quietly(make_config(TENSORBOARD, "training.num_iterations=4"), registry, run, handle_signals=False)
    (run / "checkpoints" / "step_000004.json").unlink()  # as if the run died after writing step 4's record
    resume_to_four(registry, run, TENSORBOARD)
    events = EventAccumulator(str(run / "tensorboard"))
    events.Reload()
    steps = [event.step for event in events.Scalars("reward/configured")]
    assert steps == [1, 2, 3, 4], steps  # without purge_step, steps 3 and 4 would show twice
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [1, 2, 3, 4]
