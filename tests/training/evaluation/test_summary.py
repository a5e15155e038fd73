"""Standard errors of the evaluation metrics, and how ``debate eval`` states each figure."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.records import Grade
from debate_core.training.correctness import GradedDebate, JudgeTally, verifiable_metrics

RIGHT, WRONG = Grade(True, True, "7"), Grade(True, False, "8")


def debate(*correct: bool, judge: JudgeTally | None = None) -> GradedDebate:
    grades = tuple(RIGHT if c else WRONG for c in correct)
    return GradedDebate(grades, grades, False, judge or JudgeTally(), {})  # the final answer is not used here


def test_one_response_per_problem_gives_the_binomial_standard_error_with_small_sample_factor() -> None:
    graded = [debate(True), debate(False), debate(True), debate(True)]
    metrics = verifiable_metrics(graded, "x", 1)
    p, n = 0.75, 4
    assert metrics["x/correct"] == p
    assert metrics["x/correct_se"] == pytest.approx(math.sqrt(p * (1 - p) / (n - 1)))


def test_responses_of_one_problem_count_as_one_unit() -> None:
    # every problem answered all right or all wrong: 3 responses carry the information of one
    clustered = verifiable_metrics([debate(True, True, True), debate(False, False, False)] * 5, "x", 3)
    single = verifiable_metrics([debate(True), debate(False)] * 5, "x", 1)
    assert clustered["x/correct_se"] == pytest.approx(single["x/correct_se"])


def test_judge_accuracy_has_its_binomial_standard_error() -> None:
    metrics = verifiable_metrics([debate(True, judge=JudgeTally(decidable=10, agreed=8, ties=0))], "x", 1)
    assert metrics["x/judge_accuracy"] == 0.8
    assert metrics["x/judge_accuracy_se"] == pytest.approx(math.sqrt(0.8 * 0.2 / 10))


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=2, max_size=30))
def test_standard_error_is_finite_and_zero_only_without_spread(problems: list[list[bool]]) -> None:
    metrics = verifiable_metrics([debate(*c) for c in problems], "x", 4)
    se = metrics["x/correct_se"]
    assert math.isfinite(se) and se >= 0.0
    means = [sum(c) / len(c) for c in problems]
    assert (se == 0.0) == all(m == means[0] for m in means), means  # problems are the unit


def answers(*extracted: str | None, right: str = "7") -> GradedDebate:
    grades = tuple(Grade(e is not None, e == right, e) for e in extracted)
    return GradedDebate(grades, grades, False, JudgeTally(), {})


def test_wrong_mode_share_is_the_most_common_wrong_answers_share_averaged_over_problems() -> None:
    # problem 1: 8 twice of 4 (0.5); problem 2: 9 and 5 once each of 4 (0.25); problem 3: all right (0);
    # an unreadable answer is no wrong answer to share
    graded = [answers("8", "8", "7", "9"), answers("9", "5", None, "7"), answers("7", "7", "7", "7")]
    assert verifiable_metrics(graded, "x", 4)["x/wrong_mode_share"] == pytest.approx((0.5 + 0.25 + 0.0) / 3)


@given(st.lists(st.lists(st.sampled_from(["7", "8", "9", None]), min_size=1, max_size=5), min_size=1, max_size=20))
def test_wrong_mode_share_lies_between_the_scattered_and_the_shared_mistake(problems: list[list[str | None]]) -> None:
    graded = [answers(*p) for p in problems]
    metrics = verifiable_metrics(graded, "x", 5)
    share, wrong = metrics["x/wrong_mode_share"], 1.0 - metrics["x/correct"]
    any_readable_wrong = any(e not in (None, "7") for p in problems for e in p)
    assert 0.0 <= share <= wrong + 1e-12  # at most every wrong answer agrees
    assert (share == 0.0) == (not any_readable_wrong)


def test_debate_eval_prints_each_figure_with_its_interval_or_count_and_its_se_on_the_same_line() -> None:
    from debate_core.cli.eval_cmd import format_metrics

    metrics = {
        "e/num_problems": 50.0,
        "e/direct/correct": 0.62,
        "e/direct/correct_se": 0.05,
        "e/debate/cons@3": 0.7,
        "e/debate/cons@3_se": 0.065,
        "e/debate/judge_accuracy": 1.0,
        "e/debate/judge_accuracy_se": 0.0,
        "e/debate/judge_decidable_votes": 4.0,
    }
    lines = [" ".join(line.split()) for line in format_metrics(metrics)]
    assert lines == [
        "e/num_problems 50",
        "e/direct/correct 0.620 ± 0.050",
        "e/debate/cons@3 0.700 [0.562, 0.809] (n=50)",
        "e/debate/judge_accuracy 1.000 [0.510, 1.000] (n=4)",
        "e/debate/judge_decidable_votes 4",
    ]


def test_the_wilson_interval_matches_its_textbook_values() -> None:
    from debate_core.stats import wilson_interval

    # 12 of 30 (Newcombe 1998's method 3 gives 0.2459 to 0.5768); 4 of 4 and 0 of 10 stay off the bound
    assert wilson_interval(0.4, 30) == pytest.approx((0.2459, 0.5768), abs=5e-5)
    assert wilson_interval(1.0, 4) == pytest.approx((0.5101, 1.0), abs=5e-5)
    assert wilson_interval(0.0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)
    assert wilson_interval(0.5, 0) == (0.0, 1.0)


@given(st.integers(1, 10_000), st.data())
def test_the_wilson_interval_holds_the_proportion_inside_zero_to_one_and_narrows_with_more_trials(
    count: int, data: st.DataObject
) -> None:
    from debate_core.stats import wilson_interval

    successes = data.draw(st.integers(0, count))
    p = successes / count
    low, high = wilson_interval(p, count)
    assert 0.0 <= low <= p <= high <= 1.0
    assert high - low > 0  # never a point, even at 0 or 1
    wider = wilson_interval(p, count * 4)
    assert wider[1] - wider[0] < high - low
