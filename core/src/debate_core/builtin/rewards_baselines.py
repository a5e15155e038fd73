"""Built-in rewards ``majority`` and ``shuffled``: the label-free and the random baselines of
peer-vote RL (docs/rewards.md#majority, docs/rewards.md#shuffled)."""

from __future__ import annotations

from debate_core.component_specs import RewardSpec
from debate_core.hookspecs import hookimpl
from debate_core.rewards import MajorityOptions, MajorityReward, ShuffledOptions, build_shuffled, text_answer
from debate_core.tasks import extract_last_boxed, normalise_answer


def boxed_answer(solution: str) -> str | None:
    """The last ``\\boxed{...}`` of a solution, normalised (``1,000`` = ``1000``); ``None`` without one."""
    boxed = extract_last_boxed(solution)
    return None if boxed is None else normalise_answer(boxed)


def build_majority(options: MajorityOptions) -> MajorityReward:
    """The ``majority`` reward, reading answers as ``options.answers`` says."""
    return MajorityReward(boxed_answer if options.answers == "boxed" else text_answer)


@hookimpl
def debate_rewards() -> list[RewardSpec]:
    return [
        RewardSpec(
            name="majority",
            description="1 for an agent whose final answer is the debate's majority answer, else 0; no ground truth",
            build=build_majority,
            options=MajorityOptions,
        ),
        RewardSpec(
            name="shuffled",
            description="another reward's values permuted among each debate's agents (seeded): the random floor",
            build=build_shuffled,
            options=ShuffledOptions,
        ),
    ]
