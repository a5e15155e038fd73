"""elo: the Elo update, batched per round, and its documented order dependence."""

from __future__ import annotations

import pytest
from hypothesis import given
from rewards_extra_helpers import debate_of, debates

from debate_core.records import DebateRecord
from debate_rewards_extra.elo import EloOptions, EloReward


def test_first_vote_moves_half_k() -> None:
    result = EloReward(EloOptions(k_factor=32, scale=400))(debate_of(3, (), (), ("0>1",)))
    assert result.agent_rewards == pytest.approx((16 / 400, -16 / 400, 0.0))


def test_round_updates_use_start_of_round_ratings() -> None:
    # two votes 0>1 in the same round (parallel protocol, round 2): each scored against 0 vs 0
    debate = debate_of(3, (), (), (), (), (), ("0>1",), protocol="parallel")
    twice = debate_of(4, (), (), (), (), (), (), ("0>1",), ("0>1",), protocol="parallel")
    assert EloReward()(debate).agent_rewards[0] == pytest.approx(16 / 400)
    assert EloReward()(twice).agent_rewards[0] == pytest.approx(32 / 400)
    by_vote = EloReward(EloOptions(update="vote"))(twice).agent_rewards[0]
    assert 16 / 400 < by_vote < 32 / 400


def test_order_dependence_across_rounds() -> None:
    first = debate_of(3, (), (), ("0>1",), (), (), ("1>0",))
    second = debate_of(3, (), (), ("1>0",), (), (), ("0>1",))
    a, b = EloReward()(first).agent_rewards, EloReward()(second).agent_rewards
    assert a[0] < 0 < b[0]  # the later vote counts more


@given(debates)
def test_zero_sum(debate: DebateRecord) -> None:
    for update in ("round", "vote"):
        result = EloReward(EloOptions(update=update))(debate)  # type: ignore[arg-type]
        assert sum(result.agent_rewards) == pytest.approx(0.0, abs=1e-9)
