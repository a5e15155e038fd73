"""Built-in external judges: ``oracle`` and ``model`` (docs/rewards.md#a-stronger-judge-phased-out)."""

from __future__ import annotations

from debate_core.plugin import JudgeSpec, hookimpl
from debate_core.rewards import ModelJudge, ModelJudgeOptions, OracleJudge


def _build_oracle(_: None) -> OracleJudge:
    return OracleJudge()


@hookimpl
def debate_judges() -> list[JudgeSpec]:
    return [
        JudgeSpec(
            name="oracle",
            description="ground truth: the correct of a correct and a wrong response is better",
            build=_build_oracle,
        ),
        JudgeSpec(
            name="model",
            description="a model the backend serves, asked which of two answers is better",
            build=ModelJudge,
            options=ModelJudgeOptions,
        ),
    ]
