"""Wrong answers of the same form for any dataset with answers (docs/training.md, "warm-start")."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from debate_core.records import Problem
from debate_core.tasks.flaws import AnswerFlaws, replace_final_answer, wrong_answer


@given(st.integers(-10_000, 10_000), st.integers(0, 1000))
def test_integers_stay_integers_and_change(value: int, seed: int) -> None:
    wrong = wrong_answer(str(value), random.Random(seed))
    assert wrong is not None and wrong != str(value)
    assert int(wrong) != value and abs(int(wrong) - value) in (1, 2, 10)
    if value >= 0:
        assert int(wrong) >= 0


def test_other_forms() -> None:
    rng = random.Random(1)
    decimal = wrong_answer("3.25", rng)
    assert decimal is not None and decimal.startswith("3.2") and decimal != "3.25"
    fraction = wrong_answer("3/4", rng)
    assert fraction in ("2/4", "4/4")
    assert wrong_answer("A", rng) == "B"
    assert wrong_answer("C", rng) in ("B", "D")
    assert wrong_answer("Paris", rng, ["Paris", "Rome"]) == "Rome"
    assert wrong_answer("Paris", rng, ["Paris"]) is None


def test_the_final_answer_is_replaced_at_its_last_occurrence() -> None:
    assert replace_final_answer("12 apples, 12+3=15. #### 15", "15", "16") == "12 apples, 12+3=15. #### 16"
    assert replace_final_answer("no answer here", "15", "16") is None


def test_a_flawed_template_solution() -> None:
    flaws = AnswerFlaws(("7", "9"))
    problem = Problem("p", "What is 3+4?", "7")
    flawed = flaws.flawed_solution(problem, random.Random(0), "The answer is \\boxed{7}.")
    assert flawed is not None and flawed.kind == "wrong_answer" and flawed.answer != "7"
    assert flawed.text == f"The answer is \\boxed{{{flawed.answer}}}."
    assert flaws.flawed_solution(Problem("q", "open question"), random.Random(0), "text") is None
