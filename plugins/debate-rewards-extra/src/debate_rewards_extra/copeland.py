"""``copeland``: pairwise-majority (Copeland) scores from the debate's votes.

For each pair of agents ``(i, j)`` the net margin is ``#(i > j) - #(j > i)`` over every valid
vote (ties ``=`` add nothing). Agent ``i`` scores +1 for each pair it wins on margin, -1
for each it loses and 0 for a drawn or unjudged pair:

    c_i = sum_{j != i} sign(net_ij),   reward_i = c_i / (N - 1) when ``normalise`` (in [-1, 1]).

Copeland ignores margins, so one judge cannot swing a pair by repeating a vote more than once.
The scores sum to zero over agents.
"""

from __future__ import annotations

import attrs

from debate_core import AuthoredComparison, DebateRecord, RewardResult, tally_votes


@attrs.frozen(kw_only=True)
class CopelandOptions:
    """Options of the ``copeland`` reward."""

    normalise: bool = True
    """Divide by ``N - 1`` so rewards lie in [-1, 1] whatever the number of agents."""


def copeland_scores(votes: list[AuthoredComparison], num_agents: int) -> list[float]:
    """Pairs won minus pairs lost on net vote margin, per agent (unnormalised)."""
    net = [[0] * num_agents for _ in range(num_agents)]
    for vote in votes:
        if vote.op == ">":
            net[vote.a][vote.b] += 1
            net[vote.b][vote.a] -= 1
    return [float(sum((m > 0) - (m < 0) for m in row)) for row in net]


class CopelandReward:
    """Reward: the agent's Copeland score (pairs won minus pairs lost)."""

    def __init__(self, options: CopelandOptions | None = None) -> None:
        self.options = options or CopelandOptions()

    def __call__(self, debate: DebateRecord) -> RewardResult:
        n = debate.num_agents
        votes = list(tally_votes(debate).votes)
        scores = copeland_scores(votes, n)
        if self.options.normalise and n > 1:
            scores = [s / (n - 1) for s in scores]
        decided = sum(1 for s in copeland_scores(votes, n) if s != 0)
        return RewardResult(
            agent_rewards=tuple(scores),
            metrics={"copeland/votes": float(len(votes)), "copeland/agents_with_nonzero_score": float(decided)},
        )

    def __repr__(self) -> str:
        return f"CopelandReward({self.options!r})"
