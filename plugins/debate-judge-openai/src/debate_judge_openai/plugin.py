"""The ``debate`` entry point of debate-judge-openai: registers the ``openai`` judge."""

from __future__ import annotations

from debate_core import JudgeSpec, hookimpl
from debate_judge_openai.judge import OpenAIJudge
from debate_judge_openai.options import OpenAIJudgeOptions


@hookimpl
def debate_judges() -> list[JudgeSpec]:
    return [
        JudgeSpec(
            name="openai",
            description="a model behind an OpenAI-compatible chat-completions endpoint, asked in both orders",
            build=OpenAIJudge,
            options=OpenAIJudgeOptions,
        )
    ]
