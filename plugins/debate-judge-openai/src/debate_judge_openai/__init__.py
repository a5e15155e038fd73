"""debate-judge-openai: a judge for debate-core's ``judge_mix`` from any OpenAI-compatible
chat-completions endpoint (vLLM, SGLang, llama.cpp's server, a hosted API, ``debate serve``).

The judge asks the endpoint which of two solutions is better, for every pair the agents
compared, concurrently and in both orders, through an answer cache in the run directory; a
pair it cannot get an answer for (an endpoint slow, down, rate-limited or answering garbage)
abstains, and ``judge_mix`` gives that debate the peer reward alone. This distribution's README
documents every option and failure.
"""

from __future__ import annotations

from debate_judge_openai.judge import OpenAIJudge
from debate_judge_openai.options import JUDGE_PROMPT, OpenAIJudgeOptions

__all__ = ["JUDGE_PROMPT", "OpenAIJudge", "OpenAIJudgeOptions"]
