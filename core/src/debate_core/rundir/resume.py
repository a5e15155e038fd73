"""Where a resumed run starts: the newest intact checkpoint, with everything newer set aside.

``debate train --resume RUN_DIR`` must always finish. It takes the newest checkpoint whose
manifest and files check out (:func:`debate_core.runtime.manifests.scan_checkpoints`), says
which newer ones were damaged and why, and moves what belongs to steps after it (their
manifests, the local backend's states, evaluation records and transcripts) into
``RUN_DIR/set_aside/resume_NN/`` under the same relative paths: kept for inspection, never
deleted, and out of the way of the steps the run redoes. A checkpoint that is intact but lies
past the end of the run's config (more RL iterations or warm-start steps done than it plans) is
refused with one line: it is a different config, not damage.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from debate_core.config.sections import RunConfig
from debate_core.errors import DebateError
from debate_core.limits import loads_json, read_limited_text
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.checkpoint_format import Checkpoint, CheckpointError
from debate_core.runtime.manifests import RejectedCheckpoint, scan_checkpoints

SET_ASIDE = "set_aside"
_STEP_NAME = re.compile(r"^step_(\d+)")


@attrs.frozen
class ResumePoint:
    """The checkpoint a resumed run starts from (``None``: start over) and what was passed over."""

    checkpoint: Checkpoint | None
    rejected: tuple[RejectedCheckpoint, ...] = ()
    set_aside: Path | None = None
    """The folder newer states were moved to (``None`` when there was nothing to move)."""
    moved: tuple[Path, ...] = ()
    """What was moved, by path relative to the run directory."""

    @property
    def step(self) -> int:
        return self.checkpoint.step if self.checkpoint else 0

    def messages(self) -> list[str]:
        """What the run says about how it resumes, one line each."""
        lines = [f"debate: passed over a damaged checkpoint: {r.reason}" for r in self.rejected]
        if self.rejected:
            lines.append(
                f"debate: resuming from the newest intact checkpoint, step {self.step}"
                if self.checkpoint
                else "debate: no intact checkpoint; starting over"
            )
        if self.set_aside is not None:
            moved = len(self.moved)
            lines.append(f"debate: {moved} file(s) of steps after {self.step} moved aside to {self.set_aside}")
        return lines


def planned_iterations(config: RunConfig) -> int:
    """RL iterations the config plans: its curriculum stages' total, or ``training.num_iterations``."""
    if config.curriculum:
        return sum(stage.iterations for stage in config.curriculum)
    return config.training.num_iterations


def check_not_finished(run_dir: RunDirectory, config: RunConfig) -> None:
    """Refuse to resume a run whose newest intact checkpoint is its final one under ``config`` and
    whose summary says it ended there: every warm-start step and RL iteration it plans is done and
    its end was written, so there is nothing to do. A run stopped after its final checkpoint but
    before its summary (a full disk) still has its end to write, and resumes.

    Raises:
        CheckpointError: one line with the step and how to go on (more iterations).
    """
    checkpoint = scan_checkpoints(run_dir.checkpoints).intact
    if checkpoint is None or checkpoint.reason != "final":
        return
    iterations = planned_iterations(config)
    warmstart = config.warmstart.steps if config.warmstart.enabled else 0
    if checkpoint.iteration != iterations or checkpoint.warmstart_steps != warmstart:
        return  # more to do, or past the end of this config (refused by check_within_config)
    if not _ended_at(run_dir, checkpoint.step):
        return  # the end (its summary) was not written: the resume writes it
    more = (
        "with more iterations in the curriculum's last stage"
        if config.curriculum
        else f"`debate train --resume {run_dir.root} training.num_iterations={max(2 * iterations, iterations + 1)}`"
    )
    raise CheckpointError(
        f"--resume {run_dir.root}: already finished at step {checkpoint.step} (nothing to do; {more} to go on)"
    )


def _ended_at(run_dir: RunDirectory, step: int) -> bool:
    """Whether the run's summary says it ended, not stopped, at ``step``."""
    try:
        summary = loads_json(read_limited_text(run_dir.summary_path, "summary file"))
    except (OSError, DebateError, ValueError):
        return False
    return isinstance(summary, dict) and summary.get("step") == step and summary.get("stopped_by") is None


def check_within_config(checkpoint: Checkpoint, config: RunConfig, where: Path) -> None:
    """Refuse an intact checkpoint that lies past the end of ``config``.

    Raises:
        CheckpointError: naming the manifest, the count and the setting to raise.
    """
    iterations = planned_iterations(config)
    if checkpoint.iteration > iterations:
        setting = "the curriculum's iterations" if config.curriculum else "training.num_iterations"
        raise CheckpointError(
            f"{where}: the checkpoint has {checkpoint.iteration} RL iterations done but the run plans {iterations} "
            f"({setting}); raise it to continue the run"
        )
    warmstart = config.warmstart.steps if config.warmstart.enabled else 0
    if checkpoint.warmstart_steps > warmstart:
        raise CheckpointError(
            f"{where}: the checkpoint has {checkpoint.warmstart_steps} warm-start steps done but the run plans "
            f"{warmstart} (warmstart.steps, warmstart.enabled); raise it to continue the run"
        )


def _step_of(name: str) -> int | None:
    """The step a run file's name starts with (``step_000012-2_sampler`` -> 12)."""
    match = _STEP_NAME.match(name)
    return int(match.group(1)) if match else None


def _newer_than(run_dir: RunDirectory, step: int) -> list[Path]:
    """Files and folders of steps after ``step``: manifests, local states, evaluations, transcripts."""
    places = (run_dir.checkpoints, run_dir.backend_states, run_dir.evaluations, run_dir.transcripts)
    found: list[Path] = []
    for place in places:
        if not place.is_dir():
            continue
        for entry in sorted(place.iterdir()):
            number = _step_of(entry.name)
            if number is not None and number > step and (entry.is_file() or entry.is_dir()):
                found.append(entry)
    return found


def _fresh_folder(base: Path) -> Path:
    """``base/resume_01``, ``resume_02``, ...: the first that does not exist yet."""
    number = 1
    while (base / f"resume_{number:02d}").exists():
        number += 1
    return base / f"resume_{number:02d}"


def set_aside_newer(run_dir: RunDirectory, step: int) -> tuple[Path | None, tuple[Path, ...]]:
    """Move everything of steps after ``step`` into a fresh ``set_aside/resume_NN`` folder."""
    newer = _newer_than(run_dir, step)
    if not newer:
        return None, ()
    folder = _fresh_folder(run_dir.root / SET_ASIDE)
    moved: list[Path] = []
    for entry in newer:
        relative = entry.relative_to(run_dir.root)
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        entry.rename(target)
        moved.append(relative)
    return folder, tuple(moved)


def choose_resume_point(run_dir: RunDirectory, config: RunConfig) -> ResumePoint:
    """The newest intact checkpoint of ``run_dir``, checked against ``config``, with every newer
    file set aside.

    Raises:
        CheckpointError: the newest intact checkpoint lies past the end of ``config``.
    """
    scan = scan_checkpoints(run_dir.checkpoints)
    if scan.intact is not None and scan.intact_path is not None:
        check_within_config(scan.intact, config, scan.intact_path)
    step = scan.intact.step if scan.intact else 0
    folder, moved = set_aside_newer(run_dir, step)
    return ResumePoint(scan.intact, scan.rejected, folder, moved)
