"""shuffled (docs/rewards.md#shuffled): the inner reward's values permuted among each debate's
agents, seeded: the contract suite, and its definition checked on random debates."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import given

from debate_core.errors import ConfigError
from debate_core.plugin import get_registry
from debate_core.records import DebateRecord, RewardFunction
from debate_core.rewards import PairwiseReward, ShuffledOptions, ShuffledReward, V2Reward, agent_permutation
from debate_core.testing import RewardContract
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

from .strategies import debates


class TestShuffledContract(RewardContract):
    reward_name = "shuffled"


class TestShuffledGroundTruthContract(RewardContract):
    reward_name = "shuffled"
    reward_options: ClassVar[Mapping[str, Any]] = {
        "inner": {"name": "gt_mix", "options": {"w_peer": 0.0, "w_gt": 1.0}},
        "seed": 5,
    }


def three_agents(debate_id: str) -> DebateRecord:
    specs = [TurnSpec(comparisons=((1, ">", 2),)), TurnSpec(comparisons=((0, ">", 2),)), TurnSpec()] * 2
    return synthetic_debate(3, specs, debate_id=debate_id, protocol="parallel")


@given(debates)
def test_each_debate_keeps_the_inner_rewards_and_stream_rows(debate: DebateRecord) -> None:
    for inner in (PairwiseReward("win_rate"), V2Reward()):
        base = inner(debate)
        shuffled = ShuffledReward(inner)(debate)
        assert sorted(shuffled.agent_rewards) == sorted(base.agent_rewards)
        order = agent_permutation(debate, 0, keep_step_counts=bool(base.step_streams))
        assert sorted(order) == list(range(debate.num_agents))
        assert shuffled.agent_rewards == tuple(base.agent_rewards[s] for s in order)
        for name, rows in base.step_streams.items():
            assert shuffled.step_streams[name] == tuple(rows[s] for s in order)
            assert Counter(shuffled.step_streams[name]) == Counter(rows)
            # every row still fits its agent: sigma keeps step counts
            assert all(len(debate.turns_of(a)) == len(debate.turns_of(s)) for a, s in enumerate(order))
        assert shuffled.section_streams == base.section_streams and shuffled.stream_weights == base.stream_weights
        assert ShuffledReward(inner)(attrs.evolve(debate)) == shuffled


def test_the_permutation_is_uniform_over_debates_and_depends_on_the_seed() -> None:
    counts = Counter(tuple(agent_permutation(three_agents(f"step1-debate{i}"), 0, False)) for i in range(600))
    assert set(counts) == set(itertools.permutations(range(3)))
    assert all(60 <= c <= 140 for c in counts.values()), counts  # 100 expected each
    seeds = {tuple(agent_permutation(three_agents("d"), seed, False)) for seed in range(40)}
    assert len(seeds) > 1


def test_the_winner_of_the_votes_gets_no_more_than_its_share() -> None:
    # agent 0 wins every vote of every debate under win_rate; shuffled, it gets each reward as often
    reward = ShuffledReward(PairwiseReward("win_rate"), ShuffledOptions(seed=3))
    got = [reward(three_agents(f"d{i}")).agent_rewards[0] for i in range(300)]
    values = PairwiseReward("win_rate")(three_agents("d0")).agent_rewards
    assert max(values) == values[0] > min(values)
    assert sum(got) / len(got) == pytest.approx(sum(values) / 3, abs=0.08)


def test_built_through_the_registry_with_its_inner_reward() -> None:
    registry = get_registry()
    reward: RewardFunction = registry.build("reward", "shuffled", {"inner": {"name": "win_rate"}, "seed": 1})
    assert isinstance(reward, ShuffledReward) and isinstance(reward.inner, PairwiseReward)
    assert "shuffled/moved" in reward(three_agents("x")).metrics
    with pytest.raises(ConfigError, match="cannot be shuffled"):
        registry.build("reward", "shuffled", {"inner": {"name": "shuffled"}})
