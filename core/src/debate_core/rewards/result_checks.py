"""The reward contract's checks under the names ``debate_core.rewards`` exports: they live with
the checks of every other plugin's results in ``debate_core.plugin_results``."""

from __future__ import annotations

from debate_core.plugin_results import REWARD_BOUND
from debate_core.plugin_results import check_reward_result as check_result
from debate_core.plugin_results import reward_result_problems as result_problems

__all__ = ["REWARD_BOUND", "check_result", "result_problems"]
