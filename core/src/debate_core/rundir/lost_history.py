"""What a resumed run found gone of its own past: the steps up to its checkpoint with no metrics
record or no transcripts (docs/training.md#a-lost-history).

The weights carry on from the checkpoint either way; what is lost is the record of those steps.
The run says so in one line each, and keeps the steps in ``summary.json`` (``lost_history``) so
that the report marks them too.
"""

from __future__ import annotations

import attrs

from debate_core.rundir.directory import RunDirectory
from debate_core.rundir.metrics_file import ranges


@attrs.frozen
class LostHistory:
    """Steps up to a resumed run's checkpoint whose metrics record or transcripts are gone."""

    metrics: tuple[int, ...] = ()
    transcripts: tuple[int, ...] = ()

    def to_json(self) -> dict[str, list[int]]:
        """The ``lost_history`` field of ``summary.json``."""
        return {"metrics": list(self.metrics), "transcripts": list(self.transcripts)}


def lost_transcripts(run_dir: RunDirectory, first_step: int, checkpoint_step: int) -> tuple[int, ...]:
    """Steps ``first_step..checkpoint_step`` (the RL steps a resumed run keeps) that logged no
    transcript: their first debate's file is gone. A step's transcripts are written before its
    update, so a checkpointed step always had them."""
    return tuple(s for s in range(first_step, checkpoint_step + 1) if not run_dir.transcript_path(s, 0).exists())


def transcripts_message(run_dir: RunDirectory, steps: tuple[int, ...], checkpoint_step: int) -> str:
    """The line a resumed run says about transcripts that are gone."""
    return (
        f"debate: {run_dir.transcripts} has no transcripts of step(s) {ranges(steps)} (the run resumes "
        f"after step {checkpoint_step}); those steps stay missing from the transcripts"
    )


def lost_history_notes(summary: dict[str, object]) -> list[str]:
    """The report's notes for the ``lost_history`` of a run's ``summary.json`` (none when nothing
    was lost, or for a summary written before the field existed)."""
    lost = summary.get("lost_history")
    if not isinstance(lost, dict):
        return []
    notes = []
    for key, what in (("metrics", "metrics.jsonl has no record"), ("transcripts", "transcripts/ has no transcripts")):
        steps = lost.get(key)
        if isinstance(steps, list) and steps and all(isinstance(s, int) for s in steps):
            notes.append(f"{what} of step(s) {ranges(tuple(sorted(steps)))}: lost before a resume")
    return notes
