"""The answer of a debate at test time, and the vote tally printed beside it.

Final answer: a majority vote over each agent's latest valid solution (the last round's
solutions when the debate finished; an agent whose last turn failed counts with its
previous one). Solutions are compared after whitespace normalisation, or by the answer a
grader extracts from them when a grader is given. Ties are broken by peer votes: the
candidates' summed wins over the whole debate (``a > b`` is a win for ``a``, ``a = b`` half
a win for each), then by the lowest agent id holding the candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from debate_core.records import DebateRecord, Grader


@attrs.frozen
class AgentTally:
    """The valid votes about one agent over a whole debate."""

    agent: int
    wins: int = 0
    losses: int = 0
    ties: int = 0

    @property
    def votes(self) -> int:
        """Valid comparisons that involve the agent."""
        return self.wins + self.losses + self.ties

    @property
    def win_score(self) -> float:
        """Wins plus half the ties."""
        return self.wins + 0.5 * self.ties


def vote_tally(record: DebateRecord) -> tuple[AgentTally, ...]:
    """Wins, losses and ties of every agent from the debate's valid comparisons."""
    counts = {i: [0, 0, 0] for i in range(record.num_agents)}
    for vote in record.votes():
        if vote.op == ">":
            counts[vote.a][0] += 1
            counts[vote.b][1] += 1
        else:
            counts[vote.a][2] += 1
            counts[vote.b][2] += 1
    return tuple(AgentTally(i, *counts[i]) for i in range(record.num_agents))


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


def latest_solutions(record: DebateRecord) -> dict[int, str]:
    """Each agent's latest solution from a turn that followed the contract."""
    latest: dict[int, str] = {}
    for turn in record.turns:
        if not turn.failed:
            latest[turn.agent] = turn.response.solution
    return latest


def final_answer(record: DebateRecord, grader: Grader | None = None) -> FinalAnswer:
    """The majority answer of the agents' latest solutions, ties broken by peer votes."""
    scores = {t.agent: t.win_score for t in vote_tally(record)}
    groups: dict[str, list[tuple[int, str]]] = {}
    for agent, solution in sorted(latest_solutions(record).items()):
        key = normalise_solution(solution)
        if grader is not None:
            extracted = grader.grade(solution, record.answer or "").extracted
            if extracted is not None:
                key = normalise_solution(extracted)
        groups.setdefault(key, []).append((agent, solution))
    candidates = sorted(
        (
            Candidate(key, tuple(a for a, _ in members), sum(scores[a] for a, _ in members), members[0][1])
            for key, members in groups.items()
        ),
        key=lambda c: (-len(c.agents), -c.vote_score, c.agents[0]),
    )
    if not candidates:
        return FinalAnswer(None, None, ())
    best = candidates[0]
    correct = None
    if grader is not None and record.answer is not None:
        correct = grader.grade(best.solution, record.answer).correct
    return FinalAnswer(best.answer, best.solution, tuple(candidates), correct)


def format_tally(tally: Sequence[AgentTally]) -> list[str]:
    """One line per agent, for ``debate run``."""
    return [f"Agent {t.agent}: {t.wins} wins, {t.losses} losses, {t.ties} ties ({t.votes} votes)" for t in tally]
