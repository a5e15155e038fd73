"""Plausibly wrong solutions and what is wrong with a solution: the material of the
warm-start's judging lessons (docs/training.md#warm-start).

A dataset can know its task well enough to write a wrong solution a person would write and
to name the step a wrong solution got wrong (the arithmetic dataset does: a dropped carry, a
digit slip, an off-by-one). Every other dataset with answers gets :class:`AnswerFlaws`: the
reference solution with its final answer replaced by a wrong answer of the same form
(``65`` -> ``64``, ``3/4`` -> ``4/4``, ``B`` -> ``C``, or another problem's answer), and the
critique "the answer is X".
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records import Problem

_INTEGER = re.compile(r"^(-?)(\d+)$")
_DECIMAL = re.compile(r"^(-?\d*\.)(\d+)$")
_FRACTION = re.compile(r"^(-?\d+)/(\d+)$")
_LETTER = re.compile(r"^[A-Z]$")


@attrs.frozen
class FlawedSolution:
    """A wrong solution of one problem: its text, its final answer and the kind of slip."""

    text: str
    answer: str
    kind: str


@runtime_checkable
class SolutionFlaws(Protocol):
    """What a dataset offers the warm-start to write judging lessons (optional).

    ``flawed_solution`` writes a plausibly wrong solution (``None``: none for this problem);
    ``critique`` says in a few words what is wrong with a solution the grader rejected
    (``None``: nothing more specific than the right answer).
    """

    def flawed_solution(self, problem: Problem, rng: random.Random) -> FlawedSolution | None: ...

    def critique(self, problem: Problem, solution: str) -> str | None: ...


@runtime_checkable
class AnswerChecks(Protocol):
    """What a dataset offers judges that check a stated answer by themselves (optional).

    ``check_answer`` writes the check of ``stated`` as a judge would, ending in ``right`` or
    ``wrong``: for arithmetic the inverse operation worked column by column
    (``38+27: 8+7=15 5-5 same, 3+2+1=6 6-6 same: right`` for ``65-27``), so a judge can tell
    a right answer from a wrong one without solving the problem itself. ``None``: no check.
    """

    def check_answer(self, problem: Problem, stated: str) -> str | None: ...


def wrong_answer(answer: str, rng: random.Random, others: Sequence[str] = ()) -> str | None:
    """A wrong answer of the same form as ``answer``, or None when none can be made.

    Integers move by 1, 2 or 10 (staying non-negative when the answer is), decimals change
    their last digit, fractions their numerator, single capital letters (multiple choice)
    move to a neighbour; anything else is replaced by a different answer from ``others``.
    """
    text = answer.strip()
    if match := _INTEGER.match(text):
        sign, digits = match.groups()
        value = int(sign + digits)
        deltas = [d for d in (-10, -2, -1, 1, 2, 10) if sign or value + d >= 0]
        return str(value + rng.choice(deltas))
    if match := _DECIMAL.match(text):
        head, tail = match.groups()
        last = int(tail[-1])
        return f"{head}{tail[:-1]}{(last + rng.choice((1, 9))) % 10}"
    if match := _FRACTION.match(text):
        numerator, denominator = match.groups()
        return f"{int(numerator) + rng.choice((-1, 1))}/{denominator}"
    if _LETTER.match(text):
        return "B" if text == "A" else chr(ord(text) + rng.choice((-1, 1))) if text != "Z" else "Y"
    choices = sorted({o.strip() for o in others if o.strip() and o.strip() != text})
    return rng.choice(choices) if choices else None


FAR_DISTANCE = (11, 39)
"""How far (inclusive) a ``far`` wrong answer is from the right one."""


def far_answer(answer: str, rng: random.Random) -> str | None:
    """An integer answer moved by 11 to 39 either way (upwards when going down would make a
    non-negative answer negative); ``None`` for an answer that is not an integer."""
    text = answer.strip()
    if not _INTEGER.match(text):
        return None
    value, distance = int(text), rng.randint(*FAR_DISTANCE)
    down = rng.random() < 0.5 and (value < 0 or value - distance >= 0)
    return str(value - distance if down else value + distance)


def replace_final_answer(solution: str, answer: str, wrong: str) -> str | None:
    """``solution`` with its last occurrence of ``answer`` replaced by ``wrong`` (None when
    the answer does not occur in it)."""
    index = solution.rfind(answer)
    if index < 0 or not answer:
        return None
    return solution[:index] + wrong + solution[index + len(answer) :]


@attrs.frozen
class AnswerFlaws:
    """The flaws of any dataset with answers: the right solution with a wrong final answer."""

    answers: tuple[str, ...] = ()
    """Answers of other problems, for answers with no numeric or letter form."""

    def flawed_solution(self, problem: Problem, rng: random.Random, reference: str) -> FlawedSolution | None:
        """``reference`` (the problem's correct solution) with a wrong final answer."""
        if problem.answer is None:
            return None
        wrong = wrong_answer(problem.answer, rng, self.answers)
        if wrong is None:
            return None
        text = replace_final_answer(reference, problem.answer, wrong)
        return None if text is None else FlawedSolution(text, wrong, "wrong_answer")

    def critique(self, problem: Problem, solution: str) -> str | None:
        return None
