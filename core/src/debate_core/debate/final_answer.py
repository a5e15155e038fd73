"""The debate's final answer: one rule, used by ``debate run`` and by evaluation's ``cons@k``.

The rule (docs/protocol.md#the-final-answer):

1. each agent's final solution is its latest turn that followed the output contract
   (``DebateRecord.final_turn``); an agent with none gives no answer;
2. solutions are grouped by the answer the grader extracts from them (``\\boxed{}`` with
   ``boxed``), or by their whitespace-normalised text when the grader extracts nothing or
   there is no grader;
3. the group held by the most agents wins; ties go to the larger summed peer-vote score of the
   group's agents over the whole debate (a win 1, a tie 1/2), then to the lowest agent id;
4. the final answer is correct when the grader accepts the winning group's first formatted
   solution (its first one when none is formatted) against the ground truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from debate_core.records import AgentVotes, DebateRecord, Grade, Grader, vote_counts


@attrs.frozen
class Candidate:
    """One distinct answer of the final vote."""

    answer: str
    agents: tuple[int, ...]
    vote_score: float
    solution: str


@attrs.frozen
class FinalAnswer:
    """The debate's answer: the winning candidate, every candidate, and (with a grader and a
    known ground truth) whether the answer is right."""

    answer: str | None
    solution: str | None
    candidates: tuple[Candidate, ...]
    correct: bool | None = None

    @property
    def support(self) -> int:
        """How many agents hold the final answer."""
        return len(self.candidates[0].agents) if self.candidates else 0


def normalise_solution(text: str) -> str:
    """A solution with runs of whitespace collapsed, for comparing solutions."""
    return " ".join(text.split())


def final_solutions(record: DebateRecord) -> dict[int, str]:
    """Each agent's final solution (``DebateRecord.final_turn``), for the agents that have one."""
    finals = {agent: record.final_turn(agent) for agent in range(record.num_agents)}
    return {agent: turn.response.solution for agent, turn in finals.items() if turn is not None}


def choose_answer(
    solutions: Mapping[int, str],
    grader: Grader | None = None,
    answer: str | None = None,
    vote_scores: Mapping[int, float] | None = None,
) -> FinalAnswer:
    """The majority answer of ``solutions`` (agent -> final solution) by the rule above; ties go to
    the larger summed ``vote_scores``, then to the lowest agent id. ``correct`` is set when both a
    grader and the ground truth ``answer`` are given."""
    scores = vote_scores or {}
    grades: dict[int, Grade | None] = {}
    groups: dict[str, list[int]] = {}
    for agent, solution in sorted(solutions.items()):
        grade = grader.grade(solution, answer or "") if grader is not None else None
        grades[agent] = grade
        extracted = grade.extracted if grade is not None else None
        key = normalise_solution(extracted if extracted is not None else solution)
        groups.setdefault(key, []).append(agent)
    candidates = sorted(
        (
            Candidate(
                key, tuple(agents), sum(scores.get(a, 0.0) for a in agents), _representative(agents, solutions, grades)
            )
            for key, agents in groups.items()
        ),
        key=lambda c: (-len(c.agents), -c.vote_score, c.agents[0]),
    )
    if not candidates:
        return FinalAnswer(None, None, ())
    best = candidates[0]
    correct = None
    if grader is not None and answer is not None:
        correct = grader.grade(best.solution, answer).correct
    return FinalAnswer(best.answer, best.solution, tuple(candidates), correct)


def _representative(agents: Sequence[int], solutions: Mapping[int, str], grades: Mapping[int, Grade | None]) -> str:
    """The group's first formatted solution, or its first one."""
    formatted = [a for a in agents if (grade := grades[a]) is not None and grade.formatted]
    return solutions[formatted[0] if formatted else agents[0]]


def final_answer(record: DebateRecord, grader: Grader | None = None, answer: str | None = None) -> FinalAnswer:
    """The debate's final answer by the rule above; ``answer`` (default: the record's) is the
    ground truth it is graded against."""
    scores = {t.agent: t.win_score for t in vote_counts(record)}
    truth = answer if answer is not None else record.answer
    return choose_answer(final_solutions(record), grader, truth, scores)


def format_vote_counts(counts: Sequence[AgentVotes]) -> list[str]:
    """One line per agent, for ``debate run``."""
    return [f"Agent {t.agent}: {t.wins} wins, {t.losses} losses, {t.ties} ties ({t.votes} votes)" for t in counts]
