"""The pre-training checklist (docs/training.md#preflight), run on the base model before scaling up training.

1. The base model solves at least 5% of the problems with direct prompting.
2. Agents produce valid comparisons more than 80% of the time (on turns that can compare).
3. At least one agent is correct in more than 20% of debates (pass@N).
4. Judgment accuracy is above 50% (peer votes agree with the grader where exactly one of the
   two compared answers is correct).

Each check passes, fails (with what to change), or does not apply (no ground truth, no vote
on a decidable pair).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import attrs

Status = Literal["pass", "fail", "n/a"]


@attrs.frozen
class CheckResult:
    """One line of the checklist."""

    name: str
    requirement: str
    value: float | None
    status: Status
    advice: str = ""


@attrs.frozen
class _Check:
    name: str
    metric: str
    threshold: float
    strict: bool
    requirement: str
    advice: str
    missing: str


def _checks(dataset: str, num_agents: int) -> list[_Check]:
    prefix = f"eval_{dataset}"
    return [
        _Check(
            "direct accuracy",
            f"{prefix}/direct/correct",
            0.05,
            False,
            ">= 5% of problems solved with direct prompting",
            "the task is too hard for this base model: start with easier problems or a "
            "curriculum ([[curriculum]] stages), turn on the supervised warm-start (warmstart.enabled = true), "
            "or use a stronger base model",
            "needs a dataset with answers and a grader (and 'direct' in evaluation.modes)",
        ),
        _Check(
            "valid comparisons",
            f"{prefix}/debate/comparison_rate",
            0.8,
            True,
            "> 80% of the turns that can compare make a valid comparison",
            "agents do not follow the comparison format: warm-start on the output format, raise "
            "debate.max_tokens if responses are cut off, check the renderer's stop conditions, or use the v2 "
            "reward with its format penalty",
            "no turn could compare (an agent needs two other answers in view: at least 3 agents, or round 2 "
            "under parallel rounds)",
        ),
        _Check(
            f"pass@{num_agents}",
            f"{prefix}/debate/pass@{num_agents}",
            0.2,
            True,
            f"> 20% of debates have at least one correct agent (pass@{num_agents})",
            "peer votes would mostly compare wrong answers: use easier problems, more agents "
            "(debate.num_agents = 5), a higher sampling temperature, or a warm-start",
            "needs a dataset with answers and a grader",
        ),
        _Check(
            "judge accuracy",
            f"{prefix}/debate/judge_accuracy",
            0.5,
            True,
            "> 50% of votes on pairs with exactly one correct answer pick the correct one",
            "judges are no better than chance, so peer rewards are noise: mix in ground truth (reward gt_mix), "
            "weight judge training up (v2 lambda_judge), or warm-start before self-play",
            "no vote compared a correct with an incorrect answer",
        ),
    ]


def run_checklist(metrics: Mapping[str, float], dataset: str, num_agents: int) -> list[CheckResult]:
    """The four checks of docs/training.md#preflight against evaluation metrics of the base model."""
    results: list[CheckResult] = []
    parse_errors = metrics.get(f"eval_{dataset}/debate/parse_error", 0.0)
    for check in _checks(dataset, num_agents):
        value = metrics.get(check.metric)
        if value is None and check.name == "valid comparisons" and parse_errors > 0:
            advice = (
                f"{100 * parse_errors:.0f}% of debate turns broke the output contract, which ends a debate before "
                f"anyone can compare: {check.advice}"
            )
            results.append(CheckResult(check.name, check.requirement, None, "fail", advice))
            continue
        if value is None:
            results.append(CheckResult(check.name, check.requirement, None, "n/a", check.missing))
            continue
        passed = value > check.threshold if check.strict else value >= check.threshold
        results.append(
            CheckResult(
                check.name,
                check.requirement,
                float(value),
                "pass" if passed else "fail",
                "" if passed else check.advice,
            )
        )
    return results


def format_checklist(results: list[CheckResult]) -> str:
    """The checklist as text: one line per check, advice under each failure."""
    lines = []
    for result in results:
        value = "—" if result.value is None else f"{100 * result.value:.1f}%"
        mark = {"pass": "[pass]", "fail": "[FAIL]", "n/a": "[n/a] "}[result.status]
        lines.append(f"{mark} {result.name}: {value}  (needs {result.requirement})")
        if result.advice:
            lines.append(f"       {'what to change' if result.status == 'fail' else 'why'}: {result.advice}")
    return "\n".join(lines)
