"""``elo``: Elo ratings updated from the debate's votes, round by round.

Every agent starts at rating 0. A vote ``a > b`` scores 1 for ``a`` and 0 for ``b``, a tie 1/2
each; the expected score of ``a`` is ``E_a = 1 / (1 + 10^((R_b - R_a) / scale))`` and the
update is ``R_a += K (S_a - E_a)``, ``R_b -= K (S_a - E_a)``.

With ``update = "round"`` (default) all votes cast in one round are scored against the ratings
at the start of that round and applied together, so the order of turns *within* a round does
not matter (it fits parallel rounds); with ``update = "vote"`` ratings move after every vote
in commit order. Either way Elo is **order-dependent across rounds**: the same votes cast in
a different round order give different ratings, and later votes weigh more. This differs
from Bradley-Terry, which fits all votes at once. Updates are zero-sum, so the ratings are
centred; the reward is ``R_i / scale``.
"""

from __future__ import annotations

import math
from itertools import groupby
from typing import Literal

import attrs
from attrs import validators as v

from debate_core import AuthoredComparison, DebateRecord, RewardResult, tally_votes


@attrs.frozen(kw_only=True)
class EloOptions:
    """Options of the ``elo`` reward."""

    k_factor: float = attrs.field(default=32.0, validator=v.gt(0.0))
    scale: float = attrs.field(default=400.0, validator=v.gt(0.0))
    update: Literal["round", "vote"] = attrs.field(default="round", validator=v.in_(("round", "vote")))
    """``round``: one batched update per round; ``vote``: one update per vote in commit order."""


def _delta(ratings: list[float], vote: AuthoredComparison, k: float, scale: float) -> float:
    expected = 1.0 / (1.0 + math.pow(10.0, (ratings[vote.b] - ratings[vote.a]) / scale))
    score = 1.0 if vote.op == ">" else 0.5
    return k * (score - expected)


def elo_ratings(votes: list[AuthoredComparison], num_agents: int, options: EloOptions) -> list[float]:
    """Ratings after every vote, in commit order, grouped by round or not (see the module doc)."""
    ratings = [0.0] * num_agents
    groups = (
        [list(group) for _, group in groupby(votes, key=lambda vote: vote.round)]
        if options.update == "round"
        else [[vote] for vote in votes]
    )
    for group in groups:
        change = [0.0] * num_agents
        for vote in group:
            d = _delta(ratings, vote, options.k_factor, options.scale)
            change[vote.a] += d
            change[vote.b] -= d
        ratings = [r + c for r, c in zip(ratings, change, strict=True)]
    return ratings


class EloReward:
    """Reward: the agent's final Elo rating divided by ``scale``."""

    def __init__(self, options: EloOptions | None = None) -> None:
        self.options = options or EloOptions()

    def __call__(self, debate: DebateRecord) -> RewardResult:
        votes = list(tally_votes(debate).votes)
        ratings = elo_ratings(votes, debate.num_agents, self.options)
        rewards = tuple(r / self.options.scale for r in ratings)
        return RewardResult(
            agent_rewards=rewards,
            metrics={
                "elo/votes": float(len(votes)),
                "elo/max_rating": max(ratings, default=0.0),
                "elo/min_rating": min(ratings, default=0.0),
            },
        )

    def __repr__(self) -> str:
        return f"EloReward({self.options!r})"
