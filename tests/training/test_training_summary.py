"""Standard errors of the evaluation metrics and the change line of the ``debate train`` summary."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.cli.train_cmd import format_changes
from debate_core.records import Grade
from debate_core.training.grading import GradedDebate, JudgeTally, verifiable_metrics

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


def test_change_line_reports_the_difference_in_standard_errors() -> None:
    evaluations = {
        "warmstart": {"e/direct/correct": 0.50, "e/direct/correct_se": 0.03, "e/direct/format": 0.99},
        "final": {"e/direct/correct": 0.65, "e/direct/correct_se": 0.04, "e/direct/format": 1.0},
    }
    lines = format_changes(evaluations)
    assert lines[0] == "change from warmstart to final:"
    assert lines[1] == "  direct/correct: 0.500 -> 0.650 (+0.150, unpaired SE 0.050, +3.0 SE)"
    assert len(lines) == 2
    assert format_changes({"final": evaluations["final"]}) == []


def test_change_line_is_paired_when_the_evaluation_recorded_it() -> None:
    evaluations = {
        "warmstart": {"e/direct/correct": 0.50, "e/direct/correct_se": 0.03},
        "final": {"e/direct/correct": 0.65, "e/direct/correct_se": 0.04, "e/direct/correct_change_se": 0.025},
    }
    assert format_changes(evaluations)[1] == "  direct/correct: 0.500 -> 0.650 (+0.150, paired SE 0.025, +6.0 SE)"
