"""The debate's answer: what an answer rule returns, and the interface of an answer rule.

An answer rule turns a finished debate into one answer (docs/answer-rules.md). It reads the
debate's turns and votes and groups solutions by the answer an :data:`AnswerReader` reads in them:
the run's grader's reading (the ``boxed`` grader's ``\\boxed{}``) or, for a reward that has no
grader, the reward's own reader. It never sees the ground truth: whether the chosen answer is right is graded
afterwards, by whoever holds the truth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import attrs

from debate_core.records.debate import DebateRecord

AnswerReader = Callable[[str], str | None]
"""Reads the final answer of a solution text (``None``: no answer can be read there). Solutions
with equal answers give the same answer; a solution with none is grouped by its text, runs of
whitespace collapsed (docs/answer-rules.md#what-every-rule-shares)."""


@attrs.frozen
class Candidate:
    """One distinct answer of a debate, as a rule weighed it.

    Attributes:
        answer: the answer (what the reader reads in its solutions, else their normalised text).
        agents: the agents whose counted solutions hold it, in id order.
        score: the votes the rule weighed it by: for ``majority`` the summed peer-vote score of
            its agents (which breaks ties of ``len(agents)``), for the vote rules its vote score.
        solution: the solution that stands for it (graded against the ground truth).
    """

    answer: str
    agents: tuple[int, ...]
    score: float
    solution: str


@attrs.frozen
class DebateAnswer:
    """A debate's answer under one rule: the winning candidate first, then every other one.

    ``correct`` is set by whoever grades the answer against a known ground truth; ``fallback``
    names the rule that decided when this one could not (a vote rule on a debate with no vote).
    """

    rule: str
    answer: str | None
    solution: str | None
    candidates: tuple[Candidate, ...]
    correct: bool | None = None
    fallback: str | None = None

    @property
    def support(self) -> int:
        """How many agents hold the chosen answer."""
        return len(self.candidates[0].agents) if self.candidates else 0


def normalise_solution(text: str) -> str:
    """A solution with runs of whitespace collapsed, for comparing solutions."""
    return " ".join(text.split())


def answer_of(solution: str, read_answer: AnswerReader) -> tuple[str, bool]:
    """The answer a solution gives and whether the reader read it: the reader's answer, else the
    solution's normalised text (docs/answer-rules.md#what-every-rule-shares)."""
    read = read_answer(solution)
    return (normalise_solution(read), True) if read is not None else (normalise_solution(solution), False)


class AnswerRule(Protocol):
    """Turns a finished debate into its answer. Must be deterministic, must not read the ground
    truth, and must not raise on any debate the coordinators can produce (no comparisons, every
    turn failing to parse: the answer is then ``None``). A complete rule plugin is the example of
    the ``debate_answer_rules`` hook (``debate_core.plugin``).
    """

    def __call__(self, debate: DebateRecord, read_answer: AnswerReader) -> DebateAnswer: ...
