"""gt_mix: w_peer * peer + w_gt * correctness, for scalar and streamed peers."""

from __future__ import annotations

import pytest
from hypothesis import given

from debate_core.components import BuildContext
from debate_core.config.structuring import structure
from debate_core.errors import ComponentFailure, ConfigError
from debate_core.plugins import get_registry
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
    assert mixed.step_streams[JUDGE_STREAM] == peer.step_streams[JUDGE_STREAM]
    assert mixed.stream_weights == peer.stream_weights


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
            factor = 2.0 if name == GENERATOR_STREAM else 1.0
            assert [list(r) for r in mixed.step_streams[name]] == [pytest.approx([factor * x for x in r]) for r in rows]
