"""A seeded generator of verifiable arithmetic problems with difficulty levels (the embedded task).

The test split is drawn first, without repeats; the train split is drawn from a separate
stream and never contains a test question, so held-out accuracy is measured on unseen
problems. The same options always give the same problems.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

import attrs
from attrs import validators as v

from debate_core.errors import ConfigError
from debate_core.records import Problem
from debate_core.tasks.flaws import FlawedSolution
from debate_core.tasks.splits import check_split
from debate_core.tasks.worked_solutions import (
    EXTRA_SLIPS,
    SLIPS,
    Slip,
    available_slips,
    first_wrong_step,
    flawed_worked_solution,
    inverse_check,
    worked_solution,
)

Operation = Literal["+", "-", "*"]


@attrs.frozen
class Level:
    """One difficulty level: the operations and the operand ranges (inclusive)."""

    description: str
    operations: tuple[Operation, ...]
    left: tuple[int, int]
    right: tuple[int, int]

    def size(self) -> int:
        """How many distinct problems the level has (subtraction keeps results non-negative)."""
        lo, hi = self.right
        total = 0
        for op in self.operations:
            for a in range(self.left[0], self.left[1] + 1):
                total += max(0, min(hi, a) - lo + 1) if op == "-" else hi - lo + 1
        return total

    def draw(self, rng: random.Random) -> tuple[int, Operation, int]:
        """One problem ``(a, op, b)``; for ``-`` the right operand is at most the left one."""
        op = rng.choice(self.operations)
        a = rng.randint(*self.left)
        if op == "-":
            a = max(a, self.right[0])
            return a, op, rng.randint(self.right[0], min(self.right[1], a))
        return a, op, rng.randint(*self.right)


LEVELS: dict[int, Level] = {
    1: Level("one-digit addition", ("+",), (0, 9), (0, 9)),
    2: Level("two-digit plus one-digit addition", ("+",), (10, 99), (0, 9)),
    3: Level("two-digit addition", ("+",), (10, 99), (10, 99)),
    4: Level("two-digit addition and subtraction", ("+", "-"), (10, 99), (10, 99)),
    5: Level("three-digit addition and subtraction", ("+", "-"), (100, 999), (100, 999)),
    6: Level("two-digit times one-digit multiplication", ("*",), (10, 99), (2, 9)),
    7: Level("two-digit subtraction", ("-",), (10, 99), (10, 99)),
    8: Level("three-digit subtraction", ("-",), (100, 999), (100, 999)),
}
"""Difficulty levels, easiest first."""


def _check_difficulty(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value not in LEVELS:
        listing = "; ".join(f"{k}: {level.description}" for k, level in LEVELS.items())
        raise ValueError(f"'{attribute.name}' must be one of the levels {listing}; got {value!r}")


def _check_slips(instance: object, attribute: attrs.Attribute[tuple[Slip, ...]], value: tuple[Slip, ...]) -> None:
    known = SLIPS + EXTRA_SLIPS
    unknown = [s for s in value if s not in known]
    if unknown or not value or len(set(value)) != len(value):
        raise ValueError(f"'{attribute.name}' must be distinct slips out of {', '.join(known)}; got {list(value)!r}")


@attrs.frozen(kw_only=True)
class ArithmeticOptions:
    """Options of the ``arithmetic`` dataset."""

    difficulty: int = attrs.field(default=2, validator=_check_difficulty)
    """1 (one-digit addition) to 6 (two-digit times one-digit); see ``LEVELS``."""
    num_train: int = attrs.field(default=1000, validator=v.ge(1))
    num_test: int = attrs.field(default=200, validator=v.ge(0))
    seed: int = 0
    worked_solutions: bool = True
    """Give each problem a column-by-column worked solution (``metadata["solution"]``), the
    reference text of the warm-start; ``false`` leaves the warm-start to its template."""
    slips: tuple[Slip, ...] = attrs.field(default=SLIPS, validator=_check_slips)
    """The slips the warm-start's wrong first answers are drawn from (docs/datasets.md#worked-solutions):
    ``dropped_carry``, ``digit_slip``, ``off_by_one`` and, on request, ``digit_error`` (a column's
    digit replaced by any other)."""


def _answer(a: int, op: Operation, b: int) -> int:
    return a + b if op == "+" else a - b if op == "-" else a * b


def question_text(a: int, op: Operation, b: int) -> str:
    """The question as the agents read it (no spaces around the operator; see ``worked_solutions``)."""
    return f"What is {a}{op}{b}?"


def make_problem(a: int, op: Operation, b: int, problem_id: str, difficulty: int, *, worked: bool = False) -> Problem:
    """A ``Problem`` with its exact integer answer (and its worked solution when ``worked``)."""
    metadata = {"difficulty": str(difficulty), "a": str(a), "op": op, "b": str(b)}
    solution = worked_solution(a, op, b) if worked else None
    if solution is not None:
        metadata["solution"] = solution
    return Problem(id=problem_id, question=question_text(a, op, b), answer=str(_answer(a, op, b)), metadata=metadata)


def generate(
    difficulty: int,
    count: int,
    rng: random.Random,
    *,
    exclude: frozenset[str] = frozenset(),
    unique: bool = False,
    prefix: str = "arithmetic",
    worked: bool = False,
) -> list[Problem]:
    """``count`` problems of a level from ``rng``, skipping questions in ``exclude``
    (and repeats when ``unique``). The caller makes sure enough distinct problems exist."""
    level = LEVELS[difficulty]
    seen: set[str] = set()
    out: list[Problem] = []
    while len(out) < count:
        a, op, b = level.draw(rng)
        text = question_text(a, op, b)
        if text in exclude or (unique and text in seen):
            continue
        seen.add(text)
        out.append(make_problem(a, op, b, f"{prefix}-{len(out):05d}", difficulty, worked=worked))
    return out


class ArithmeticDataset:
    """Seeded arithmetic problems: a unique test split and a train split disjoint from it."""

    def __init__(self, options: ArithmeticOptions | None = None) -> None:
        self.options = o = options or ArithmeticOptions()
        level = LEVELS[o.difficulty]
        if 2 * o.num_test > level.size():
            raise ConfigError(
                f"dataset.options.num_test: difficulty {o.difficulty} ({level.description}) has only "
                f"{level.size()} distinct problems; ask for at most {level.size() // 2} test problems"
            )
        self._cache: dict[str, tuple[Problem, ...]] = {}

    def problems(self, split: str) -> Sequence[Problem]:
        check_split(split, "arithmetic dataset")
        if split not in self._cache:
            o = self.options
            prefix = f"arithmetic-d{o.difficulty}"
            test = generate(
                o.difficulty,
                o.num_test,
                random.Random(f"{o.seed}:test"),
                unique=True,
                prefix=f"{prefix}-test",
                worked=o.worked_solutions,
            )
            self._cache["test"] = tuple(test)
            held_out = frozenset(p.question for p in test)
            train = generate(
                o.difficulty,
                o.num_train,
                random.Random(f"{o.seed}:train"),
                exclude=held_out,
                prefix=f"{prefix}-train",
                worked=o.worked_solutions,
            )
            self._cache["train"] = tuple(train)
        return self._cache[split]

    def flawed_solution(self, problem: Problem, rng: random.Random) -> FlawedSolution | None:
        """A worked solution with one typical slip (``worked_solutions.SLIPS``); None without
        worked solutions or for a problem no slip can make wrong."""
        operands = _operands(problem)
        if operands is None or not self.options.worked_solutions:
            return None
        slips = available_slips(*operands, self.options.slips)
        if not slips:
            return None
        slip = rng.choice(slips)
        text = flawed_worked_solution(*operands, slip, rng.randrange(1 << 16))
        if text is None:
            return None
        return FlawedSolution(text, text.rsplit("{", 1)[1].split("}", 1)[0], slip)

    def critique(self, problem: Problem, solution: str) -> str | None:
        """The correct text of the first column a wrong solution got wrong (``7+8=15``)."""
        operands = _operands(problem)
        return None if operands is None else first_wrong_step(*operands, solution)

    def check_answer(self, problem: Problem, stated: str) -> str | None:
        """A stated answer checked by the inverse operation (``38+27: 8+7=15 5-5 same, 3+2+1=6
        6-6 same: right`` for ``65-27``), or None when it has no such check (a product, an
        answer that is not a whole number)."""
        operands = _operands(problem)
        text = stated.strip()
        if operands is None or not text.isdigit():
            return None
        return inverse_check(*operands, int(text))

    def __repr__(self) -> str:
        return f"ArithmeticDataset({self.options!r})"


def _operands(problem: Problem) -> tuple[int, str, int] | None:
    """``(a, op, b)`` of a problem this dataset made, from its metadata."""
    meta = problem.metadata
    try:
        return int(meta["a"]), meta["op"], int(meta["b"])
    except (KeyError, ValueError):
        return None
