"""Worked solutions: every written step is true arithmetic and the boxed answer is the result."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from debate_core.tasks.answers import extract_last_boxed as last_boxed
from debate_core.tasks.arithmetic import ArithmeticDataset, ArithmeticOptions
from debate_core.tasks.worked_solutions import worked_solution

STEP = re.compile(r"^(\d+(?:[-+*]\d+)+)=(\d+)$")


def steps_of(solution: str) -> list[str]:
    body = solution.split(". The answer is", 1)[0]
    return body.split(": ", 1)[1].split(", ")


def check_steps(solution: str) -> None:
    for step in steps_of(solution):
        match = STEP.match(step)
        assert match, step
        assert eval(match.group(1)) == int(match.group(2)), step


@given(st.integers(0, 99_999), st.integers(0, 99_999))
def test_addition_steps_and_answer(a: int, b: int) -> None:
    solution = worked_solution(a, "+", b)
    assert solution is not None and last_boxed(solution) == str(a + b)
    check_steps(solution)
    assert len(steps_of(solution)) == max(len(str(a)), len(str(b)))


@given(st.integers(0, 99_999), st.integers(0, 99_999))
def test_subtraction_steps_and_answer(a: int, b: int) -> None:
    a, b = max(a, b), min(a, b)
    solution = worked_solution(a, "-", b)
    assert solution is not None and last_boxed(solution) == str(a - b)
    check_steps(solution)


@given(st.integers(0, 99_999), st.integers(0, 9))
def test_multiplication_by_one_digit(a: int, b: int) -> None:
    solution = worked_solution(a, "*", b)
    assert solution is not None and last_boxed(solution) == str(a * b)
    check_steps(solution)


def test_the_columns_carry_and_borrow_as_taught() -> None:
    assert worked_solution(57, "+", 8) == "57+8: 7+8=15, 5+0+1=6. The answer is \\boxed{65}."
    assert worked_solution(57, "-", 8) == "57-8: 17-8=9, 5-1-0=4. The answer is \\boxed{49}."
    assert worked_solution(57, "*", 8) == "57*8: 7*8=56, 5*8+5=45. The answer is \\boxed{456}."


def test_no_worked_solution_where_the_method_does_not_apply() -> None:
    assert worked_solution(3, "-", 8) is None
    assert worked_solution(12, "*", 34) is None
    assert worked_solution(-1, "+", 2) is None


def test_the_dataset_attaches_them_unless_asked_not_to() -> None:
    with_solutions = ArithmeticDataset(ArithmeticOptions(difficulty=4, num_train=50, num_test=10))
    for problem in with_solutions.problems("train"):
        assert problem.metadata is not None
        assert last_boxed(problem.metadata["solution"]) == problem.answer
    plain = ArithmeticDataset(ArithmeticOptions(difficulty=4, num_train=50, num_test=10, worked_solutions=False))
    assert all("solution" not in (p.metadata or {}) for p in plain.problems("test"))
