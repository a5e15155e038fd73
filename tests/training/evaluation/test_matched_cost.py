"""Self-consistency at the debate's cost (docs/answer-rules.md#at-the-same-cost)."""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.plugin import Registry
from debate_core.tasks.graders import build_boxed
from debate_core.testing import build_debate
from debate_core.training.evaluation.evaluator import evaluate_policy
from debate_core.training.evaluation.matched_cost import matched_voting, samples_at_cost
from tests.training.evaluation.test_evaluation import answer
from tests.training.trainer_harness import make_config


@given(st.floats(0.0, 10_000.0), st.floats(0.5, 500.0))
def test_voting_gets_the_fewest_samples_that_reach_the_debates_tokens(debate: float, per_sample: float) -> None:
    k = samples_at_cost(debate, per_sample)
    assert k >= 1
    assert k * per_sample >= debate - 1e-6 * max(1.0, debate)  # never fewer tokens than the debate
    if k > 1:
        assert (k - 1) * per_sample < debate + 1e-6 * max(1.0, debate)  # and no more samples than that


def test_samples_at_cost_by_hand() -> None:
    assert samples_at_cost(782.3, 72.5) == 11  # the main job after RL: 10.8 samples' worth
    assert samples_at_cost(725.0, 72.5) == 10  # exactly ten
    assert samples_at_cost(10.0, 72.5) == 1
    with pytest.raises(ValueError, match="must cost some tokens"):
        samples_at_cost(100.0, 0.0)


def _samples(*boxed: str):  # type: ignore[no-untyped-def]
    return build_debate([answer(f"\\boxed{{{b}}}") for b in boxed], num_agents=len(boxed), answer="7").turns


def test_the_majority_of_the_first_k_samples_beside_the_debate_by_hand() -> None:
    grader = build_boxed(None)
    samples = [
        _samples("7", "8", "8", "7"),  # first 3: 8 wins (wrong); all 4: a tie, to the earliest (7, right)
        _samples("8", "7", "7", "8"),  # first 3: 7 (right)
        _samples("7", "7", "7", "7"),  # right
    ]
    voting = matched_voting(samples, ["7", "7", "7"], [1.0, 0.0, 1.0], 3, grader)
    assert voting.cons == (0.0, 1.0, 1.0)
    metrics = voting.metrics("e", "debate")
    assert metrics["e/debate/cons_matched"] == pytest.approx(2 / 3)
    assert metrics["e/debate/cons_matched_k"] == 3.0
    assert metrics["e/debate_minus_cons_matched"] == pytest.approx(0.0)  # +1, -1, 0
    assert metrics["e/debate_minus_cons_matched_se"] == pytest.approx(math.sqrt(1.0 / 3.0))
    assert voting.per_problem("e", "debate")["e/debate_minus_cons_matched"] == [1.0, -1.0, 0.0]
    assert matched_voting(samples, ["7", "7", "7"], [1.0, 0.0, 1.0], 4, grader).cons == (1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="do not line up"):
        matched_voting(samples, ["7", "7"], [1.0, 0.0, 1.0], 3, grader)


def test_evaluation_sets_the_debate_beside_voting_at_its_cost(registry: Registry) -> None:
    prefix = "eval_tiny_sums"
    few = asyncio.run(evaluate_policy(make_config("evaluation.num_problems=2", "evaluation.num_samples=1"), registry))
    # one direct sample cannot match a debate's tokens: evaluation says how many it would take
    needed = few.metrics[f"{prefix}/debate/cons_matched_k_needed"]
    assert needed > 1 and f"{prefix}/debate/cons_matched" not in few.metrics
    samples = int(needed) + 3
    metrics = asyncio.run(
        evaluate_policy(make_config("evaluation.num_problems=2", f"evaluation.num_samples={samples}"), registry)
    ).metrics
    per_sample = metrics[f"{prefix}/direct/sampled_tokens_per_sample"]  # over the answers sampled
    assert per_sample >= metrics[f"{prefix}/direct/sampled_tokens_per_answer"] / samples  # a broken round samples fewer
    k = samples_at_cost(metrics[f"{prefix}/debate/sampled_tokens_per_answer"], per_sample)
    assert metrics[f"{prefix}/debate/cons_matched_k"] == k
    assert 0.0 <= metrics[f"{prefix}/debate/cons_matched"] <= 1.0
    assert metrics[f"{prefix}/debate_minus_cons_matched"] == pytest.approx(
        metrics[f"{prefix}/debate/answer_correct"] - metrics[f"{prefix}/debate/cons_matched"]
    )
