"""How a figure and a change are stated (docs/training.md#reading-the-figures): the verdict follows
the declared direction, never below 20 observations, never for counts or undeclared metrics."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from debate_core.rundir.evaluation_figures import MIN_OBSERVATIONS, Figure, Paired, change_between, read_figure
from debate_core.rundir.metric_directions import METRICS, Direction, metric_facts, observation_count

NAMES = [
    "eval_d/direct/correct",
    "eval_d/debate/cons@3",
    "eval_d/debate/judge_accuracy",
    "eval_d/debate/parse_error",
    "eval_d/debate/right_to_wrong",
    "eval_d/debate/wrong_to_right",
    "eval_d/debate/judge_ties",
    "eval_d/debate/rounds_played",
    "eval_d/judge/accuracy",
    "eval_d/judge/flip_rate",
    "eval_d/judge/num_pairs",
    "eval_d/debate/consensus_accuracy",
]


@given(
    st.sampled_from(NAMES),
    st.floats(-1, 1, allow_nan=False),
    st.floats(0.001, 1, allow_nan=False),
    st.one_of(st.none(), st.integers(0, 500)),
)
def test_the_verdict_follows_the_declared_direction_and_needs_enough_observations(
    name: str, change: float, error: float, count: int | None
) -> None:
    facts = metric_facts(name)
    before = Figure(0.5, 0.1, count, facts)
    stated = change_between(before, before, Paired(change, error, count))
    few = count is not None and count < MIN_OBSERVATIONS
    if few or facts is None or facts.count or facts.better is None or change == 0:
        assert stated.verdict is None
    else:
        higher_is_better = facts.better is Direction.HIGHER
        assert stated.verdict == ("better" if (change > 0) == higher_is_better else "worse")
    assert (stated.ratio is None) == few
    assert ("SE," in stated.text()) == (not few and not (facts is not None and facts.count))


def test_the_registry_declares_the_issues_examples() -> None:
    """Parse errors going up is worse, right → wrong going down is better, judge accuracy counts
    its decidable votes, a debate's answer is a proportion over problems."""
    assert metric_facts("eval_d/debate/parse_error").better is Direction.LOWER  # type: ignore[union-attr]
    assert metric_facts("parse_error").better is Direction.LOWER  # type: ignore[union-attr]
    assert metric_facts("eval_d/debate/right_to_wrong").better is Direction.LOWER  # type: ignore[union-attr]
    assert metric_facts("eval_d/debate/rounds_played") is None
    metrics = {"eval_d/num_problems": 50.0, "eval_d/debate/judge_decidable_votes": 7.0}
    assert observation_count(metrics, "eval_d/debate/judge_accuracy") == 7
    assert observation_count(metrics, "eval_d/debate/cons@3") == 50
    assert observation_count({**metrics, "eval_d/debate/cons@3_n": 12}, "eval_d/debate/cons@3") == 12  # recorded
    assert observation_count(metrics, "eval_d/debate/rounds_played") is None
    assert len({facts.pattern for facts in METRICS}) == len(METRICS)  # one entry per pattern
    # the judge benchmark: accuracy split by the judge's own answer counts those judgements
    judged = {"eval_d/judge/own_wrong_judgements": 9.0, "eval_d/judge/num_pairs": 40.0}
    assert observation_count(judged, "eval_d/judge/accuracy_own_wrong") == 9
    assert observation_count(judged, "eval_d/judge/consistency") == 40
    assert metric_facts("eval_d/judge/tie_rate").better is Direction.LOWER  # type: ignore[union-attr]
    assert metric_facts("eval_d/judge/num_pairs").count  # type: ignore[union-attr]


def test_a_metric_the_registry_does_not_know_is_shown_with_its_se_and_without_colour() -> None:
    metrics = {"eval_d/judge/new_thing": 0.4, "eval_d/judge/new_thing_se": 0.05}
    figure = read_figure(metrics, "eval_d/judge/new_thing")
    assert figure is not None and figure.text() == "0.400 ± 0.050"
    later = read_figure({**metrics, "eval_d/judge/new_thing": 0.6}, "eval_d/judge/new_thing")
    assert later is not None
    change = change_between(figure, later)
    assert change.verdict is None and change.text() == f"+0.200 ± {math.hypot(0.05, 0.05):.3f} (+2.8 SE, independent)"
