"""The run directory: everything one training run leaves on disk.

::

    RUN_DIR/
      config.toml        the resolved run file (every default filled in)
      plugins.json       the installed plugin distributions with their versions
      metrics.jsonl      one JSON object per step (warm-start steps, then RL iterations, from 1)
      transcripts/       step_NNNNNN/debate_KK.json: num_groups_to_log debates per iteration,
                         each with debate_KK.rewards.json (its rewards and advantages) beside it
      checkpoints/       step_NNNNNN.json manifests; backend/ holds local backends' states
      eval/              step_NNNNNN_<label>.json: the evaluations run during training
      summary.json       the last evaluation of each phase and where the run stopped
      report.html        ``debate report RUN_DIR`` (any time, also while the run goes on)

Step ``s`` is the state after ``s`` updates; every file about it carries that number.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from debate_core.errors import DebateError
from debate_core.files import atomic_file, atomic_write_json


class RunDirectoryError(DebateError):
    """The run directory cannot be used as asked."""


class RunOutputError(DebateError):
    """A file of the run (a transcript, a metrics record, an evaluation) could not be written."""


@attrs.frozen
class RunDirectory:
    """Paths inside one run directory."""

    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / "config.toml"

    @property
    def plugins_path(self) -> Path:
        return self.root / "plugins.json"

    @property
    def metrics_path(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def transcripts(self) -> Path:
        return self.root / "transcripts"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def backend_states(self) -> Path:
        return self.checkpoints / "backend"

    @property
    def evaluations(self) -> Path:
        return self.root / "eval"

    @property
    def summary_path(self) -> Path:
        return self.root / "summary.json"

    def holds_run(self) -> bool:
        """True when a run was started here (its resolved config exists)."""
        return self.config_path.exists()

    def create(self) -> None:
        """Make the folders."""
        for folder in (self.root, self.transcripts, self.checkpoints, self.evaluations):
            folder.mkdir(parents=True, exist_ok=True)

    def write_plugins(self, distributions: list[dict[str, str]]) -> None:
        """Record the plugin distributions this run used."""
        atomic_write_json(self.plugins_path, distributions)

    def transcript_path(self, step: int, debate: int) -> Path:
        return self.transcripts / f"step_{step:06d}" / f"debate_{debate:02d}.json"

    def evaluation_path(self, step: int, label: str) -> Path:
        return self.evaluations / f"step_{step:06d}_{label}.json"

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        atomic_write_json(self.summary_path, dict(summary))

    def repair_metrics(self, up_to_step: int) -> MetricsRepair:
        """Keep the metric records of steps 1..``up_to_step`` (the checkpoint a run resumes from;
        resuming redoes the rest), read strictly (docs/training.md, "Damaged checkpoints").

        A record is a line of UTF-8 JSON holding an object with an integer ``step``, each step
        after the one before. A torn last line (a crash mid-write) is dropped quietly; any other
        line that is not a record, or repeats or goes back a step, is *damaged*: it is dropped
        and named by number, and the original file is kept beside the clean one as
        ``metrics.jsonl.damaged-N`` before the clean file replaces it.
        """
        path = self.metrics_path
        if not path.exists():
            return MetricsRepair(0, 0, (), (), None)
        data = path.read_bytes()
        lines = data.split(b"\n")
        torn = lines.pop()  # b"" when the file ends with a newline
        kept: list[bytes] = []
        damaged: list[str] = []
        later = 0
        last_step = 0
        for number, raw in enumerate([*lines, torn] if torn else lines, start=1):
            is_torn = bool(torn) and number == len(lines) + 1
            problem, step = _metrics_record(raw)
            if problem is not None:
                if not is_torn and raw.strip():
                    damaged.append(f"{path.name} line {number}: {problem}")
                continue
            assert step is not None
            if step > up_to_step:
                later += 1
            elif step <= last_step:
                damaged.append(f"{path.name} line {number}: step {step} repeats or goes back (after step {last_step})")
            else:
                kept.append(raw)
                last_step = step
        steps = {_metrics_record(raw)[1] for raw in kept}
        missing = tuple(s for s in range(1, up_to_step + 1) if s not in steps)
        original = None
        if damaged:
            original = _fresh_name(path, ".damaged")
            shutil.copyfile(path, original)
        clean = b"".join(raw + b"\n" for raw in kept)
        if clean != data:
            with atomic_file(path, "wb") as handle:
                handle.write(clean)
        return MetricsRepair(len(kept), later, tuple(damaged), missing, original)


@attrs.frozen
class MetricsRepair:
    """What resuming kept of ``metrics.jsonl``."""

    kept: int
    """Records of steps up to the checkpoint's, kept."""
    redone: int
    """Records of later steps, dropped to be written again."""
    damaged: tuple[str, ...]
    """``metrics.jsonl line N: why``, one per damaged line dropped."""
    missing: tuple[int, ...]
    """Steps up to the checkpoint's without a record (their lines were damaged or cut off)."""
    original: Path | None
    """Where the damaged original was kept (``None`` when nothing was damaged)."""

    def messages(self) -> list[str]:
        """What the run says about the repair, one line each (nothing when all was intact)."""
        lines = [f"debate: {line}; dropped" for line in self.damaged]
        if self.missing:
            lines.append(f"debate: metrics.jsonl has no record of step(s) {', '.join(map(str, self.missing))}")
        if self.original is not None:
            lines.append(f"debate: the damaged metrics.jsonl is kept as {self.original}; a clean one replaces it")
        return lines


def _metrics_record(raw: bytes) -> tuple[str | None, int | None]:
    """``(None, step)`` for a metrics record, ``(why not, None)`` for anything else."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8", None
    try:
        record = json.loads(text)
    except ValueError as exc:
        return f"not valid JSON ({getattr(exc, 'msg', exc)})", None
    step = record.get("step") if isinstance(record, dict) else None
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        return "not a metrics record (no step number of 1 or more)", None
    return None, step


def _fresh_name(path: Path, suffix: str) -> Path:
    """``path`` + ``suffix-1``, ``-2``, ...: the first name not taken."""
    number = 1
    while path.with_name(f"{path.name}{suffix}-{number}").exists():
        number += 1
    return path.with_name(f"{path.name}{suffix}-{number}")


def default_run_directory(name: str, base: Path = Path("runs")) -> RunDirectory:
    """``runs/<name>``, or ``runs/<name>-2``, ``-3``, ... when that already holds a run."""
    candidate = RunDirectory(base / name)
    number = 1
    while candidate.holds_run():
        number += 1
        candidate = RunDirectory(base / f"{name}-{number}")
    return candidate


def fresh_run_directory(path: Path) -> RunDirectory:
    """A run directory given with ``--run-dir``: it must not already hold a run."""
    directory = RunDirectory(path)
    if directory.holds_run():
        raise RunDirectoryError(
            f"{path} already holds a run; continue it with `debate train --resume {path}` or choose another --run-dir"
        )
    return directory


def existing_run_directory(path: Path) -> RunDirectory:
    """A run directory given with ``--resume``: it must hold a run."""
    directory = RunDirectory(path)
    if not directory.holds_run():
        raise RunDirectoryError(f"{path} holds no run to resume (no config.toml); start one with --run-dir {path}")
    return directory
