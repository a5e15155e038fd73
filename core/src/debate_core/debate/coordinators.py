"""Turn protocols: who may answer when, what each answer may see, when the debate ends.

Every agent of a debate runs as its own task and asks the turn state for its next turn,
waiting until the protocol lets it act. The turn state's machinery and two built-in protocols:

* ``sequential``: one global order, agent 0 to N-1 in each round; an agent waits
  for its turn and sees every turn committed before it.
* ``parallel``: all agents of a round answer at once against the same
  history (the earlier rounds); the round is committed in agent order when the last answer
  is in. ``blind_review`` shows only the ``<solution>`` and ``<evaluation>`` of earlier turns.

The third, ``runoff``, is in ``debate.runoff_protocol``; ``debate.protocols`` names all three.

Termination (docs/protocol.md#when-a-debate-ends): at the end of a round when every agent of
it said YES to consensus and each YES counts under the debate's consensus rule (by default
only an *informed* YES counts: one from an agent whose prompt showed the latest solution of
every other agent), or after ``max_rounds``. The host sets ``TurnState.consensus_rule``
right after ``start``. A failed turn (a parse error, or the agent's policy raising) is
committed with step reward -1 and aborts the debate: every waiting agent is released at
once. Under ``parallel`` a parse error ends the debate after its round, keeping the turns
before it in agent order; a raising policy ends it at once (the caller cancels the
in-flight answers) and only the failed turn of that round is kept.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records import (
    AnswerReader,
    Comparison,
    ConsensusRule,
    HistoryEntry,
    Message,
    ParsedResponse,
    Turn,
    round_reaches_consensus,
)


@attrs.frozen
class TurnTicket:
    """Permission to answer: the round, and the committed turns the answer may see."""

    round: int
    agent: int
    visible: tuple[Turn, ...]
    seats: tuple[int, ...] = ()
    """Set when the prompt seats the turn in a debate of another size: seat ``i`` is agent
    ``seats[i]`` (``-1``: nobody), the answering agent at one of them (``Turn.seats``). Empty:
    every agent under its own id."""


@attrs.frozen
class TurnDraft:
    """An answer before it is committed (commit order assigns step and turn index)."""

    text: str
    response: ParsedResponse
    persona: str = ""
    comparisons: tuple[Comparison, ...] = ()
    self_comparisons: int = 0
    malformed_comparisons: int = 0
    informed: bool = False
    """The prompt showed the latest solution of every other agent (``Turn.informed``)."""
    prompt: tuple[Message, ...] = ()
    """The chat messages the agent was shown (``Turn.prompt``)."""

    @property
    def failed(self) -> bool:
        """True when the answer broke the contract or the turn failed."""
        return self.response.error is not None


class TurnState(abc.ABC):
    """The shared state of one debate under some turn protocol (one instance per debate)."""

    protocol_name = "base"

    def __init__(self, num_agents: int, max_rounds: int) -> None:
        if num_agents < 1 or max_rounds < 1:
            raise ValueError("a debate needs at least one agent and one round")
        self.num_agents = num_agents
        self.max_rounds = max_rounds
        self.committed: list[Turn] = []
        self.finished = asyncio.Event()
        self.aborted = False
        self.abort_reason: str | None = None
        self.consensus_reached = False
        self.consensus_rule: ConsensusRule = "informed"
        """Which YES answers end the debate (``records.CONSENSUS_RULES``); set by the host."""
        self.answer_reader: AnswerReader = _no_reader
        """The answer of a solution as the run's grader reads it (its text where none is read);
        set by the host, for protocols that weigh answers (``runoff``)."""
        self._condition = asyncio.Condition()

    @classmethod
    def visible_at(cls, turn_index: int, round_start: int) -> int | None:
        """How many turns, in commit order, the turn at ``turn_index`` could see when its round
        starts at ``round_start``: the rule ``_take`` follows, for reading a transcript back.
        ``None``: the protocol has no fixed rule (its transcripts record ``visible_turns``)."""
        return None

    # ------------------------------------------------------------- the turn protocol's part
    @abc.abstractmethod
    def _may_answer(self, agent: int) -> bool:
        """Whether ``agent`` may take a turn now (called under the lock)."""

    @abc.abstractmethod
    def _take(self, agent: int) -> TurnTicket:
        """Give ``agent`` its turn (called under the lock once ``_may_answer`` holds)."""

    @abc.abstractmethod
    def _receive(self, ticket: TurnTicket, draft: TurnDraft) -> None:
        """Take in an answer: commit, check termination, move on (called under the lock)."""

    # ------------------------------------------------------------- shared
    async def next_turn(self, agent: int) -> TurnTicket | None:
        """Wait until ``agent`` may answer; ``None`` once the debate is over."""
        async with self._condition:
            await self._condition.wait_for(lambda: self.finished.is_set() or self._may_answer(agent))
            if self.finished.is_set():
                return None
            return self._take(agent)

    async def submit(self, ticket: TurnTicket, draft: TurnDraft) -> None:
        """Hand in an answer (a parse failure included)."""
        async with self._condition:
            if not self.finished.is_set():
                self._receive(ticket, draft)
            self._condition.notify_all()

    async def fail(self, ticket: TurnTicket, draft: TurnDraft) -> None:
        """The agent could not answer (its policy raised): commit the failed turn and abort now."""
        async with self._condition:
            if not self.finished.is_set():
                self._commit(ticket, draft)
                self._abort(f"round {ticket.round}, agent {ticket.agent}: {failure_reason(draft)}")
            self._condition.notify_all()

    async def abort(self, reason: str) -> None:
        """End the debate at once (a component failed); waiting agents are released."""
        async with self._condition:
            if not self.finished.is_set():
                self._abort(reason)
            self._condition.notify_all()

    def _commit(self, ticket: TurnTicket, draft: TurnDraft) -> Turn:
        step = sum(1 for t in self.committed if t.agent == ticket.agent)
        turn = Turn(
            round=ticket.round,
            agent=ticket.agent,
            step=step,
            turn_index=len(self.committed),
            visible_turns=len(ticket.visible),
            text=draft.text,
            response=draft.response,
            persona=draft.persona,
            comparisons=draft.comparisons,
            self_comparisons=draft.self_comparisons,
            malformed_comparisons=draft.malformed_comparisons,
            informed=draft.informed,
            prompt=draft.prompt,
            seats=ticket.seats,
        )
        self.committed.append(turn)
        return turn

    def _abort(self, reason: str) -> None:
        self.aborted = True
        self.abort_reason = reason
        self.finished.set()

    def _end_round(self, round_turns: list[Turn], round: int) -> bool:
        """Apply the termination rule after a complete round; True when the debate is over."""
        if round_reaches_consensus(round_turns, self.num_agents, self.consensus_rule):
            self.consensus_reached = True
            self.finished.set()
        elif round >= self.max_rounds:
            self.finished.set()
        return self.finished.is_set()


def _no_reader(_solution: str) -> str | None:
    return None


def failure_reason(draft: TurnDraft) -> str:
    """Why a failed draft failed, for an abort reason (``code: message``)."""
    error = draft.response.error
    return "failed" if error is None else f"{error.code}: {error.message}"


class SequentialTurns(TurnState):
    """Sequential turns: agent 0 to N-1 in each round, one at a time."""

    protocol_name = "sequential"

    @classmethod
    def visible_at(cls, turn_index: int, round_start: int) -> int:
        """Every turn committed before it."""
        return turn_index

    def __init__(self, num_agents: int, max_rounds: int) -> None:
        super().__init__(num_agents, max_rounds)
        self._round = 1
        self._next_agent = 0
        self._answering = False

    def _may_answer(self, agent: int) -> bool:
        return not self._answering and self._next_agent == agent

    def _take(self, agent: int) -> TurnTicket:
        self._answering = True
        return TurnTicket(self._round, agent, tuple(self.committed))

    def _receive(self, ticket: TurnTicket, draft: TurnDraft) -> None:
        self._answering = False
        turn = self._commit(ticket, draft)
        if turn.failed:
            self._abort(f"round {ticket.round}, agent {ticket.agent}: {failure_reason(draft)}")
            return
        self._next_agent += 1
        if self._next_agent == self.num_agents:
            round_turns = [t for t in self.committed if t.round == self._round]
            if not self._end_round(round_turns, self._round):
                self._round += 1
                self._next_agent = 0


class ParallelTurns(TurnState):
    """Parallel rounds: every agent of a round at once, committed in agent order."""

    protocol_name = "parallel"

    @classmethod
    def visible_at(cls, turn_index: int, round_start: int) -> int:
        """The turns of the earlier rounds."""
        return round_start

    def __init__(self, num_agents: int, max_rounds: int) -> None:
        super().__init__(num_agents, max_rounds)
        self._round = 1
        self._taken: set[int] = set()
        self._answers: dict[int, tuple[TurnTicket, TurnDraft]] = {}

    def _may_answer(self, agent: int) -> bool:
        return agent not in self._taken

    def _take(self, agent: int) -> TurnTicket:
        self._taken.add(agent)
        return TurnTicket(self._round, agent, tuple(self.committed))

    def _receive(self, ticket: TurnTicket, draft: TurnDraft) -> None:
        self._answers[ticket.agent] = (ticket, draft)
        if len(self._answers) < self.num_agents:
            return
        round_turns: list[Turn] = []
        for agent in range(self.num_agents):
            agent_ticket, agent_draft = self._answers[agent]
            turn = self._commit(agent_ticket, agent_draft)
            round_turns.append(turn)
            if turn.failed:
                self._abort(f"round {agent_ticket.round}, agent {agent}: {failure_reason(agent_draft)}")
                return
        if not self._end_round(round_turns, self._round):
            self._round += 1
            self._taken.clear()
            self._answers.clear()


@runtime_checkable
class Coordinator(Protocol):
    """A turn protocol plugin: starts the turn state of each debate."""

    @property
    def protocol_name(self) -> str: ...

    @property
    def hide_comparisons(self) -> bool: ...

    def start(self, num_agents: int, max_rounds: int) -> TurnState: ...


class SequentialCoordinator:
    """The ``sequential`` coordinator."""

    protocol_name = SequentialTurns.protocol_name
    hide_comparisons = False

    def start(self, num_agents: int, max_rounds: int) -> TurnState:
        """A fresh turn state for one debate."""
        return SequentialTurns(num_agents, max_rounds)


@attrs.frozen(kw_only=True)
class ParallelOptions:
    """Options of the ``parallel`` coordinator."""

    blind_review: bool = False
    """Show only the ``<solution>`` and ``<evaluation>`` of earlier turns, hiding comparisons and
    consensus reasons, whatever the history policy (docs/protocol.md#turn-protocols)."""


class ParallelCoordinator:
    """The ``parallel`` coordinator."""

    protocol_name = ParallelTurns.protocol_name

    def __init__(self, options: ParallelOptions | None = None) -> None:
        self.options = options or ParallelOptions()

    @property
    def hide_comparisons(self) -> bool:
        """True with blind review."""
        return self.options.blind_review

    def start(self, num_agents: int, max_rounds: int) -> TurnState:
        """A fresh turn state for one debate."""
        return ParallelTurns(num_agents, max_rounds)


def saw_every_latest_solution(ticket: TurnTicket, shown: Sequence[HistoryEntry], num_agents: int) -> bool:
    """Whether the prompt showed the latest committed solution of every other agent
    (``Turn.informed``, docs/protocol.md#when-a-debate-ends).

    An agent that has not answered yet has no solution to see, so a turn taken before every
    other agent answered once is not informed (the first agents of a sequential round 1, every
    agent of a parallel round 1). A history policy that hides an agent's latest turn leaves the
    turn uninformed too. A seated turn (``TurnTicket.seats``) is informed when it was shown the
    latest solution of every other agent it seats, and no seat is empty.
    """
    latest: dict[int, int] = {}
    for turn in ticket.visible:
        latest[turn.agent] = turn.round
    shown_rounds = {(e.agent, e.round) for e in shown}
    others = ticket.seats if ticket.seats else range(num_agents)
    return all(other in latest and (other, latest[other]) in shown_rounds for other in others if other != ticket.agent)
