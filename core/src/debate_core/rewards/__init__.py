"""Rewards: the built-in reward functions, advantages, and the checks every reward result passes.

The reward contract itself (``RewardResult``, ``RewardFunction``) and the votes rewards count
(``tally_votes``) are records, in ``debate_core.records``.
"""

from __future__ import annotations

from debate_core.plugin import check_reward_result as check_result
from debate_core.plugin import reward_result_problems as result_problems
from debate_core.rewards.advantages import (
    FAILED_TURN_REWARD,
    AdvantageOptions,
    DebateAdvantages,
    compute_advantages,
)
from debate_core.rewards.external_judges import ModelJudge, ModelJudgeOptions, OracleJudge
from debate_core.rewards.gt_mix import GtMixOptions, GtMixReward, build_gt_mix, final_grades, truth_judge_stream
from debate_core.rewards.judge_mix import (
    JudgeMixOptions,
    JudgeMixReward,
    build_judge_mix,
    judge_mixed_reward,
    judge_weight,
)
from debate_core.rewards.majority import (
    AnswerForm,
    AnswerReader,
    MajorityOptions,
    MajorityReward,
    final_answers,
    majority_answer,
    text_answer,
)
from debate_core.rewards.peer import (
    PairwiseReward,
    build_win_minus_loss,
    build_win_rate,
    win_minus_loss_rewards,
    win_rate_rewards,
)
from debate_core.rewards.selected import SelectedAnswerOptions, SelectedAnswerReward, build_selected_answer
from debate_core.rewards.shuffled import ShuffledOptions, ShuffledReward, agent_permutation, build_shuffled
from debate_core.rewards.v2 import V2Options, V2Reward, resolve_votes, v2_breakdown

__all__ = [
    "FAILED_TURN_REWARD",
    "AdvantageOptions",
    "AnswerForm",
    "AnswerReader",
    "DebateAdvantages",
    "GtMixOptions",
    "GtMixReward",
    "JudgeMixOptions",
    "JudgeMixReward",
    "MajorityOptions",
    "SelectedAnswerOptions",
    "SelectedAnswerReward",
    "build_selected_answer",
    "MajorityReward",
    "ModelJudge",
    "ModelJudgeOptions",
    "OracleJudge",
    "PairwiseReward",
    "ShuffledOptions",
    "ShuffledReward",
    "V2Options",
    "V2Reward",
    "agent_permutation",
    "build_gt_mix",
    "build_judge_mix",
    "build_shuffled",
    "build_win_minus_loss",
    "build_win_rate",
    "check_result",
    "compute_advantages",
    "final_answers",
    "final_grades",
    "judge_mixed_reward",
    "judge_weight",
    "majority_answer",
    "resolve_votes",
    "truth_judge_stream",
    "result_problems",
    "text_answer",
    "v2_breakdown",
    "win_minus_loss_rewards",
    "win_rate_rewards",
]
