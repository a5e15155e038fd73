"""The harness of every seat: one chat request per debate turn, in process, without streaming
or a script runner (docs/verifiers.md). The request is the turn's prompt messages with the
turn's sampling (temperature, ``max_tokens``, seed, the run's stop strings), asking for the
sampled token ids and their logprobs where ``token_ids`` is on (``debate serve`` and vLLM give
them; the OpenAI API refuses the field)."""

from __future__ import annotations

import attrs
import openai
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.clients import ModelContext
from verifiers.v1.runtimes import ProgramResult, Runtime

from debate_core.hosting import TurnReply


class DebateTurnData(vf.TaskData):
    """One debate turn as a task: the prompt (``prompt``, the turn's messages) and its sampling."""

    turn: str = ""
    """The key the reply is left under for the environment."""
    agent: int = 0
    round: int = 1
    temperature: float = 1.0
    max_tokens: int = 1
    seed: int = 0
    stop: list[str] = Field(default_factory=list)


class DebateTurn(vf.Task[DebateTurnData]):
    """One agent's turn of a debate."""


class DebateHarnessConfig(vf.HarnessConfig):
    """``token_ids``: ask for the sampled token ids and logprobs (``return_token_ids``, ``logprobs``)."""

    token_ids: bool = True


@attrs.define
class Replies:
    """Replies the harness leaves for the environment, by turn key (one process: the env's)."""

    waiting: dict[str, TurnReply] = attrs.field(factory=dict)


REPLIES = Replies()


class DebateHarness(vf.Harness[DebateHarnessConfig]):
    """One chat request per turn, from this process, through the rollout's endpoint."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: ModelContext,
        trace: vf.Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        if not isinstance(data, DebateTurnData):
            return ProgramResult(2, "", f"the debate_verifiers harness plays debate turns, not {type(data).__name__}")
        messages = [m.model_dump(mode="json", exclude_none=True) for m in data.prompt or []]
        extra = {"return_token_ids": True} if self.config.token_ids else {}
        async with openai.AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            reply = await client.chat.completions.create(
                model=ctx.model,
                messages=messages,
                temperature=data.temperature,
                max_tokens=data.max_tokens,
                seed=data.seed,
                stop=data.stop or None,
                logprobs=self.config.token_ids or None,
                extra_body=extra or None,
            )
        REPLIES.waiting[data.turn] = _reply(reply)
        return ProgramResult(0, "", "")


def _reply(reply: openai.types.chat.ChatCompletion) -> TurnReply:
    choice = reply.choices[0]
    token_ids = (choice.model_extra or {}).get("token_ids")
    content = choice.logprobs.content if choice.logprobs is not None else None
    logprobs = tuple(t.logprob for t in content) if content else None
    return TurnReply(
        text=choice.message.content or "",
        token_ids=tuple(int(t) for t in token_ids) if isinstance(token_ids, list) else None,
        logprobs=logprobs,
        stopped=choice.finish_reason == "stop",
    )
