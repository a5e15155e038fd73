"""The transcripts a step logs: its first ``logging.num_groups_to_log`` debates, each with its
rewards and advantages beside it (``transcripts/step_N/``, read by ``debate show``)."""

from __future__ import annotations

from collections.abc import Sequence

from debate_core.files import output_write_errors
from debate_core.records import DebateRecord, RewardResult
from debate_core.rewards.advantages import DebateAdvantages
from debate_core.rundir.directory import RunDirectory
from debate_core.rundir.reward_sidecars import reward_summary, write_sidecar
from debate_core.training.run_components import RunComponents


def log_transcripts(
    components: RunComponents,
    run_dir: RunDirectory,
    count: int,
    step: int,
    records: Sequence[DebateRecord],
    results: Sequence[RewardResult],
    advantages: Sequence[DebateAdvantages | None],
) -> None:
    """Write the step's first ``count`` debates (``logging.num_groups_to_log``) and their reward sidecars.

    Raises:
        OutputWriteError: a file could not be written (a full disk); the message names it.
    """
    logged = list(zip(records, results, advantages, strict=True))[:count]
    for index, (record, result, advantage) in enumerate(logged):
        path = run_dir.transcript_path(step, index)
        with output_write_errors(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            components.write_transcript(record, path)
        write_sidecar(path, reward_summary(components.reward_name, record, result, advantage))
