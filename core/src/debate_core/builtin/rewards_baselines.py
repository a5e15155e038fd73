"""Built-in rewards ``majority``, ``selected_answer`` and ``shuffled``: the label-free rewards and
the random baseline of peer-vote RL (docs/rewards.md#majority, docs/rewards.md#selected_answer,
docs/rewards.md#shuffled)."""

from __future__ import annotations

from debate_core.plugin import BuildContext, RewardSpec, hookimpl
from debate_core.rewards import (
    MajorityOptions,
    MajorityReward,
    SelectedAnswerOptions,
    SelectedAnswerReward,
    ShuffledOptions,
    build_selected_answer,
    build_shuffled,
    text_answer,
)
from debate_core.tasks import extract_last_boxed, normalise_answer


def boxed_answer(solution: str) -> str | None:
    """The last ``\\boxed{...}`` of a solution, normalised (``1,000`` = ``1000``); ``None`` without one."""
    boxed = extract_last_boxed(solution)
    return None if boxed is None else normalise_answer(boxed)


def build_majority(options: MajorityOptions) -> MajorityReward:
    """The ``majority`` reward, reading answers as ``options.answers`` says."""
    return MajorityReward(boxed_answer if options.answers == "boxed" else text_answer)


def build_selected(options: SelectedAnswerOptions, context: BuildContext) -> SelectedAnswerReward:
    """The ``selected_answer`` reward, reading answers as ``options.answers`` says."""
    return build_selected_answer(options, context, boxed_answer if options.answers == "boxed" else text_answer)


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
            name="selected_answer",
            description="1 for an agent whose final answer is the one the debate's answer rule selects; no labels",
            build=build_selected,
            options=SelectedAnswerOptions,
        ),
        RewardSpec(
            name="shuffled",
            description="another reward's values permuted among each debate's agents (seeded): the random floor",
            build=build_shuffled,
            options=ShuffledOptions,
        ),
    ]
