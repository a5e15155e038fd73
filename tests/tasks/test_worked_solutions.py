"""Worked solutions: every written step is true arithmetic and the boxed answer is the result."""

from __future__ import annotations

import random
import re

from hypothesis import given
from hypothesis import strategies as st

from debate_core.tasks.answers import extract_last_boxed as last_boxed
from debate_core.tasks.arithmetic import ArithmeticDataset, ArithmeticOptions
from debate_core.tasks.worked_solutions import (
    SLIPS,
    Slip,
    available_slips,
    first_wrong_step,
    flawed_worked_solution,
    inverse_check,
    worked_solution,
)

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


operations = st.sampled_from(["+", "-", "*"])


@given(st.integers(0, 9_999), st.integers(0, 9), operations, st.sampled_from(SLIPS), st.integers(0, 10))
def test_every_slip_gives_a_wrong_answer_in_the_same_form(a: int, b: int, op: str, slip: Slip, choice: int) -> None:
    right = worked_solution(a, op, b)
    flawed = flawed_worked_solution(a, op, b, slip, choice)
    if right is None or slip not in available_slips(a, op, b):
        assert flawed is None
        return
    assert flawed is not None and flawed != right
    answer = last_boxed(flawed)
    assert answer is not None and answer.isdigit() and answer != last_boxed(right)
    assert flawed.startswith(f"{a}{op}{b}: ") and flawed.endswith("}.")


def test_the_slips_a_person_makes_by_hand() -> None:
    # the carry of 7+8 forgotten in the tens; the units off by one; the read-back off by one
    assert flawed_worked_solution(57, "+", 8, "dropped_carry") == "57+8: 7+8=15, 5+0=5. The answer is \\boxed{55}."
    assert flawed_worked_solution(57, "+", 8, "digit_slip") == "57+8: 7+8=16, 5+0+1=6. The answer is \\boxed{66}."
    assert flawed_worked_solution(57, "+", 8, "off_by_one") == "57+8: 7+8=15, 5+0+1=6. The answer is \\boxed{64}."
    # a borrow taken but never paid back
    assert flawed_worked_solution(52, "-", 8, "dropped_carry") == "52-8: 12-8=4, 5-0=5. The answer is \\boxed{54}."
    # no carry in 12+3, so no carry to drop
    assert "dropped_carry" not in available_slips(12, "+", 3)


def test_the_critique_names_the_first_wrong_column() -> None:
    assert first_wrong_step(57, "+", 8, "57+8: 7+8=15, 5+0=5. The answer is \\boxed{55}.") == "5+0+1=6"
    assert first_wrong_step(57, "+", 8, "57+8: 7+8=16, 5+0+1=6. The answer is \\boxed{66}.") == "7+8=15"
    assert first_wrong_step(57, "+", 8, "The answer is \\boxed{64}.") == "7+8=15"
    assert first_wrong_step(57, "+", 8, "57+8: 7+8=15, 5+0+1=6. The answer is \\boxed{64}.") is None


def test_the_dataset_writes_flawed_solutions_and_critiques() -> None:
    dataset = ArithmeticDataset(ArithmeticOptions(difficulty=4, num_train=40, num_test=10))
    rng = random.Random(0)
    kinds = set()
    for problem in dataset.problems("train"):
        flawed = dataset.flawed_solution(problem, rng)
        assert flawed is not None and flawed.answer != problem.answer
        assert last_boxed(flawed.text) == flawed.answer
        kinds.add(flawed.kind)
        if flawed.kind != "off_by_one":
            assert dataset.critique(problem, flawed.text) is not None
    assert kinds == set(SLIPS)
    plain = ArithmeticDataset(ArithmeticOptions(difficulty=4, num_train=5, num_test=1, worked_solutions=False))
    assert plain.flawed_solution(plain.problems("train")[0], rng) is None


@given(st.integers(10, 999), st.integers(0, 999), st.integers(0, 1200))
def test_an_inverse_check_is_right_exactly_for_the_right_answer(a: int, b: int, stated: int) -> None:
    for op, right in (("-", a - b), ("+", a + b)):
        if right < 0:
            continue
        question_left = a
        check = inverse_check(question_left, op, b, stated)
        if op == "+" and stated < b:
            assert check is None  # no worked form for a negative difference
            continue
        assert check is not None
        assert check.endswith(": right" if stated == right else ": wrong")
        assert check.startswith(f"{stated}{'+' if op == '-' else '-'}{b}: ")


def test_a_product_has_no_inverse_check() -> None:
    assert inverse_check(56, "*", 7, 8) is None


@given(st.integers(10, 999), st.integers(0, 999), st.integers(0, 2000))
def test_each_place_of_an_inverse_check_compares_the_two_digits_it_writes(a: int, b: int, stated: int) -> None:
    check = inverse_check(a, "-", b, stated)
    assert check is not None
    pairs = re.findall(r"(\d|_)-(\d|_) (same|differ)", check)
    assert pairs
    for left, right, word in pairs:
        assert word == ("same" if left == right else "differ")
    assert "".join(right for _, right, _ in reversed(pairs)).lstrip("_") == str(a)


@given(st.integers(0, 9_999), st.integers(0, 9), operations, st.integers(0, 200))
def test_a_digit_error_changes_one_column_digit_to_any_other(a: int, b: int, op: str, choice: int) -> None:
    # docs/datasets.md#worked-solutions: digit_error replaces one column's digit by any other
    right = worked_solution(a, op, b)
    flawed = flawed_worked_solution(a, op, b, "digit_error", choice)
    if right is None:
        assert flawed is None
        return
    assert flawed is not None and last_boxed(flawed) != last_boxed(right)
    changed = [(r, f) for r, f in zip(steps_of(right), steps_of(flawed), strict=True) if r != f]
    assert len(changed) == 1
    ((r, f),) = changed
    assert r.split("=")[0] == f.split("=")[0] and int(r.split("=")[1]) // 10 == int(f.split("=")[1]) // 10


def test_digit_errors_reach_every_other_digit_and_are_drawn_only_when_asked() -> None:
    wrong_units = {flawed_worked_solution(40, "+", 3, "digit_error", c).split("0+3=")[1][0] for c in range(0, 40, 2)}
    assert wrong_units == set("012456789")  # 0+3=3 written as each of the nine other digits
    problems = ArithmeticDataset(ArithmeticOptions(difficulty=7, num_train=50)).problems("train")
    default = ArithmeticDataset(ArithmeticOptions(difficulty=7, num_train=50))
    asked = ArithmeticDataset(ArithmeticOptions(difficulty=7, num_train=50, slips=("digit_error",)))
    rng = random.Random(0)
    assert all(f is None or f.kind in SLIPS for f in (default.flawed_solution(p, rng) for p in problems))
    assert {f.kind for f in (asked.flawed_solution(p, rng) for p in problems) if f} == {"digit_error"}
