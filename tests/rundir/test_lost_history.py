"""A resumed run whose metrics or transcripts of checkpointed steps are gone says which steps, once,
and keeps them in summary.json and the report (docs/training.md#a-lost-history)."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path

from debate_core.plugin import Registry
from debate_core.report.run_data import read_run
from debate_core.rundir.directory import RunDirectory
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import make_config, read_metrics, train_quietly, without_timings

STOP_AT_2 = "logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=2}}]"


def _stopped_at_step_2(registry: Registry, run: Path) -> None:
    first = train_quietly(make_config(STOP_AT_2), registry, run)
    assert first.stopped_by == "SIGTERM" and first.last_checkpoint == 2


def _resume(registry: Registry, run: Path) -> list[str]:
    shown = io.StringIO()
    outcome = asyncio.run(
        run_training(
            make_config(),
            registry,
            RunDirectory(run),
            resume=True,
            progress=Progress("off", shown),
            handle_signals=False,
        )
    )
    assert outcome.iterations == 4
    return shown.getvalue().splitlines()


def test_a_deleted_metrics_file_and_lost_transcripts_are_said_and_recorded(
    registry: Registry, tmp_path: Path, straight_run: Path
) -> None:
    run = tmp_path / "run"
    _stopped_at_step_2(registry, run)
    (run / "metrics.jsonl").unlink()
    shutil.rmtree(run / "transcripts" / "step_000001")

    lines = _resume(registry, run)

    metrics_lines = [line for line in lines if "has no record" in line]
    assert metrics_lines == [
        f"debate: {run / 'metrics.jsonl'} is gone: it has no record of step(s) 1-2 (the run resumes after step 2); "
        "those steps stay missing from the metrics"
    ]
    transcript_lines = [line for line in lines if "has no transcripts" in line]
    assert transcript_lines == [
        f"debate: {run / 'transcripts'} has no transcripts of step(s) 1 (the run resumes after step 2); "
        "those steps stay missing from the transcripts"
    ]
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [3, 4]
    assert (
        without_timings(read_metrics(run / "metrics.jsonl"))
        == without_timings(read_metrics(straight_run / "metrics.jsonl"))[2:]
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["lost_history"] == {"metrics": [1, 2], "transcripts": [1]}
    notes = read_run(run).notes
    assert "metrics.jsonl has no record of step(s) 1-2: lost before a resume" in notes
    assert "transcripts/ has no transcripts of step(s) 1: lost before a resume" in notes


def test_an_intact_run_records_nothing_lost(registry: Registry, tmp_path: Path, straight_run: Path) -> None:
    run = tmp_path / "run"
    _stopped_at_step_2(registry, run)
    lines = _resume(registry, run)
    assert not [line for line in lines if "has no record" in line or "has no transcripts" in line]
    for finished in (run, straight_run):
        assert json.loads((finished / "summary.json").read_text())["lost_history"] == {"metrics": [], "transcripts": []}
        assert not [n for n in read_run(finished).notes if "lost before a resume" in n]
