"""A debate in tokens: what a policy samples for one prompt, each agent's transitions, and the
finished episode (the record rewards see and the trajectories training needs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records.debate import DebateRecord
from debate_core.records.prompts import StopCondition


@attrs.frozen
class SampledAction:
    """What a policy returned for one prompt: tokens with the sampler's logprobs."""

    tokens: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    stop_reason: str = "stop"


@runtime_checkable
class AgentPolicy(Protocol):
    """Samples one response for one agent. Backed by a backend's sampling client."""

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction: ...


@attrs.frozen
class Transition:
    """One turn of one agent in tokens: the prompt it saw, what it sampled, and the
    section (``solution``, ``comparison``, ... or ``None``) each sampled token belongs to."""

    turn_index: int
    step: int
    observation: tuple[int, ...]
    action: tuple[int, ...]
    logprobs: tuple[float, ...]
    action_sections: tuple[str | None, ...]


@attrs.frozen
class AgentTrajectory:
    """Every transition of one agent in one debate, in order."""

    agent: int
    transitions: tuple[Transition, ...]


@attrs.frozen
class DebateEpisode:
    """A finished debate: the record rewards see and the token trajectories training needs."""

    record: DebateRecord
    trajectories: tuple[AgentTrajectory, ...]
