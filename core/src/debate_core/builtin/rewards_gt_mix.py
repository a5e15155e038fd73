"""Built-in reward ``gt_mix``: a peer reward mixed with ground-truth correctness (docs/rewards.md#gt_mix)."""

from __future__ import annotations

from debate_core.plugin import RewardSpec, hookimpl
from debate_core.rewards import GtMixOptions, build_gt_mix


@hookimpl
def debate_rewards() -> list[RewardSpec]:
    return [
        RewardSpec(
            name="gt_mix",
            description="w_peer * (a peer reward) + w_gt * correctness from the grader (defaults 0.7 / 0.3)",
            build=build_gt_mix,
            options=GtMixOptions,
        )
    ]
