"""bradley_terry: finite and centred in every case, and the penalised MLE it claims to be."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rewards_extra_helpers import debate_of, debates

from debate_core.records import DebateRecord, tally_votes
from debate_rewards_extra.bradley_terry import BradleyTerryOptions, BradleyTerryReward, fit_strengths, win_matrix


def gradient(theta: np.ndarray, wins: np.ndarray, precision: float) -> np.ndarray:
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    return (wins - (wins + wins.T) * p).sum(axis=1) - precision * theta


def test_single_vote_has_the_closed_form_solution() -> None:
    # theta = (x, -x, 0): stationarity 1 - sigmoid(2x) = precision * x
    reward = BradleyTerryReward(BradleyTerryOptions(prior_precision=0.5))
    result = reward(debate_of(3, (), (), ("0>1",)))
    x = result.agent_rewards[0]
    assert result.agent_rewards == pytest.approx((x, -x, 0.0))
    assert 1 - 1 / (1 + math.exp(-2 * x)) == pytest.approx(0.5 * x)


@pytest.mark.parametrize(
    "turns",
    [
        (("1>2",), ("2>0",), ("0>1",)),  # a cycle
        (("1>2",), ("0>2",), ("0>1",)) * 3,  # unanimous, repeated
        ((), (), ("0=1",)),  # a single tie
    ],
)
def test_finite_centred_and_ordered(turns: tuple[tuple[str, ...], ...]) -> None:
    result = BradleyTerryReward()(debate_of(3, *turns))
    assert all(math.isfinite(r) for r in result.agent_rewards)
    assert sum(result.agent_rewards) == pytest.approx(0.0, abs=1e-9)


def test_cycle_is_flat_and_unanimous_is_ordered() -> None:
    cycle = BradleyTerryReward()(debate_of(3, ("1>2",), ("2>0",), ("0>1",)))
    assert cycle.agent_rewards == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    unanimous = BradleyTerryReward()(debate_of(3, ("1>2",), ("0>2",), ("0>1",)))
    a, b, c = unanimous.agent_rewards
    assert a > b > c


def test_leave_one_out_ignores_own_votes() -> None:
    # agent 2's only vote is 0 > 1; leaving it out, agent 2 is unjudged by others except agent 0's vote 1 > 2
    debate = debate_of(3, ("1>2",), (), ("0>1",))
    loo = BradleyTerryReward(BradleyTerryOptions(leave_one_out=True))(debate)
    alone = BradleyTerryReward()(debate_of(3, ("1>2",), (), ()))
    assert loo.agent_rewards[2] == pytest.approx(alone.agent_rewards[2])


@given(debates, st.floats(0.05, 5.0))
def test_is_the_penalised_maximum(debate: DebateRecord, precision: float) -> None:
    wins = win_matrix(list(tally_votes(debate).votes), debate.num_agents)
    theta, _ = fit_strengths(wins, precision)
    assert np.all(np.isfinite(theta))
    assert abs(theta.sum()) < 1e-8
    assert np.max(np.abs(gradient(theta, wins, precision)), initial=0.0) < 1e-6
    result = BradleyTerryReward(BradleyTerryOptions(prior_precision=precision))(debate)
    assert list(result.agent_rewards) == pytest.approx(list(theta), abs=1e-9)
