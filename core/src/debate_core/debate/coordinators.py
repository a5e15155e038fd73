"""Turn protocols: who may answer when, what each answer may see, when the debate ends.

Every agent of a debate runs as its own task and asks the turn state for its next turn,
waiting until the protocol lets it act. Two built-in protocols:

* ``sequential``: one global order, agent 0 to N-1 in each round; an agent waits
  for its turn and sees every turn committed before it.
* ``parallel``: all agents of a round answer at once against the same
  history (the earlier rounds); the round is committed in agent order when the last answer
  is in. ``blind_review`` shows only the ``<solution>`` and ``<evaluation>`` of earlier turns.
* ``runoff``: every agent answers blind in round 1; where the answers disagree, agents other
  than the first holders of the two most held answers judge those two in round 2, each seated as
  agent 0 of a 3-agent debate (docs/protocol.md#the-runoff).

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
from collections.abc import Callable, Sequence
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
    answer_of,
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
                self._abort(f"round {ticket.round}, agent {ticket.agent}: {_reason(draft)}")
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


def _reason(draft: TurnDraft) -> str:
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
            self._abort(f"round {ticket.round}, agent {ticket.agent}: {_reason(draft)}")
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
                self._abort(f"round {agent_ticket.round}, agent {agent}: {_reason(agent_draft)}")
                return
        if not self._end_round(round_turns, self._round):
            self._round += 1
            self._taken.clear()
            self._answers.clear()


class RunoffTurns(TurnState):
    """The runoff: round 1 like a parallel round of blind answers, agent ``k`` seated at ``k mod
    seated_as`` of a ``seated_as``-agent debate; then, where they hold two or more answers, round 2
    for the judges of :func:`runoff_seats` only, each at seat 0 with the two most held answers'
    first holders at seats 1 and 2. The debate ends after round 2, after round 1 when the answers
    agree or no agent is free to judge, or by a round-1 consensus."""

    protocol_name = "runoff"

    @classmethod
    def visible_at(cls, turn_index: int, round_start: int) -> int:
        """The turns of the earlier rounds."""
        return round_start

    def __init__(self, num_agents: int, max_rounds: int, judges_per_order: int = 1, seated_as: int = 3) -> None:
        super().__init__(num_agents, max_rounds)
        self.judges_per_order = judges_per_order
        self.seated_as = seated_as
        self._round = 1
        self._taken: set[int] = set()
        self._answers: dict[int, tuple[TurnTicket, TurnDraft]] = {}
        self._seats: dict[int, tuple[int, int, int]] = {}

    def _players(self) -> list[int]:
        return list(range(self.num_agents)) if self._round == 1 else sorted(self._seats)

    def _may_answer(self, agent: int) -> bool:
        return agent not in self._taken and agent in self._players()

    def _take(self, agent: int) -> TurnTicket:
        self._taken.add(agent)
        if self._round == 1:
            seats = tuple(agent if k == agent % self.seated_as else -1 for k in range(self.seated_as))
        else:
            seats = self._seats[agent] + (-1,) * (self.seated_as - 3)
        return TurnTicket(self._round, agent, tuple(self.committed), seats)

    def _receive(self, ticket: TurnTicket, draft: TurnDraft) -> None:
        self._answers[ticket.agent] = (ticket, draft)
        players = self._players()
        if len(self._answers) < len(players):
            return
        round_turns: list[Turn] = []
        for agent in players:
            agent_ticket, agent_draft = self._answers[agent]
            round_turns.append(self._commit(agent_ticket, agent_draft))
            if round_turns[-1].failed:
                self._abort(f"round {agent_ticket.round}, agent {agent}: {_reason(agent_draft)}")
                return
        if self._round > 1 or self._end_round(round_turns, 1):
            self.finished.set()
            return
        self._seats = runoff_seats(round_turns, self.answer_reader, self.judges_per_order)
        if not self._seats:
            self.finished.set()
            return
        self._round = 2
        self._taken.clear()
        self._answers.clear()


def runoff_seats(
    first_round: Sequence[Turn], read_answer: AnswerReader, judges_per_order: int
) -> dict[int, tuple[int, int, int]]:
    """Round 2 of the runoff: judge -> its seats. The answers of ``first_round`` ranked by how many
    agents hold them (ties to the lowest first holder); with two or more, the first holders of the
    top two are the finalists, and the lowest-numbered other agents, up to ``2 * judges_per_order``,
    judge: the first at seats ``(judge, most held, runner-up)``, the next in the other order, and so
    on. Empty: one answer, or no agent free to judge."""
    holders: dict[str, list[int]] = {}
    for turn in first_round:
        holders.setdefault(answer_of(turn.response.solution, read_answer)[0], []).append(turn.agent)
    ranked = sorted(holders.values(), key=lambda agents: (-len(agents), agents[0]))
    if len(ranked) < 2:
        return {}
    first, second = ranked[0][0], ranked[1][0]
    free = [t.agent for t in first_round if t.agent not in (first, second)][: 2 * judges_per_order]
    return {judge: (judge, first, second) if k % 2 == 0 else (judge, second, first) for k, judge in enumerate(free)}


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


@attrs.frozen(kw_only=True)
class RunoffOptions:
    """Options of the ``runoff`` coordinator."""

    judges_per_order: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    """Judges of the two most held answers in each order (round 2 has up to twice as many judges;
    fewer when fewer agents hold neither answer)."""
    blind_review: bool = True
    """Show the judges only the finalists' ``<solution>`` and ``<evaluation>``, as ``parallel``'s
    blind review does."""
    seated_as: int = attrs.field(default=3, validator=attrs.validators.ge(3))
    """The size of the debate every prompt names (the debate the policy learned in): candidate
    ``k`` answers as agent ``k mod seated_as``, a judge as agent 0 with the two answers at agents 1
    and 2 (docs/protocol.md#the-runoff)."""


class RunoffCoordinator:
    """The ``runoff`` coordinator (docs/protocol.md#the-runoff)."""

    protocol_name = RunoffTurns.protocol_name

    def __init__(self, options: RunoffOptions | None = None) -> None:
        self.options = options or RunoffOptions()

    @property
    def hide_comparisons(self) -> bool:
        """True with blind review (the default)."""
        return self.options.blind_review

    def start(self, num_agents: int, max_rounds: int) -> TurnState:
        """A fresh turn state for one debate."""
        return RunoffTurns(num_agents, max_rounds, self.options.judges_per_order, self.options.seated_as)


BUILTIN_TURN_STATES: tuple[type[TurnState], ...] = (SequentialTurns, ParallelTurns, RunoffTurns)
"""The turn states of the built-in protocols."""
DEFAULT_PROTOCOL = SequentialTurns.protocol_name
"""The protocol of a debate (or transcript) that names none."""


def visibility_rule(protocol: str) -> Callable[[int, int], int | None] | None:
    """``visible_at`` of the built-in protocol called ``protocol``; ``None`` for any other
    protocol (a third party's coordinator: its transcripts record what each turn saw)."""
    state = next((s for s in BUILTIN_TURN_STATES if s.protocol_name == protocol), None)
    return None if state is None else state.visible_at


def builtin_coordinator(protocol: str, blind_review: bool = False) -> Coordinator:
    """The built-in coordinator of ``protocol`` (``blind_review`` for ``parallel``), for tests and
    the test kit; ``ValueError`` for another protocol."""
    if protocol == SequentialTurns.protocol_name:
        return SequentialCoordinator()
    if protocol == ParallelTurns.protocol_name:
        return ParallelCoordinator(ParallelOptions(blind_review=blind_review))
    names = ", ".join(s.protocol_name for s in BUILTIN_TURN_STATES)
    raise ValueError(f"no built-in coordinator for protocol {protocol!r} (built-in: {names})")


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
