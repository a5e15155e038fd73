"""copeland: pairs won minus pairs lost on net margin."""

from __future__ import annotations

import pytest
from hypothesis import given
from rewards_extra_helpers import debate_of, debates

from debate_core.records import DebateRecord
from debate_rewards_extra.copeland import CopelandOptions, CopelandReward


def test_hand_example() -> None:
    # agent 0 votes 1>2, 3>2; agent 1: 0>2, 0>3; agent 2: 0>1, 3>1 and 0>1 again; agent 3: 1>0
    debate = debate_of(4, ("1>2", "3>2"), ("0>2", "0>3"), ("0>1", "3>1", "0>1"), ("1>0", "1=2"))
    # pair margins: 0v1 +2-1 (0 wins); 0v2 +1; 0v3 +1; 1v2 +1 (the tie adds nothing); 1v3 -1; 2v3 -1
    result = CopelandReward(CopelandOptions(normalise=False))(debate)
    assert result.agent_rewards == (3.0, -1.0, -3.0, 1.0)
    normalised = CopelandReward()(debate)
    assert normalised.agent_rewards == pytest.approx((1.0, -1 / 3, -1.0, 1 / 3))


@given(debates)
def test_bounded_and_zero_sum(debate: DebateRecord) -> None:
    result = CopelandReward()(debate)
    assert all(-1.0 <= r <= 1.0 for r in result.agent_rewards)
    assert sum(result.agent_rewards) == pytest.approx(0.0, abs=1e-9)
