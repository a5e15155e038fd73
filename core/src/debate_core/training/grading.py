"""Ground-truth diagnostics of debates on verifiable datasets (docs/training.md#evaluation).

For one debate with a known answer: every response is graded (``format``, ``correct``); each
agent's final answer is its latest turn that followed the output contract
(``DebateRecord.final_turn``); over the ``k`` final answers, ``pass@k`` (any correct) and
``avg@k`` (mean correct); ``cons@k`` is whether the debate's final answer
(``debate.final_answer``, the answer ``debate run`` prints) is correct. Judge accuracy counts
the peer votes ``a > b`` on pairs where exactly one of the two compared responses is correct,
and how many of them name the correct one as the winner.

Conventions (documented in docs/training.md):

* a response that breaks the output contract is neither formatted nor correct;
* the responses a vote compares are those ``DebateRecord.visible_responses`` names (the latest
  turn of each agent among the turns the judge could see); a vote naming an agent the judge
  has not seen is skipped;
* ties (``a = b``) on a decidable pair are counted in ``judge_ties`` but not in the accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import attrs

from debate_core.debate.final_answer import choose_answer, final_answer
from debate_core.records import AuthoredComparison, DebateRecord, Grade, Grader, Turn, tally_votes
from debate_core.stats import mean

_UNGRADED = Grade(formatted=False, correct=False, extracted=None)


@attrs.frozen
class JudgeTally:
    """Votes on pairs with exactly one correct response: how many, and how many were right."""

    decidable: int = 0
    agreed: int = 0
    ties: int = 0

    def __add__(self, other: JudgeTally) -> JudgeTally:
        return JudgeTally(self.decidable + other.decidable, self.agreed + other.agreed, self.ties + other.ties)


@attrs.frozen
class GradedDebate:
    """The grades of one debate's turns (in commit order), of its agents' final answers, and
    whether the debate's final answer is correct."""

    turn_grades: tuple[Grade, ...]
    final_grades: tuple[Grade, ...]
    final_answer_correct: bool
    judge: JudgeTally
    judge_by_agent: Mapping[int, JudgeTally]

    @property
    def pass_at_k(self) -> float:
        return float(any(g.correct for g in self.final_grades))

    @property
    def avg_at_k(self) -> float:
        return sum(g.correct for g in self.final_grades) / len(self.final_grades) if self.final_grades else 0.0

    @property
    def cons_at_k(self) -> float:
        return float(self.final_answer_correct)


def grade_turn(turn: Turn, answer: str, grader: Grader) -> Grade:
    """The grade of one response; a response that breaks the output contract is ungraded (0, 0)."""
    if turn.failed:
        return _UNGRADED
    return grader.grade(turn.response.solution, answer)


def judge_tally(
    record: DebateRecord, grades: Sequence[Grade], judges: Iterable[int] | None = None
) -> dict[int, JudgeTally]:
    """Per judging agent: its ``a > b`` votes on decidable pairs and how many picked the correct one.

    ``grades`` are the grades of ``record.turns``, in order.
    """
    allowed = None if judges is None else set(judges)
    by_turn: dict[int, list[AuthoredComparison]] = {}
    for vote in tally_votes(record).votes:
        by_turn.setdefault(vote.turn_index, []).append(vote)
    tallies: dict[int, JudgeTally] = {}
    for turn in record.turns:
        if allowed is not None and turn.agent not in allowed:
            continue
        latest = record.visible_responses(turn)
        decidable = agreed = ties = 0
        for vote in by_turn.get(turn.turn_index, ()):
            if vote.a not in latest or vote.b not in latest:
                continue
            a_correct = grades[latest[vote.a]].correct
            b_correct = grades[latest[vote.b]].correct
            if a_correct == b_correct:
                continue
            if vote.op == "=":
                ties += 1
                continue
            decidable += 1
            agreed += int(a_correct)
        if decidable or ties:
            tallies[turn.agent] = tallies.get(turn.agent, JudgeTally()) + JudgeTally(decidable, agreed, ties)
    return tallies


def grade_debate(record: DebateRecord, grader: Grader, answer: str | None = None) -> GradedDebate | None:
    """Grade a debate against its answer; ``None`` when there is no answer to check against."""
    truth = answer if answer is not None else record.answer
    if truth is None:
        return None
    turn_grades = tuple(grade_turn(t, truth, grader) for t in record.turns)
    position = {id(t): i for i, t in enumerate(record.turns)}
    finals = tuple(
        _UNGRADED if (turn := record.final_turn(agent)) is None else turn_grades[position[id(turn)]]
        for agent in range(record.num_agents)
    )
    by_agent = judge_tally(record, turn_grades)
    total = JudgeTally()
    for tally in by_agent.values():
        total = total + tally
    correct = bool(final_answer(record, grader, truth).correct)
    return GradedDebate(turn_grades, finals, correct, total, by_agent)


def grade_samples(records: Sequence[DebateRecord], grader: Grader, answer: str) -> GradedDebate:
    """Grade ``k`` independent one-agent answers to one problem (direct evaluation) as one group:
    each sample's final answer, and the final answer chosen among them by the same rule as a
    debate's (without votes, ties go to the first sample)."""
    finals = [record.final_turn(0) for record in records]
    grades = tuple(_UNGRADED if turn is None else grade_turn(turn, answer, grader) for turn in finals)
    solutions = {i: turn.response.solution for i, turn in enumerate(finals) if turn is not None}
    correct = bool(choose_answer(solutions, grader, answer).correct)
    return GradedDebate(grades, grades, correct, JudgeTally(), {})


def verifiable_metrics(graded: Sequence[GradedDebate], prefix: str, k: int) -> dict[str, float]:
    """``{prefix}/format``, ``correct``, ``pass@k``, ``avg@k``, ``cons@k``, ``judge_accuracy``
    (docs/training.md#evaluation).

    ``correct_se`` is the standard error of ``correct`` with problems as the unit (the responses
    to one problem are not independent); ``judge_accuracy_se`` the binomial one over decidable votes.
    """
    if not graded:
        return {}
    responses = [g for d in graded for g in d.turn_grades]
    judge = JudgeTally()
    for d in graded:
        judge = judge + d.judge
    out = {
        f"{prefix}/format": mean([float(g.formatted) for g in responses]),
        f"{prefix}/correct": mean([float(g.correct) for g in responses]),
        f"{prefix}/correct_se": _clustered_standard_error(graded),
        f"{prefix}/pass@{k}": mean([d.pass_at_k for d in graded]),
        f"{prefix}/avg@{k}": mean([d.avg_at_k for d in graded]),
        f"{prefix}/cons@{k}": mean([d.cons_at_k for d in graded]),
        f"{prefix}/judge_decidable_votes": float(judge.decidable),
        f"{prefix}/judge_ties": float(judge.ties),
    }
    if judge.decidable:
        accuracy = judge.agreed / judge.decidable
        out[f"{prefix}/judge_accuracy"] = accuracy
        out[f"{prefix}/judge_accuracy_se"] = math.sqrt(accuracy * (1.0 - accuracy) / judge.decidable)
    return out


def _clustered_standard_error(graded: Sequence[GradedDebate]) -> float:
    """Standard error of the response-weighted mean correctness, clustered by problem."""
    total = sum(len(d.turn_grades) for d in graded)
    if len(graded) < 2 or total == 0:
        return 0.0
    overall = sum(float(g.correct) for d in graded for g in d.turn_grades) / total
    residuals = [sum(float(g.correct) - overall for g in d.turn_grades) for d in graded]
    n = len(graded)
    return math.sqrt(n / (n - 1) * sum(r * r for r in residuals)) / total
