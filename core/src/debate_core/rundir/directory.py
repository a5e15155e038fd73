"""The run directory: everything one training run leaves on disk.

::

    RUN_DIR/
      config.toml        the resolved run file (every default filled in)
      plugins.json       the installed plugin distributions with their versions
      environment.json   where it computed, an entry per start and resume (``rundir.environment``)
      metrics.jsonl      one JSON object per step (warm-start steps, then RL iterations, from 1),
                         written here whatever metric sinks are configured (they are extra
                         destinations); metrics.jsonl.damaged-N: an original that resuming found damaged
      transcripts/       step_NNNNNN/debate_KK.json: num_groups_to_log debates per iteration,
                         each with debate_KK.rewards.json (its rewards and advantages) beside it
      checkpoints/       step_NNNNNN.json manifests; backend/ holds local backends' states;
                         rl_reference.json: where the KL penalty's reference weights are
      eval/              step_NNNNNN_<label>.json: the evaluations run during training
      summary.json       the last evaluation of each phase and where the run stopped
      report.html        ``debate report RUN_DIR`` (any time, also while the run goes on)
      .lock              the writer's lock (``rundir.lock``)

Step ``s`` is the state after ``s`` updates; every file about it carries that number.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import attrs

from debate_core.errors import DebateError
from debate_core.files import atomic_write_json, output_write_errors
from debate_core.limits import loads_json, read_limited_text
from debate_core.records.json_values import JsonMapping, JsonObject
from debate_core.rundir.environment import ENVIRONMENT_NAME
from debate_core.rundir.lock import LOCK_NAME, held_message, live_holder
from debate_core.rundir.metrics_file import (
    METRICS_NAME,
    MetricsLine,
    MetricsRecord,
    MetricsRepair,
    intact_records,
    read_metrics_lines,
    repair_metrics,
)

RL_REFERENCE_NAME = "rl_reference.json"
"""The file under ``checkpoints/`` that holds the path of the KL penalty's reference weights."""


class RunDirectoryError(DebateError):
    """The run directory cannot be used as asked."""


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
    def environment_path(self) -> Path:
        return self.root / ENVIRONMENT_NAME

    @property
    def metrics_path(self) -> Path:
        return self.root / METRICS_NAME

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
    def rl_reference_path(self) -> Path:
        return self.checkpoints / RL_REFERENCE_NAME

    @property
    def evaluations(self) -> Path:
        return self.root / "eval"

    @property
    def judges(self) -> Path:
        """The external judges' own files (a response cache a resumed run reads again); made by the
        judge that writes there (docs/training.md#the-run-directory)."""
        return self.root / "judges"

    @property
    def summary_path(self) -> Path:
        return self.root / "summary.json"

    def holds_run(self) -> bool:
        """True when a run was started here (its resolved config exists)."""
        return self.config_path.exists()

    def recorded_a_step(self) -> bool:
        """True when the run got as far as a step: a metrics record or a checkpoint manifest."""
        metrics = self.metrics_path
        has_metrics = metrics.is_file() and metrics.stat().st_size > 0
        return has_metrics or any(self.checkpoints.glob("step_*.json"))

    def discard_failed_start(self, created_root: bool) -> None:
        """Undo a start that failed before its first step (a model that does not load, a backend that
        refuses): the files the start wrote go, and the folders it made while they are empty, so that
        the same ``--run-dir`` can be used again at once. Nothing else is touched; a run that recorded
        a step is left as it is (it can be resumed)."""
        if self.recorded_a_step():
            return
        files = (self.config_path, self.plugins_path, self.metrics_path, self.environment_path, self.root / LOCK_NAME)
        for file in files:
            file.unlink(missing_ok=True)  # the lock too: the failed start has released it
        folders = [self.backend_states, self.checkpoints, self.transcripts, self.evaluations]
        for folder in [*folders, self.root] if created_root else folders:
            with contextlib.suppress(OSError):  # not empty (something else lives there) or already gone
                folder.rmdir()

    def create(self) -> None:
        """Make the folders."""
        for folder in (self.root, self.transcripts, self.checkpoints, self.evaluations):
            with output_write_errors(folder):
                folder.mkdir(parents=True, exist_ok=True)

    def write_plugins(self, distributions: list[dict[str, str]]) -> None:
        """Record the plugin distributions this run used."""
        atomic_write_json(self.plugins_path, distributions)

    def transcript_path(self, step: int, debate: int) -> Path:
        return self.transcripts / f"step_{step:06d}" / f"debate_{debate:02d}.json"

    def evaluation_path(self, step: int, label: str) -> Path:
        return self.evaluations / f"step_{step:06d}_{label}.json"

    def evaluation_debates(self, step: int, label: str) -> Path:
        """The folder of one evaluation's debates (a transcript and its rewards per debate)."""
        return self.evaluations / f"step_{step:06d}_{label}"

    def write_summary(self, summary: JsonMapping) -> None:
        atomic_write_json(self.summary_path, dict(summary))

    def open_metrics(self) -> MetricsRecord:
        """The run's own record of its steps (``metrics.jsonl``), opened to append."""
        return MetricsRecord(self.metrics_path)

    def metrics_lines(self) -> list[MetricsLine]:
        """Every line of ``metrics.jsonl``, classified, read up to its limit (docs/limits.md).

        Raises:
            DebateError: the file is missing, cannot be read, or is longer than the limit.
        """
        return list(read_metrics_lines(self.metrics_path))

    def metric_records(self, up_to_step: int) -> list[JsonObject]:
        """The intact records of steps ``1..up_to_step`` of ``metrics.jsonl`` in file order (none
        when it is missing), read up to its limit.

        Raises:
            DebateError: the file cannot be read, or is longer than the limit.
        """
        return intact_records(self.metrics_path, up_to_step)

    def write_rl_reference(self, sampler_path: str, step: int) -> None:
        """Record where the KL penalty's reference weights were saved, at RL's start (``step``)."""
        atomic_write_json(self.rl_reference_path, {"sampler_path": sampler_path, "step": step})

    def read_rl_reference(self) -> str | None:
        """The reference weights' path recorded by :meth:`write_rl_reference` (``None``: none).

        Raises:
            RunDirectoryError: the record cannot be read or holds no path (the message names it).
        """
        path = self.rl_reference_path
        if not path.is_file():
            return None
        try:
            text = read_limited_text(path, "KL reference record")
        except DebateError as exc:
            raise RunDirectoryError(str(exc)) from None
        try:
            record = loads_json(text)
        except ValueError as exc:
            raise RunDirectoryError(f"{path}: not JSON: {exc}") from None
        sampler_path = record.get("sampler_path") if isinstance(record, dict) else None
        if not isinstance(sampler_path, str) or not sampler_path:
            raise RunDirectoryError(f"{path}: holds no 'sampler_path' (the KL penalty's reference weights)")
        return sampler_path

    def repair_metrics(self, up_to_step: int) -> MetricsRepair:
        """Keep the metric records of steps ``1..up_to_step`` (the checkpoint a resumed run starts
        from; it redoes the rest), setting damaged lines aside (``rundir.metrics_file``)."""
        return repair_metrics(self.metrics_path, up_to_step)


def file_in_the_way(path: Path) -> Path | None:
    """The first of ``path`` and its parents that exists, when it is not a directory (a file where
    a run directory would go); ``None`` when there is none."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


def _refuse_a_file(path: Path, given: bool) -> None:
    """One line when ``path`` (given with ``--run-dir``, or the default), or a folder above it, is a file."""
    blocking = file_in_the_way(path)
    if blocking is None:
        return
    what = (
        f"{path}: is a file, not a directory" if blocking == path else f"{path}: {blocking} is a file, not a directory"
    )
    if given:
        raise RunDirectoryError(f"--run-dir {what}; choose another --run-dir")
    raise RunDirectoryError(f"{what}; the run needs a directory there: choose a --run-dir")


def default_run_directory(name: str, base: Path = Path("runs")) -> RunDirectory:
    """``runs/<name>``, or ``runs/<name>-2``, ``-3``, ... when that already holds a run."""
    candidate = RunDirectory(base / name)
    number = 1
    while candidate.holds_run():
        number += 1
        candidate = RunDirectory(base / f"{name}-{number}")
    _refuse_a_file(candidate.root, given=False)
    return candidate


def fresh_run_directory(path: Path) -> RunDirectory:
    """A run directory given with ``--run-dir``: a directory (or none yet) that does not already hold a run."""
    _refuse_a_file(path, given=True)
    directory = RunDirectory(path)
    if directory.holds_run():
        holder = live_holder(path)
        if holder is not None:  # --resume would be refused too, while it runs
            raise RunDirectoryError(f"{held_message(path, holder)}; or choose another --run-dir")
        raise RunDirectoryError(
            f"{path} already holds a run; continue it with `debate train --resume {path}` or choose another --run-dir"
        )
    return directory


def existing_run_directory(path: Path) -> RunDirectory:
    """A run directory given with ``--resume``: it must hold a run."""
    if not path.exists():
        raise RunDirectoryError(f"--resume {path}: does not exist; start a run there with --run-dir {path}")
    if not path.is_dir():
        raise RunDirectoryError(f"--resume {path}: is a file, not a run directory")
    directory = RunDirectory(path)
    if not directory.holds_run():
        raise RunDirectoryError(f"{path} holds no run to resume (no config.toml); start one with --run-dir {path}")
    return directory
