"""Built-in reward ``v2``: generator and judge streams with a format penalty (docs/rewards.md#v2)."""

from __future__ import annotations

from debate_core.builtin.rewards_baselines import boxed_answer
from debate_core.plugin import RewardSpec, hookimpl
from debate_core.rewards import V2Options, V2Reward, text_answer


def build_v2(options: V2Options) -> V2Reward:
    """The ``v2`` reward, reading answers (for ``revisions = "peers_choice"``) as ``options.answers`` says."""
    return V2Reward(options, boxed_answer if options.answers == "boxed" else text_answer)


@hookimpl
def debate_rewards() -> list[RewardSpec]:
    return [
        RewardSpec(
            name="v2",
            description="per-step generator vote ratio and judge agreement with the majority, format penalty",
            build=build_v2,
            options=V2Options,
        )
    ]
