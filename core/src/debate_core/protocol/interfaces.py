"""The interfaces between the parts of one debate: parser, personas, history, renderer,
agent policy and coordinator, and the token-level record a debate leaves for training.

Built-in plugins implement these; ``run_debate`` (``protocol.episode``) wires them together
and is the one code path used by training, evaluation and ``debate run``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from debate_core.protocol.records import DebateRecord, ParsedResponse, Turn


@runtime_checkable
class OutputParser(Protocol):
    """Parses raw model text against the output contract. Never raises."""

    def parse(self, text: str) -> ParsedResponse: ...


@attrs.frozen
class Persona:
    """One agent's persona: its name, its system prompt (already formatted with the
    agent id) and its sampling temperature (``None`` keeps the run's temperature)."""

    name: str
    system_prompt: str
    temperature: float | None = None


@runtime_checkable
class PersonaSet(Protocol):
    """Assigns a persona to each agent id."""

    def persona(self, agent_id: int, num_agents: int) -> Persona: ...


@attrs.frozen
class HistoryEntry:
    """One earlier turn as shown in a prompt, fields already clipped; ``comparison`` is
    ``None`` when hidden (blind review)."""

    round: int
    agent: int
    solution: str
    evaluation: str
    comparison: str | None
    consensus_reason: str


@runtime_checkable
class HistoryPolicy(Protocol):
    """Chooses which earlier turns an agent sees and how each field is shown."""

    def select(self, visible: Sequence[Turn], current_round: int) -> Sequence[HistoryEntry]: ...


@attrs.frozen
class Message:
    """One chat message."""

    role: str
    content: str


@attrs.frozen
class StopCondition:
    """Stops for sampling: token-id stops or string stops, never a mix of both."""

    token_ids: tuple[int, ...] = ()
    strings: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        if self.token_ids and self.strings:
            raise ValueError("a stop condition holds token ids or strings, not both")

    def as_sampling_stop(self) -> list[int] | list[str]:
        """The value for ``tinker.types.SamplingParams.stop``."""
        return list(self.token_ids) if self.token_ids else list(self.strings)


@runtime_checkable
class Renderer(Protocol):
    """Turns messages into prompt tokens for a given tokenizer, and says how to stop."""

    def build_prompt(self, messages: Sequence[Message]) -> list[int]: ...

    def stop_condition(self) -> StopCondition: ...

    def decode(self, tokens: Sequence[int]) -> str: ...


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
