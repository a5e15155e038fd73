"""The shape and value checks every ``RewardResult`` must pass before training uses it."""

from __future__ import annotations

import math

from debate_core.errors import ComponentFailure
from debate_core.records import DebateRecord, RewardResult

REWARD_BOUND = 1e6
"""The largest reward magnitude training accepts (docs/rewards.md#the-reward-contract): finite is
not enough, since rewards near the float limit overflow when advantages are computed and turn
every weight into NaN. Rewards of any sensible scale are far below it."""


def _out_of_bounds(value: float) -> bool:
    return not math.isfinite(value) or abs(value) > REWARD_BOUND


def result_problems(debate: DebateRecord, result: RewardResult, *, check_metrics: bool = True) -> list[str]:
    """Every way ``result`` breaks the reward contract for ``debate`` (empty when it is fine).

    Metrics are only diagnostics: ``check_metrics=False`` leaves them out of the check."""
    problems: list[str] = []
    n = debate.num_agents
    if len(result.agent_rewards) != n:
        problems.append(f"{len(result.agent_rewards)} agent rewards for {n} agents")
    bad = [i for i, r in enumerate(result.agent_rewards) if _out_of_bounds(r)]
    if bad:
        shown = ", ".join(f"{i}: {result.agent_rewards[i]!r}" for i in bad)
        problems.append(f"agent rewards not finite or beyond ±{REWARD_BOUND:g} ({shown})")
    for stream, per_agent in result.step_streams.items():
        if len(per_agent) != n:
            problems.append(f"stream '{stream}' has {len(per_agent)} agents, the debate {n}")
            continue
        for agent, steps in enumerate(per_agent):
            expected = len(debate.turns_of(agent))
            if len(steps) != expected:
                problems.append(f"stream '{stream}' has {len(steps)} steps for agent {agent}, who took {expected}")
            if any(_out_of_bounds(x) for x in steps):
                bound = f"±{REWARD_BOUND:g}"
                problems.append(f"stream '{stream}' has a reward not finite or beyond {bound} for agent {agent}")
    for stream, weight in result.stream_weights.items():
        if _out_of_bounds(weight):
            problems.append(f"stream weight of '{stream}' is {weight} (finite and within ±{REWARD_BOUND:g})")
    for name, value in result.metrics.items() if check_metrics else ():
        if not isinstance(value, int | float) or not math.isfinite(value):
            problems.append(f"metric '{name}' is {value!r}, not a finite number")
    return problems


def check_result(
    debate: DebateRecord, result: RewardResult, who: str = "reward", *, check_metrics: bool = True
) -> None:
    """Raise ``ComponentFailure`` naming the debate and every problem of ``result``."""
    problems = result_problems(debate, result, check_metrics=check_metrics)
    if problems:
        where = f" for debate '{debate.debate_id}'" if debate.debate_id else ""
        raise ComponentFailure(f"{who} returned an invalid result{where}: {'; '.join(problems)}")
