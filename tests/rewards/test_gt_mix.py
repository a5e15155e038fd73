"""gt_mix: w_peer * peer + w_gt * correctness, for scalar and streamed peers."""

from __future__ import annotations

import pytest
from hypothesis import given

from debate_core.config.structuring import structure
from debate_core.errors import ComponentFailure, ConfigError
from debate_core.plugin import BuildContext, get_registry
from debate_core.records import GENERATOR_STREAM, JUDGE_STREAM, DebateRecord, RewardResult
from debate_core.rewards.gt_mix import GtMixOptions, GtMixReward, build_gt_mix
from debate_core.rewards.peer import PairwiseReward
from debate_core.rewards.v2 import V2Reward
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

from .strategies import debates


def graded_debate() -> DebateRecord:
    grades = [1.0, 0.0, None, 0.0, 1.0, 1.0]
    comparisons = [(), (), ((0, ">", 1),), ((1, ">", 2),), ((2, ">", 0),), ()]
    specs = [TurnSpec(grade=g, comparisons=c) for g, c in zip(grades, comparisons, strict=True)]  # type: ignore[arg-type]
    return synthetic_debate(3, specs, answer="42")


def test_scalar_peer_uses_each_agents_last_grade() -> None:
    debate = graded_debate()
    peer = PairwiseReward("win_rate")(debate)
    mixed = GtMixReward(PairwiseReward("win_rate"))(debate)
    last = [0.0, 1.0, 1.0]
    assert mixed.agent_rewards == pytest.approx(
        [0.7 * r + 0.3 * c for r, c in zip(peer.agent_rewards, last, strict=True)]
    )
    assert mixed.step_streams == {}
    assert mixed.metrics["pairwise_total_votes"] == peer.metrics["pairwise_total_votes"]


def test_streamed_peer_mixes_the_generator_stream_per_step() -> None:
    debate = graded_debate()
    peer = V2Reward()(debate)
    mixed = GtMixReward(V2Reward(), GtMixOptions(w_peer=0.5, w_gt=0.5, ungraded=-1.0))(debate)
    grades = [[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0]]
    for i in range(3):
        expected = [0.5 * r + 0.5 * c for r, c in zip(peer.step_streams[GENERATOR_STREAM][i], grades[i], strict=True)]
        assert mixed.step_streams[GENERATOR_STREAM][i] == pytest.approx(expected)
        assert mixed.agent_rewards[i] == pytest.approx(sum(expected) / 2)
    assert mixed.stream_weights == peer.stream_weights
    without = GtMixReward(V2Reward(), GtMixOptions(w_peer=0.5, w_gt=0.5, judge_truth=False))(debate)
    assert without.step_streams[JUDGE_STREAM] == peer.step_streams[JUDGE_STREAM]


def test_a_missing_comparison_is_a_wrong_judgement_even_without_peer_weight() -> None:
    debate = graded_debate()
    truth_only = GtMixReward(V2Reward(), GtMixOptions(w_peer=0.0, w_gt=1.0))(debate)
    assert truth_only.step_streams[JUDGE_STREAM][2][1] == -1.0


def test_ground_truth_reaches_the_judge_stream_by_hand() -> None:
    # grades by turn: a0 1, a1 0, a2 -, a0 0, a1 1, a2 1.
    # t2: agent 2 says 0 > 1 about (a0 step 0: right, a1 step 0: wrong): truth +1.
    # t3: agent 0 says 1 > 2 about (a1 step 0: wrong, a2 step 0: ungraded): 0.
    # t4: agent 1 says 2 > 0 about (a2 step 0: ungraded, a0 step 1: wrong): 0.
    # v2's own judge stream: each pair has one judge, so +1 each; agent 2's step 1 owed a comparison: -0.5.
    debate = graded_debate()
    assert V2Reward()(debate).step_streams[JUDGE_STREAM] == ((0.0, 1.0), (0.0, 1.0), (1.0, -0.5))
    mixed = GtMixReward(V2Reward(), GtMixOptions(w_peer=0.5, w_gt=0.5))(debate)
    # agent 2's step 1 owed a comparison and made none: -1 from ground truth too
    assert mixed.step_streams[JUDGE_STREAM] == ((0.0, 0.5), (0.0, 0.5), (1.0, -0.75))
    assert mixed.metrics["gt_mix/judge_truth_mean"] == pytest.approx(0.0)


def test_ground_truth_judges_a_wrong_preference_and_a_tie_on_a_decidable_pair() -> None:
    # parallel, 4 agents; round 1 grades: a0 right, a1 wrong, a2 right, a3 wrong.
    # round 2: agent 0 says 2 = 3 (a tie between a right and a wrong answer: -1), agent 1 says
    # 2 > 3 (prefers the right one: +1), agent 2 says 1 > 0 (prefers the wrong one: -1),
    # agent 3 says 0 = 1 (a tie on a decidable pair: -1).
    grades = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    comparisons = [(), (), (), (), ((2, "=", 3),), ((2, ">", 3),), ((1, ">", 0),), ((0, "=", 1),)]
    specs = [TurnSpec(grade=g, comparisons=c) for g, c in zip(grades, comparisons, strict=True)]  # type: ignore[arg-type]
    debate = synthetic_debate(4, specs, answer="42", protocol="parallel")
    mixed = GtMixReward(V2Reward(), GtMixOptions(w_peer=0.0, w_gt=1.0))(debate)
    assert [row[1] for row in mixed.step_streams[JUDGE_STREAM]] == [-1.0, 1.0, -1.0, -1.0]


def test_missing_stream_is_a_clear_failure() -> None:
    mixer = GtMixReward(V2Reward(), GtMixOptions(stream="content"))
    with pytest.raises(ComponentFailure, match="no stream 'content'"):
        mixer(graded_debate())


def test_wrong_shaped_peer_is_caught() -> None:
    mixer = GtMixReward(lambda debate: RewardResult(agent_rewards=(1.0,)))
    with pytest.raises(ComponentFailure, match="1 agent rewards for 3 agents"):
        mixer(graded_debate())


def test_built_through_the_registry_with_nested_options() -> None:
    registry = get_registry()
    reward = registry.build("reward", "gt_mix", {"peer": {"name": "v2", "options": {"lambda_judge": 2.0}}, "w_gt": 0.5})
    assert reward(graded_debate()).stream_weights[JUDGE_STREAM] == 2.0
    with pytest.raises(ConfigError, match=r"reward\.options\.peer\.options"):
        registry.build("reward", "gt_mix", {"peer": {"name": "v2", "options": {"lambda_judge": -1}}}, "reward.options")
    with pytest.raises(ConfigError, match="cannot be gt_mix"):
        registry.build("reward", "gt_mix", {"peer": {"name": "gt_mix"}})
    # the context passed by the host builds the peer, so the key path follows where gt_mix sits
    options = structure({"peer": {"name": "v2", "options": {"lambda_judge": -1}}}, GtMixOptions)
    context = BuildContext(kind="reward", name="gt_mix", path="curriculum[1].reward.options", builder=registry)
    with pytest.raises(ConfigError, match=r"curriculum\[1\]\.reward\.options\.peer\.options\.lambda_judge"):
        build_gt_mix(options, context)


@given(debates)
def test_zero_gt_weight_is_the_peer_scaled(debate: DebateRecord) -> None:
    for peer in (PairwiseReward("win_minus_loss"), V2Reward()):
        base = peer(debate)
        mixed = GtMixReward(peer, GtMixOptions(w_peer=2.0, w_gt=0.0))(debate)
        assert mixed.agent_rewards == pytest.approx([2 * r for r in base.agent_rewards])
        for name, rows in base.step_streams.items():
            factor = 2.0  # the generator and (ground truth for judges) the judge stream are mixed
            assert [list(r) for r in mixed.step_streams[name]] == [pytest.approx([factor * x for x in r]) for r in rows]
