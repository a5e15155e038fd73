"""length_debias: removes the within-debate slope of reward on length, and nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from rewards_extra_helpers import debates

from debate_core.records import DebateRecord, RewardResult
from debate_core.rewards.peer import PairwiseReward
from debate_core.rewards.v2 import V2Reward
from debate_core.testing.synthetic import TurnSpec, synthetic_debate
from debate_rewards_extra.length_debias import LengthDebiasOptions, LengthDebiasReward, remove_length_slope


def words(n: int) -> str:
    return " ".join(["w"] * n)


def test_pure_verbosity_preference_is_removed() -> None:
    # a judge rewarding length only: reward = length / 10
    debate = synthetic_debate(3, [TurnSpec(solution=words(n)) for n in (10, 20, 30)])

    def by_length(d: DebateRecord) -> RewardResult:
        return RewardResult(agent_rewards=[len(t.response.solution.split()) / 10 for t in d.turns])

    result = LengthDebiasReward(by_length)(debate)
    assert result.agent_rewards == pytest.approx((2.0, 2.0, 2.0))
    assert result.metrics["length_debias/slope"] == pytest.approx(0.1)


def test_quality_orthogonal_to_length_is_kept() -> None:
    rewards, beta = remove_length_slope([1.0, -1.0, 1.0, -1.0], [1.0, 1.0, 3.0, 3.0])
    assert beta == 0.0 and rewards == [1.0, -1.0, 1.0, -1.0]


def test_equal_lengths_change_nothing() -> None:
    debate = synthetic_debate(3, [TurnSpec(comparisons=((1, ">", 2),)), TurnSpec(), TurnSpec()])
    base = PairwiseReward("win_rate")(debate)
    assert LengthDebiasReward(PairwiseReward("win_rate"))(debate).agent_rewards == base.agent_rewards


def _cov(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))


@given(debates)
def test_debiased_rewards_are_uncorrelated_with_length_and_keep_their_mean(debate: DebateRecord) -> None:
    reward = LengthDebiasReward(V2Reward(), LengthDebiasOptions())
    base, result = V2Reward()(debate), reward(debate)
    agents = [i for i in range(debate.num_agents) if debate.turns_of(i)]
    if len(agents) >= 2:
        lengths = [
            sum(len(t.response.solution.split()) for t in debate.turns_of(i)) / len(debate.turns_of(i)) for i in agents
        ]
        debiased = [result.agent_rewards[i] for i in agents]
        assert abs(_cov(lengths, debiased)) < 1e-9
        assert sum(debiased) == pytest.approx(sum(base.agent_rewards[i] for i in agents))
    steps = [(i, s) for i in range(debate.num_agents) for s in range(len(debate.turns_of(i)))]
    if len(steps) >= 2:
        xs = [float(len(debate.turns_of(i)[s].response.solution.split())) for i, s in steps]
        ys = [result.step_streams["generator"][i][s] for i, s in steps]
        assert abs(_cov(xs, ys)) < 1e-9
    assert result.step_streams["judge"] == base.step_streams["judge"]
