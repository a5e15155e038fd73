"""Built-in rewards ``win_rate`` and ``win_minus_loss``: leave-one-out pairwise votes (docs/rewards.md)."""

from __future__ import annotations

from debate_core.plugin import RewardSpec, hookimpl
from debate_core.rewards import build_win_minus_loss, build_win_rate


@hookimpl
def debate_rewards() -> list[RewardSpec]:
    return [
        RewardSpec(
            name="win_rate",
            description="leave-one-out share of peer votes won, ties 1/2; in [0, 1]",
            build=build_win_rate,
        ),
        RewardSpec(
            name="win_minus_loss",
            description="leave-one-out (wins - losses) / matchups, ties 0; in [-1, 1]",
            build=build_win_minus_loss,
        ),
    ]
