"""What an agent is shown: personas, earlier turns as the history policy presents them, chat
messages, and the interfaces of the components that produce them (persona sets, history
policies, renderers and the tokenizers renderers use)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records.debate import Message as Message
from debate_core.records.debate import Turn


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
    """One earlier turn as shown in a prompt, fields already clipped; ``comparison`` and
    ``consensus_reason`` are ``None`` when hidden (blind review shows only the solution and the
    evaluation); ``answer`` is the final answer the run's grader reads in the solution, shown
    when the debate states answers (``debate.show_answers``)."""

    round: int
    agent: int
    solution: str
    evaluation: str
    comparison: str | None
    consensus_reason: str | None
    answer: str | None = None


@runtime_checkable
class HistoryPolicy(Protocol):
    """Chooses which earlier turns an agent sees and how each field is shown."""

    def select(self, visible: Sequence[Turn], current_round: int) -> Sequence[HistoryEntry]: ...


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
class Tokenizer(Protocol):
    """The part of a Hugging Face tokenizer a renderer needs."""

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]: ...

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = ...) -> str: ...


@runtime_checkable
class Renderer(Protocol):
    """Turns messages into prompt tokens for a given tokenizer, and says how to stop."""

    def build_prompt(self, messages: Sequence[Message]) -> list[int]: ...

    def stop_condition(self) -> StopCondition: ...

    def decode(self, tokens: Sequence[int]) -> str: ...
