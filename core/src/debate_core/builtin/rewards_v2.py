"""Built-in reward ``v2``: generator and judge streams with a format penalty (docs/rewards.md#v2)."""

from __future__ import annotations

from debate_core.plugin import RewardSpec, hookimpl
from debate_core.rewards import V2Options, V2Reward


@hookimpl
def debate_rewards() -> list[RewardSpec]:
    return [
        RewardSpec(
            name="v2",
            description="per-step generator vote ratio and judge agreement with the majority, format penalty",
            build=V2Reward,
            options=V2Options,
        )
    ]
