"""Advantages (docs/rewards.md#advantages): centred returns, per-stream centring, global normalisation, dropping."""

from __future__ import annotations

import math

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.errors import ComponentFailure
from debate_core.records import GENERATOR_STREAM, JUDGE_STREAM, DebateRecord, RewardResult
from debate_core.rewards.advantages import AdvantageOptions, compute_advantages
from debate_core.rewards.peer import PairwiseReward
from debate_core.rewards.v2 import UNSCORED_STREAM, V2Options, V2Reward
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

from .strategies import debates

G, J = GENERATOR_STREAM, JUDGE_STREAM


def shift(result: RewardResult, c: float) -> RewardResult:
    """The same result with ``c`` added to every reward of every stream and every agent."""
    streams = {k: tuple(tuple(x + c for x in row) for row in rows) for k, rows in result.step_streams.items()}
    return attrs.evolve(result, agent_rewards=tuple(r + c for r in result.agent_rewards), step_streams=streams)


def test_a_parse_error_creates_variance() -> None:
    """The documented edge case: one failed turn and no votes gives A = (-2/3, 1/3, 1/3)."""
    debate = synthetic_debate(3, [TurnSpec(failed=True)] + [TurnSpec()] * 2)
    result = PairwiseReward("win_rate")(debate)
    (adv,) = compute_advantages([debate], [result])
    assert adv is not None
    assert adv.returns == (-1.0, 0.0, 0.0)
    assert adv.agent_advantages == pytest.approx((-2 / 3, 1 / 3, 1 / 3))
    assert adv.token_advantages(0, 0, ["solution", None]) == pytest.approx([-2 / 3, -2 / 3])


def test_streams_centred_and_weighted_and_routed_by_section() -> None:
    debate = synthetic_debate(3, [TurnSpec(), TurnSpec(), TurnSpec(comparisons=((0, ">", 1),))])
    result = V2Reward(V2Options(lambda_gen=2.0, lambda_judge=0.5))(debate)
    # generator (1, -1, 0) -> centred (1, -1, 0) * 2; judge (0, 0, 1) -> (-1/3, -1/3, 2/3) * 0.5
    (adv,) = compute_advantages([debate], [result])
    assert adv is not None
    assert [row[0] for row in adv.step_advantages[G]] == pytest.approx([2.0, -2.0, 0.0])
    assert [row[0] for row in adv.step_advantages[J]] == pytest.approx([-1 / 6, -1 / 6, 1 / 3])
    sections = ["solution", "evaluation", "comparison", "consensus", None]
    assert adv.token_advantages(2, 0, sections) == pytest.approx([0.0, 0.0, 1 / 3, 0.0, 0.0])
    with pytest.raises(IndexError, match="agent 2 step 1"):
        adv.token_advantages(2, 1, ["solution"])


def test_failed_turn_step_reward_enters_the_default_stream() -> None:
    debate = synthetic_debate(3, [TurnSpec(), TurnSpec(), TurnSpec(failed=True)])
    (adv,) = compute_advantages([debate], [V2Reward()(debate)])
    assert adv is not None
    # v2's default stream is the unscored one: tags, consensus and the whole of a failed turn
    assert [row[0] for row in adv.step_advantages[UNSCORED_STREAM]] == pytest.approx([1 / 3, 1 / 3, -2 / 3])
    assert [row[0] for row in adv.step_advantages[G]] == [0.0, 0.0, 0.0]
    assert [row[0] for row in adv.step_advantages[J]] == [0.0, 0.0, 0.0]
    assert adv.stream_of(None) == UNSCORED_STREAM and adv.stream_of("consensus_reason") == UNSCORED_STREAM
    (before,) = compute_advantages([debate], [V2Reward(V2Options(other_tokens="generator"))(debate)])
    assert before is not None and before.stream_of(None) == G
    assert [row[0] for row in before.step_advantages[G]] == pytest.approx([1 / 3, 1 / 3, -2 / 3])


def test_v2_routes_the_evaluation_by_its_option() -> None:
    debate = synthetic_debate(3, [TurnSpec(), TurnSpec(), TurnSpec(comparisons=((0, ">", 1),))])
    (recipe,) = compute_advantages([debate], [V2Reward()(debate)])
    (judging,) = compute_advantages([debate], [V2Reward(V2Options(evaluation_stream="judge"))(debate)])
    assert recipe is not None and judging is not None
    assert recipe.stream_of("evaluation") == G and judging.stream_of("evaluation") == J
    assert recipe.stream_of("solution") == judging.stream_of("solution") == G
    assert recipe.stream_of("comparison") == judging.stream_of("comparison") == J


def test_drop_uniform_and_global_normalisation() -> None:
    flat = synthetic_debate(2, [TurnSpec(), TurnSpec()])
    voted = synthetic_debate(3, [TurnSpec(), TurnSpec(), TurnSpec(comparisons=((0, ">", 1),))])
    reward = PairwiseReward("win_minus_loss")
    results = [reward(flat), reward(voted)]
    kept = compute_advantages([flat, voted], results, AdvantageOptions(drop_uniform=True))
    assert kept[0] is None and kept[1] is not None
    assert kept[1].agent_advantages == pytest.approx((1.0, -1.0, 0.0))
    scaled = compute_advantages([flat, voted], results, AdvantageOptions(normalisation="global"))
    # centred values over the batch: (0, 0, 1, -1, 0): std = sqrt(2/5)
    assert scaled[1] is not None
    assert scaled[1].agent_advantages == pytest.approx((math.sqrt(5 / 2), -math.sqrt(5 / 2), 0.0))
    flat_only = compute_advantages([flat], [results[0]], AdvantageOptions(normalisation="global"))
    assert flat_only[0] is not None and flat_only[0].agent_advantages == (0.0, 0.0)


def test_bad_results_are_reported() -> None:
    debate = synthetic_debate(2, [TurnSpec(), TurnSpec()])
    with pytest.raises(ComponentFailure, match="not finite or beyond"):
        compute_advantages([debate], [RewardResult(agent_rewards=(float("nan"), 0.0))])
    with pytest.raises(ComponentFailure, match="stream 'generator' has 2 steps for agent 0"):
        compute_advantages([debate], [RewardResult(agent_rewards=(0, 0), step_streams={G: ((0, 0), (0,))})])
    with pytest.raises(ValueError, match="2 debates but 1"):
        compute_advantages([debate, debate], [RewardResult(agent_rewards=(0, 0))])


def _all_rewards(debate: DebateRecord) -> list[RewardResult]:
    return [PairwiseReward("win_rate")(debate), PairwiseReward("win_minus_loss")(debate), V2Reward()(debate)]


@given(st.lists(debates, min_size=1, max_size=4), st.sampled_from(["group", "global"]))
def test_advantages_sum_to_zero_per_debate_and_stream(batch: list[DebateRecord], normalisation: str) -> None:
    options = AdvantageOptions(normalisation=normalisation)  # type: ignore[arg-type]
    for index in range(3):
        results = [_all_rewards(d)[index] for d in batch]
        for adv in compute_advantages(batch, results, options):
            assert adv is not None
            assert abs(sum(adv.agent_advantages)) < 1e-9
            for rows in adv.step_advantages.values():
                assert abs(sum(x for row in rows for x in row)) < 1e-9


@given(debates, st.floats(-10, 10), st.sampled_from(["group", "global"]))
def test_invariant_to_adding_a_constant(debate: DebateRecord, c: float, normalisation: str) -> None:
    options = AdvantageOptions(normalisation=normalisation)  # type: ignore[arg-type]
    for result in _all_rewards(debate):
        (a,) = compute_advantages([debate], [result], options)
        (b,) = compute_advantages([debate], [shift(result, c)], options)
        assert a is not None and b is not None
        assert a.agent_advantages == pytest.approx(b.agent_advantages, abs=1e-9)
        for name, rows in a.step_advantages.items():
            assert [list(r) for r in rows] == [pytest.approx(list(r), abs=1e-9) for r in b.step_advantages[name]]


@given(debates)
def test_returns_follow_the_definition(debate: DebateRecord) -> None:
    result = PairwiseReward("win_rate")(debate)
    (adv,) = compute_advantages([debate], [result])
    assert adv is not None
    for i in range(debate.num_agents):
        failed = sum(1 for t in debate.turns_of(i) if t.failed)
        assert adv.returns[i] == pytest.approx(result.agent_rewards[i] - failed)
