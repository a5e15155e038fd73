"""External judges: components that give their own verdict on pairs of responses, mixed into
the peer reward while their weight lasts (docs/rewards.md#a-stronger-judge-phased-out)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records.debate import Turn
from debate_core.records.episodes import AgentPolicy
from debate_core.records.prompts import Renderer


@attrs.frozen
class JudgePair:
    """Two responses to one question, for a judge: its verdict is +1 when ``first`` is better,
    -1 when ``second`` is, 0 when they are equal (or it cannot tell)."""

    question: str
    answer: str | None
    first: Turn
    second: Turn


@runtime_checkable
class JudgeHost(Protocol):
    """What the trainer offers a judge that samples a model: a policy and its renderer for a model
    the run's backend serves (``weights``: a saved checkpoint of it, or None for the base model)."""

    async def sampling_policy(self, base_model: str, weights: str | None) -> tuple[AgentPolicy, Renderer]: ...


@runtime_checkable
class Judge(Protocol):
    """An external judge: one verdict (+1, -1 or 0) per pair, in order."""

    async def compare(self, pairs: Sequence[JudgePair], host: JudgeHost) -> Sequence[int]: ...
