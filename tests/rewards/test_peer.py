"""win_rate and win_minus_loss against docs/rewards.md, by hand and on random debates."""

from __future__ import annotations

import math

import pytest
from hypothesis import given

from debate_core.builtin.rewards_peer import debate_rewards
from debate_core.records import AuthoredComparison, DebateRecord, tally_votes
from debate_core.rewards.peer import PairwiseReward, win_minus_loss_rewards, win_rate_rewards
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

from .strategies import debates


def seed_win_rate(votes: list[AuthoredComparison], n: int) -> list[float]:
    """docs/rewards.md#win_rate, transcribed literally."""
    out = []
    for i in range(n):
        w = v = 0.0
        for c in votes:
            if c.author == i or i not in (c.a, c.b):
                continue
            if c.op == ">":
                w += 1.0 if i == c.a else 0.0
            else:
                w += 0.5
            v += 1.0
        out.append(w / v if v > 0 else 0.0)
    return out


def seed_win_minus_loss(votes: list[AuthoredComparison], n: int) -> list[float]:
    """docs/rewards.md#win_minus_loss, transcribed literally."""
    out = []
    for i in range(n):
        s = m = 0.0
        for c in votes:
            if c.author == i or i not in (c.a, c.b):
                continue
            m += 1.0
            if c.op == ">":
                s += 1.0 if i == c.a else -1.0
        out.append(s / m if m > 0 else 0.0)
    return out


def _debate(*turn_votes: tuple[tuple[int, str, int], ...], n: int = 3) -> DebateRecord:
    return synthetic_debate(n, [TurnSpec(comparisons=v) for v in turn_votes])  # type: ignore[arg-type]


def test_hand_example() -> None:
    # agent 0 says 1 > 2; agent 1 says 0 = 2; agent 2 says 0 > 1.
    debate = _debate(((1, ">", 2),), ((0, "=", 2),), ((0, ">", 1),))
    votes = tally_votes(debate).votes
    assert win_rate_rewards(votes, 3) == pytest.approx((0.75, 0.5, 0.25))
    assert win_minus_loss_rewards(votes, 3) == pytest.approx((0.5, 0.0, -0.5))


def test_no_valid_vote_gives_zero_and_metrics() -> None:
    # agent 0: a self-comparison and an id out of range; agent 1: ``1 = 1`` names its author,
    # so the self-comparison rule takes it before the ``a != b`` check (the documented order).
    debate = _debate(((0, ">", 1), (3, ">", 1)), ((1, "=", 1),))
    result = PairwiseReward("win_rate")(debate)
    assert result.agent_rewards == (0.0, 0.0, 0.0)
    assert result.metrics["pairwise_any_votes"] == 0.0
    assert result.metrics["pairwise_malformed"] == 1.0
    assert result.metrics["pairwise_self_comparisons"] == 2.0
    assert result.metrics["pairwise_reward_is_win_rate"] == 1.0
    assert result.metrics["pairwise_reward_is_win_minus_loss"] == 0.0


def test_hook_registers_both() -> None:
    names = {spec.name for spec in debate_rewards()}
    assert names == {"win_rate", "win_minus_loss"}


@given(debates)
def test_match_seed_transcription(debate: DebateRecord) -> None:
    votes = list(tally_votes(debate).votes)
    n = debate.num_agents
    wr = PairwiseReward("win_rate")(debate)
    wml = PairwiseReward("win_minus_loss")(debate)
    assert list(wr.agent_rewards) == pytest.approx(seed_win_rate(votes, n))
    assert list(wml.agent_rewards) == pytest.approx(seed_win_minus_loss(votes, n))
    assert all(0.0 <= r <= 1.0 for r in wr.agent_rewards)
    assert all(-1.0 <= r <= 1.0 for r in wml.agent_rewards)
    assert wr.metrics["pairwise_total_votes"] == len(votes)
    assert wr.metrics["pairwise_reward"] == pytest.approx(sum(wr.agent_rewards) / n)


@given(debates)
def test_leave_one_out(debate: DebateRecord) -> None:
    """An agent's reward does not depend on the votes it authored."""
    votes = list(tally_votes(debate).votes)
    n = debate.num_agents
    for i in range(n):
        others = [v for v in votes if v.author != i]
        assert win_rate_rewards(others, n)[i] == win_rate_rewards(votes, n)[i]
        assert win_minus_loss_rewards(others, n)[i] == win_minus_loss_rewards(votes, n)[i]


@given(debates)
def test_ties_are_half_or_zero(debate: DebateRecord) -> None:
    """With only ties, every agent with a vote has win rate 1/2 and win minus loss 0."""
    ties = [AuthoredComparison(v.author, v.a, "=", v.b, v.round, v.turn_index) for v in tally_votes(debate).votes]
    n = debate.num_agents
    involved = {x for v in ties for x in (v.a, v.b)}
    for i in range(n):
        assert win_rate_rewards(ties, n)[i] == (0.5 if i in involved else 0.0)
        assert win_minus_loss_rewards(ties, n)[i] == 0.0


@given(debates)
def test_swapping_a_vote_flips_win_minus_loss_sign_symmetrically(debate: DebateRecord) -> None:
    votes = list(tally_votes(debate).votes)
    flipped = [AuthoredComparison(v.author, v.b, v.op, v.a, v.round, v.turn_index) if v.op == ">" else v for v in votes]
    n = debate.num_agents
    for x, y in zip(win_minus_loss_rewards(votes, n), win_minus_loss_rewards(flipped, n), strict=True):
        assert math.isclose(x, -y, abs_tol=1e-12)
