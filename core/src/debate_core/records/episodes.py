"""A debate in tokens: what a policy samples for one prompt, each agent's transitions, and the
finished episode (the record rewards see and the trajectories training needs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records.debate import DebateRecord, Message
from debate_core.records.prompts import HistoryEntry, StopCondition


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
class TurnView:
    """What one turn's prompt shows, as structured data: for policies that answer from the
    debate itself rather than from tokens (the warm-start's reference agents, scripted tests).

    ``shown`` are the history entries of the prompt in commit order (the agent's own included);
    ``informed`` is ``Turn.informed`` of the turn being answered; ``messages`` are the prompt's
    messages before rendering (for a policy behind a chat API: ``debate_core.hosting``). A seated
    turn (``Turn.seats``, the ``runoff`` coordinator's) is viewed as its prompt names it: ``agent``,
    ``num_agents`` and the entries' agents are seats, and ``seats`` maps them to the debate's.
    """

    question: str
    agent: int
    num_agents: int
    round: int
    max_rounds: int
    shown: tuple[HistoryEntry, ...]
    informed: bool
    messages: tuple[Message, ...] = ()
    seats: tuple[int, ...] = ()

    @property
    def debate_agent(self) -> int:
        """The answering agent's id in the debate (``agent`` itself unless the turn is seated)."""
        return self.seats[self.agent] if self.seats else self.agent

    def latest_of_others(self) -> dict[int, HistoryEntry]:
        """Each other agent's most recent shown entry, by agent id."""
        latest: dict[int, HistoryEntry] = {}
        for entry in self.shown:
            if entry.agent != self.agent and (entry.agent not in latest or entry.round >= latest[entry.agent].round):
                latest[entry.agent] = entry
        return latest


@runtime_checkable
class ViewingPolicy(Protocol):
    """An agent policy that also reads the structured view of its turn.

    ``run_debate`` calls ``sample_with_view`` instead of ``AgentPolicy.sample`` for such a
    policy; everything else (prompt tokens, stops, seeds, the record) is the same.

        class Echo:
            async def sample_with_view(self, prompt, view, *, stop, temperature, max_tokens, seed):
                ...  # answer from view.shown, not from the prompt tokens
    """

    async def sample_with_view(
        self,
        prompt: Sequence[int],
        view: TurnView,
        *,
        stop: StopCondition,
        temperature: float,
        max_tokens: int,
        seed: int | None,
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
