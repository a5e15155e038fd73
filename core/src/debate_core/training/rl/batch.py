"""What one RL iteration works on, step by step: its batch of problems, the batch's debates
scored, and what the update trained (``training.rl.iteration``)."""

from __future__ import annotations

import attrs

from debate_core.records import DebateEpisode, DebateRecord, Problem, RewardResult
from debate_core.rewards.advantages import DebateAdvantages
from debate_core.training.kernel.chunked_update import UpdateResult
from debate_core.training.kernel.datum import AssembledDatum


@attrs.frozen
class Batch:
    """The problems of one RL iteration and the curriculum stage they come from."""

    stage_index: int
    dataset_name: str
    problems: list[Problem]


@attrs.frozen
class ScoredDebates:
    """A batch's debates with their rewards and advantages (None: a debate dropped from training)."""

    episodes: list[DebateEpisode]
    results: list[RewardResult]
    advantages: list[DebateAdvantages | None]

    @property
    def records(self) -> list[DebateRecord]:
        """The debates' transcripts, in batch order."""
        return [e.record for e in self.episodes]


@attrs.frozen
class TrainedBatch:
    """What the iteration's update trained on: every Datum built, those with a signal (the others
    are skipped with ``training.skip_zero_advantage_updates``), the update, and its learning rate."""

    datums: list[AssembledDatum]
    trainable: list[AssembledDatum]
    update: UpdateResult
    lr: float
