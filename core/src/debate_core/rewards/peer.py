"""The leave-one-out pairwise rewards (docs/rewards.md#win_rate): win rate and win minus loss.

For a target agent ``i`` only the valid votes that involve ``i`` and were *not* authored
by ``i`` count (leave-one-out). Both rewards are 0 for an agent no such vote involves.

- win rate:        ``r_i = W_i / V_i`` with a win worth 1, a tie 1/2; ``r_i`` in [0, 1].
- win minus loss:  ``r_i = S_i / M_i`` with a win +1, a loss -1, a tie 0; ``r_i`` in [-1, 1].
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from debate_core.records import AuthoredComparison, DebateRecord, RewardResult, VoteTally, tally_votes
from debate_core.stats import mean

PairwiseMode = Literal["win_rate", "win_minus_loss"]


def _counts(
    votes: Iterable[AuthoredComparison], num_agents: int, win: float, tie: float, loss: float
) -> tuple[float, ...]:
    """Mean outcome per agent over the votes that involve it and that it did not author."""
    score = [0.0] * num_agents
    matchups = [0] * num_agents
    for vote in votes:
        for target in (vote.a, vote.b):
            if target == vote.author:  # cannot happen for a valid vote; kept as the seed states it
                continue
            matchups[target] += 1
            if vote.op == "=":
                score[target] += tie
            else:
                score[target] += win if target == vote.a else loss
    return tuple(s / m if m > 0 else 0.0 for s, m in zip(score, matchups, strict=True))


def win_rate_rewards(votes: Iterable[AuthoredComparison], num_agents: int) -> tuple[float, ...]:
    """``W_i / V_i`` per agent: wins 1, ties 1/2, losses 0, leave-one-out; 0 with no vote."""
    return _counts(votes, num_agents, win=1.0, tie=0.5, loss=0.0)


def win_minus_loss_rewards(votes: Iterable[AuthoredComparison], num_agents: int) -> tuple[float, ...]:
    """``S_i / M_i`` per agent: wins +1, ties 0, losses -1, leave-one-out; 0 with no vote."""
    return _counts(votes, num_agents, win=1.0, tie=0.0, loss=-1.0)


def pairwise_metrics(mode: PairwiseMode, tally: VoteTally, rewards: tuple[float, ...]) -> dict[str, float]:
    """The pairwise diagnostics of one debate (``pairwise_reward`` is the mean over agents)."""
    return {
        "pairwise_reward": mean(rewards),
        "pairwise_reward_is_win_rate": float(mode == "win_rate"),
        "pairwise_reward_is_win_minus_loss": float(mode == "win_minus_loss"),
        "pairwise_total_votes": float(tally.total_votes),
        "pairwise_malformed": float(tally.malformed),
        "pairwise_any_votes": float(tally.total_votes > 0),
        "pairwise_self_comparisons": float(tally.self_comparisons),
        "pairwise_invalid_lines": float(tally.invalid_lines),
        "pairwise_failed_turns": float(tally.failed_turns),
    }


class PairwiseReward:
    """A scalar reward per agent from the debate's votes (``win_rate`` or ``win_minus_loss``)."""

    def __init__(self, mode: PairwiseMode) -> None:
        self.mode: PairwiseMode = mode

    def __call__(self, debate: DebateRecord) -> RewardResult:
        tally = tally_votes(debate)
        score = win_rate_rewards if self.mode == "win_rate" else win_minus_loss_rewards
        rewards = score(tally.votes, debate.num_agents)
        return RewardResult(agent_rewards=rewards, metrics=pairwise_metrics(self.mode, tally, rewards))

    def __repr__(self) -> str:
        return f"PairwiseReward({self.mode!r})"


def build_win_rate(options: None) -> PairwiseReward:
    """The ``win_rate`` reward (it takes no options)."""
    return PairwiseReward("win_rate")


def build_win_minus_loss(options: None) -> PairwiseReward:
    """The ``win_minus_loss`` reward (it takes no options)."""
    return PairwiseReward("win_minus_loss")
