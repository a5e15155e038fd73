"""Everything ``debate report`` reads from a run directory, read so that a live or broken run
still gives a report: damaged metrics lines and unreadable files become notes, never errors."""

from __future__ import annotations

import itertools
import math
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from debate_core.debate.transcripts import load_transcript
from debate_core.errors import DebateError
from debate_core.limits import loads_json, read_limited_text
from debate_core.records import DebateRecord
from debate_core.records.json_values import JsonObject
from debate_core.report.segments import Segment, read_segments
from debate_core.rundir.directory import RunDirectory
from debate_core.rundir.environment import entry_facts, read_environment
from debate_core.rundir.evaluation_records import read_evaluation_file, read_evaluation_records
from debate_core.rundir.lost_history import lost_history_notes
from debate_core.rundir.metrics_file import read_metrics_lines
from debate_core.rundir.reward_sidecars import SIDECAR_SUFFIX, read_sidecar
from debate_core.runtime.checkpoint_format import Checkpoint
from debate_core.runtime.manifests import list_checkpoints

ItemT = TypeVar("ItemT")


class ReportError(DebateError):
    """No report can be made of this directory."""


@attrs.frozen
class MetricsLog:
    """The readable records of ``metrics.jsonl`` in step order, and a note per damaged line."""

    records: tuple[JsonObject, ...]
    damaged: tuple[str, ...]

    def series(self, name: str) -> tuple[tuple[float, float], ...]:
        """``(step, value)`` of every record holding a finite number under ``name``."""
        out = []
        for record in self.records:
            value = record.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                out.append((float(record["step"]), float(value)))
        return tuple(out)

    def names(self) -> set[str]:
        """Every metric name of every record."""
        return {name for record in self.records for name in record}


def read_metrics_log(path: Path) -> MetricsLog:
    """Read ``metrics.jsonl``: a line that is not an intact record (UTF-8, a JSON object with an
    integer ``step``; ``rundir.metrics_file``), or that repeats an earlier step, is reported
    (``metrics.jsonl line 7: ...``) and skipped."""
    records: list[JsonObject] = []
    damaged: list[str] = []
    if not path.exists() and not path.is_symlink():
        return MetricsLog((), ())
    try:
        lines = list(read_metrics_lines(path))
    except DebateError as exc:
        return MetricsLog((), (f"{path.name}: cannot be read: {_without_root(exc, path)}",))
    seen: set[int] = set()
    for line in lines:
        if line.blank:
            continue
        if line.record is None:
            damaged.append(f"{path.name} line {line.number}: {line.problem}; skipped")
            continue
        step = int(line.record["step"])
        if step in seen:
            damaged.append(f"{path.name} line {line.number}: step {step} again; skipped")
            continue
        seen.add(step)
        records.append(line.record)
    return MetricsLog(tuple(sorted(records, key=lambda r: int(r["step"]))), tuple(damaged))


@attrs.frozen
class LoggedDebate:
    """One logged transcript: its step and index, the debate (``None`` with ``error`` when it
    cannot be read) and the rewards the trainer saved beside it (``None`` when absent)."""

    step: int
    index: int
    path: Path
    record: DebateRecord | None
    rewards: JsonObject | None
    error: str | None = None


def logged_transcripts(transcripts: Path) -> list[tuple[int, int, Path]]:
    """``(step, index, path)`` of every ``step_NNNNNN/debate_KK.json``, in order."""
    found = []
    for folder in sorted(transcripts.glob("step_*")) if transcripts.is_dir() else []:
        if not folder.name[5:].isdigit():
            continue
        for path in sorted(folder.glob("debate_*.json")):
            if path.name.endswith(SIDECAR_SUFFIX) or not path.stem[7:].isdigit():
                continue
            found.append((int(folder.name[5:]), int(path.stem[7:]), path))
    return found


def spread(items: Sequence[ItemT], count: int) -> list[ItemT]:
    """``count`` items spread evenly over ``items``, the first and the last included."""
    if count <= 0:
        return []
    if len(items) <= count:
        return list(items)
    if count == 1:
        return [items[-1]]
    picks = sorted({round(i * (len(items) - 1) / (count - 1)) for i in range(count)})
    return [items[i] for i in picks]


def read_debate(step: int, index: int, path: Path) -> LoggedDebate:
    """One logged transcript with its rewards; an unreadable one keeps its error message."""
    try:
        record: DebateRecord | None = load_transcript(path)
        error = None
    except DebateError as exc:
        record, error = None, str(exc)
    return LoggedDebate(step, index, path, record, read_sidecar(path), error)


@attrs.frozen
class RunData:
    """A run directory as the report shows it."""

    root: Path
    config_text: str | None
    metrics: MetricsLog
    evaluations: tuple[JsonObject, ...]
    debates: tuple[LoggedDebate, ...]
    debates_logged: int
    checkpoints: tuple[Checkpoint, ...]
    summary: JsonObject | None
    last_change: float | None
    notes: tuple[str, ...]
    segments: tuple[Segment, ...] = (Segment(1, 0, "config.toml", ()),)
    """The steps trained under each configuration (more than one after a resume that changed it)."""
    evaluation_file: bool = False
    """An evaluation file of ``debate eval --out`` read as a run: one evaluation, no training."""
    environment: tuple[JsonObject, ...] = ()
    """``environment.json``'s entries, one per start and resume: where each part of the run computed."""

    @property
    def evaluations_dir(self) -> Path:
        """``RUN_DIR/eval``: the evaluation records and each evaluation's saved debates."""
        return RunDirectory(self.root).evaluations

    @property
    def finished(self) -> bool:
        """True when the trainer wrote its summary (the run ended, by completing or by a stop)."""
        return self.summary is not None

    def status(self, now: float | None = None) -> str:
        """One line: finished, stopped, or still going / interrupted with the last step seen."""
        if self.evaluation_file:
            return "an evaluation file (debate eval --out)"
        last_step = self.metrics.records[-1]["step"] if self.metrics.records else None
        if self.summary is not None:
            stopped = self.summary.get("stopped_by")
            where = f"after step {self.summary.get('step')}"
            if self.summary.get("budget_reached"):
                return f"stopped at the budget (training.max_cost) {where}"
            return f"stopped by {stopped} {where}" if stopped else f"finished {where}"
        seen = "no step recorded yet" if last_step is None else f"last recorded step {last_step}"
        age = ""
        if self.last_change is not None:
            minutes = ((now or time.time()) - self.last_change) / 60
            age = f", last written {minutes:.0f} min ago" if minutes >= 1 else ", last written under a minute ago"
        return f"running or interrupted ({seen}{age}; no summary.json yet)"


def _without_root(error: DebateError, path: Path) -> str:
    """An error of reading ``path`` without the path it starts with (the note names the file)."""
    text = str(error)
    return text[len(f"{path}: ") :] if text.startswith(f"{path}: ") else text


def _read_config_text(path: Path, notes: list[str]) -> str | None:
    """The run's ``config.toml`` when it reads as TOML (else ``None``, and a note why)."""
    try:
        text = read_limited_text(path, "run file")
    except DebateError as exc:
        notes.append(f"config.toml is missing or unreadable: {_without_root(exc, path)}")
        return None
    return _toml_or_none(text, "config.toml", notes)


def _toml_or_none(text: str, where: str, notes: list[str]) -> str | None:
    """``text`` when it reads as TOML, else ``None`` and a note why."""
    try:
        tomllib.loads(text)
    except (ValueError, RecursionError) as exc:  # not TOML, an integer too long, nested too deeply
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0][:200]
        notes.append(f"{where} is not TOML: {reason}")
        return None
    return text


def read_evaluation_run(path: Path) -> RunData:
    """An evaluation file of ``debate eval --out`` as a run of one evaluation (for ``debate
    compare``): its record, and the resolved run file it carries (which tells whether another run
    evaluated the same problems)."""
    record, config = read_evaluation_file(path)
    notes: list[str] = []
    if config is None:
        notes.append("holds no resolved run file (written before debate eval saved one): its changes are unpaired")
    config_text = None if config is None else _toml_or_none(config, "its run file", notes)
    return RunData(
        root=path,
        config_text=config_text,
        metrics=MetricsLog((), ()),
        evaluations=(record,),
        debates=(),
        debates_logged=0,
        checkpoints=(),
        summary=None,
        last_change=path.stat().st_mtime,
        notes=tuple(notes),
        segments=(),
        evaluation_file=True,
    )


def read_run(root: Path, max_debates: int = 8) -> RunData:
    """Read a run directory for the report; only a directory without any run file is an error."""
    run = RunDirectory(root)
    if root.exists() and not root.is_dir():
        raise ReportError(f"{root}: is a file, not a run directory")
    if not root.is_dir():
        raise ReportError(f"{root}: no such run directory")
    if not run.config_path.exists() and not run.metrics_path.exists():
        raise ReportError(f"{root}: holds no run (no config.toml, no metrics.jsonl)")
    notes: list[str] = []
    config_text = _read_config_text(run.config_path, notes)
    metrics = read_metrics_log(run.metrics_path)
    notes.extend(metrics.damaged)
    if config_text is None and not metrics.records:
        shown = "; ".join(notes[:3]) + (f"; and {len(notes) - 3} more" if len(notes) > 3 else "")
        raise ReportError(f"{root}: holds no readable run: {shown}")
    summary = None
    if run.summary_path.exists():
        try:
            loaded = loads_json(read_limited_text(run.summary_path, "summary file"))
            summary = loaded if isinstance(loaded, dict) else None
            notes.extend(lost_history_notes(summary or {}))
        except (DebateError, ValueError):
            notes.append("summary.json is unreadable; the run is shown as still going")
    paths = logged_transcripts(run.transcripts)
    debates = [read_debate(step, index, path) for step, index, path in spread(paths, max_debates)]
    notes.extend(f"{d.path.relative_to(root)}: {d.error}" for d in debates if d.error)
    files = [p for p in (run.metrics_path, run.summary_path, run.evaluations) if p.exists()]
    last_change = max((p.stat().st_mtime for p in files), default=None)
    environment = tuple(read_environment(run.environment_path))
    notes.extend(moved_notes(environment))
    return RunData(
        root=root,
        config_text=config_text,
        metrics=metrics,
        evaluations=tuple(read_evaluation_records(run.evaluations)),
        debates=tuple(debates),
        debates_logged=len(paths),
        checkpoints=tuple(list_checkpoints(run.checkpoints)),
        summary=summary,
        last_change=last_change,
        notes=tuple(notes),
        segments=read_segments(root),
        environment=environment,
    )


def moved_notes(entries: tuple[JsonObject, ...]) -> list[str]:
    """A note for each resume that computed somewhere else than the part before it: another
    machine or backend set-up rounds differently, so the steps after it are not what one machine
    would have made (docs/local-backend.md#what-is-reproducible)."""
    notes = []
    for before, after in itertools.pairwise(entries):
        old, new = entry_facts(before), entry_facts(after)
        if old != new:
            changed = ", ".join(sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k)))
            notes.append(
                f"resumed at step {after.get('step', '?')} on another machine or backend set-up ({changed} differ, "
                "see 'Where it ran'): floating-point rounding may differ from there on"
            )
    return notes
