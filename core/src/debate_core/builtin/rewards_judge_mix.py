"""Built-in reward ``judge_mix``: a peer reward mixed with a stronger judge's verdicts, the
judge's weight falling to zero (docs/rewards.md#a-stronger-judge-phased-out)."""

from __future__ import annotations

from debate_core.plugin import RewardSpec, hookimpl
from debate_core.rewards import JudgeMixOptions, build_judge_mix


@hookimpl
def debate_rewards() -> list[RewardSpec]:
    return [
        RewardSpec(
            name="judge_mix",
            description="(1 - w) * (a peer reward) + w * (that reward with a judge's verdicts), w falling to 0",
            build=build_judge_mix,
            options=JudgeMixOptions,
        )
    ]
