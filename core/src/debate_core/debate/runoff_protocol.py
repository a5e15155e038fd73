"""The ``runoff`` turn protocol (docs/protocol.md#the-runoff): many blind candidates and a few
judges, who answer and judge only where the candidates disagree, every prompt seated in the
3-agent debate the policy learned in (``debate.seating``)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from debate_core.debate.coordinators import TurnDraft, TurnState, TurnTicket, failure_reason
from debate_core.debate.seating import EMPTY_SEAT
from debate_core.records import AnswerReader, Turn, answer_of


class RunoffTurns(TurnState):
    """The runoff (docs/protocol.md#the-runoff). Agents ``0..C-1`` are candidates, the last
    :func:`runoff_judge_count` agents judges. Round 1: the candidates answer blind at once,
    candidate ``k`` seated at ``k mod seated_as``; where they hold two or more answers, the judges
    then answer blind too (still round 1), and round 2 is theirs alone: each seated at agent 0 with
    the two most held answers' first holders at agents 1 and 2 (:func:`runoff_seats`), in both
    rounds. The debate ends after round 2, or after round 1 when the candidates agree, nobody can
    judge, or every agent's round-1 YES counts (never under the default rule: a blind YES is not
    informed)."""

    protocol_name = "runoff"

    @classmethod
    def visible_at(cls, turn_index: int, round_start: int) -> int:
        """The turns of the earlier rounds."""
        return round_start

    def __init__(self, num_agents: int, max_rounds: int, judges_per_order: int = 1, seated_as: int = 3) -> None:
        super().__init__(num_agents, max_rounds)
        self.seated_as = seated_as
        self.candidates = num_agents - runoff_judge_count(num_agents, judges_per_order)
        self._round = 1
        self._players = list(range(self.candidates))
        self._taken: set[int] = set()
        self._answers: dict[int, tuple[TurnTicket, TurnDraft]] = {}
        self._seats: dict[int, tuple[int, ...]] = {}

    def _may_answer(self, agent: int) -> bool:
        return agent not in self._taken and agent in self._players

    def _take(self, agent: int) -> TurnTicket:
        self._taken.add(agent)
        if agent in self._seats:  # a judge, blind in round 1 and judging in round 2, in one seat
            visible = tuple(self.committed) if self._round == 2 else ()
            return TurnTicket(self._round, agent, visible, self._seats[agent])
        seats = tuple(agent if k == agent % self.seated_as else EMPTY_SEAT for k in range(self.seated_as))
        return TurnTicket(1, agent, (), seats)

    def _receive(self, ticket: TurnTicket, draft: TurnDraft) -> None:
        self._answers[ticket.agent] = (ticket, draft)
        if len(self._answers) < len(self._players):
            return
        answered: list[Turn] = []
        for agent in self._players:
            agent_ticket, agent_draft = self._answers[agent]
            answered.append(self._commit(agent_ticket, agent_draft))
            if answered[-1].failed:
                self._abort(f"round {agent_ticket.round}, agent {agent}: {failure_reason(agent_draft)}")
                return
        self._taken.clear()
        self._answers.clear()
        if self._round == 2:
            self.finished.set()
        elif self._seats:  # the judges' own blind answers complete round 1: they judge
            if not self._end_round([t for t in self.committed if t.round == 1], 1):
                self._round = 2
        elif not self._end_round(answered, 1):
            judges = range(self.candidates, self.num_agents)
            self._seats = runoff_seats(answered, judges, self.answer_reader, self.seated_as)
            if not self._seats:
                self.finished.set()
            self._players = sorted(self._seats)


def runoff_judge_count(num_agents: int, judges_per_order: int) -> int:
    """How many of a runoff's agents judge: ``2 * judges_per_order``, leaving at least two
    candidates (none with fewer than three agents)."""
    return min(2 * judges_per_order, max(0, num_agents - 2))


def runoff_seats(
    candidates: Sequence[Turn], judges: Sequence[int], read_answer: AnswerReader, seated_as: int = 3
) -> dict[int, tuple[int, ...]]:
    """The runoff's judges and their seats. The answers of the ``candidates``' turns ranked by how
    many candidates hold them (ties to the lowest first holder); with two or more, the first holders
    of the top two are the finalists, and each judge sits at seat 0 with them at seats 1 and 2: the
    most held answer's at seat 1 for the first judge, the other way round for the next, and so on
    (seats ``3..seated_as-1`` empty). Empty: the candidates agree, or there is no judge."""
    holders: dict[str, list[int]] = {}
    for turn in candidates:
        holders.setdefault(answer_of(turn.response.solution, read_answer)[0], []).append(turn.agent)
    ranked = sorted(holders.values(), key=lambda agents: (-len(agents), agents[0]))
    if len(ranked) < 2:
        return {}
    first, second = ranked[0][0], ranked[1][0]
    empty = (EMPTY_SEAT,) * (seated_as - 3)
    return {
        judge: ((judge, first, second) if k % 2 == 0 else (judge, second, first)) + empty
        for k, judge in enumerate(judges)
    }


def is_runoff_judge(turn: Turn) -> bool:
    """Whether ``turn`` is a runoff judge's: seated with other agents of the debate (a candidate's
    blind turn seats only itself)."""
    return any(agent not in (EMPTY_SEAT, turn.agent) for agent in turn.seats)


@attrs.frozen(kw_only=True)
class RunoffOptions:
    """Options of the ``runoff`` coordinator."""

    judges_per_order: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    """Judges of the two most held answers in each order: the last ``2 * judges_per_order`` agents
    judge, the others are candidates (at least two; a debate of fewer than three agents has no
    judge, one of three a single judge)."""
    blind_review: bool = True
    """Show the judges only the finalists' ``<solution>`` and ``<evaluation>``, as ``parallel``'s
    blind review does."""
    seated_as: int = attrs.field(default=3, validator=attrs.validators.ge(3))
    """The size of the debate every prompt names (the debate the policy learned in): candidate
    ``k`` answers as agent ``k mod seated_as``, a judge as agent 0 with the two answers it judges
    at agents 1 and 2 (docs/protocol.md#the-runoff)."""


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
