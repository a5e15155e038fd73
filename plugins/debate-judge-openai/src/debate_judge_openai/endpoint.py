"""One request to the endpoint, with its time limit and retries, and what each failure counts as.

| failure | counted as | retried |
|---|---|---|
| no whole answer within ``timeout_s`` | ``timeouts`` | yes |
| connection refused, reset or dropped | ``connection_errors`` | yes |
| 429 | ``rate_limited`` | yes, after its ``Retry-After`` (capped) |
| 5xx | ``server_errors`` | yes |
| a 200 that is not a chat completion with a text | ``garbage`` | yes |
| any other 4xx but 401, 403, 404 | ``refused`` | no |
| 401, 403, 404 | stops the run (a wrong key, URL or model fails every request) | no |

A request that fails on every try (or is refused) counts ``failed``, and its pair abstains.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import openai

from debate_core import ConfigError
from debate_judge_openai.options import OpenAIJudgeOptions

Sleep = Callable[[float], Awaitable[None]]

FATAL_STATUSES = {401: "refuses the API key", 403: "refuses access", 404: "has no such model or path"}


class GarbledAnswer(ValueError):
    """A 200 answer that is not a chat completion with a text."""


@attrs.frozen
class Failure:
    """What went wrong with one try."""

    kind: str
    message: str
    retryable: bool = True
    retry_after: float | None = None


def content_of(response: Any) -> tuple[str, int, int]:
    """The reply's text and the usage's prompt and completion tokens (0 when not reported).

    Raises:
        GarbledAnswer: the answer has no choice with a text.
    """
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise GarbledAnswer("the answer has no choices")
    content = getattr(getattr(choices[0], "message", None), "content", None)
    if not isinstance(content, str):
        raise GarbledAnswer("the answer's first choice has no text")
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", 0)
    completion = getattr(usage, "completion_tokens", 0)
    return content, prompt if isinstance(prompt, int) else 0, completion if isinstance(completion, int) else 0


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    milliseconds = headers.get("retry-after-ms")
    try:
        if milliseconds is not None:
            return max(0.0, float(milliseconds) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        if value.strip().replace(".", "", 1).isdigit():
            return float(value)
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(exc: BaseException, where: str) -> Failure:
    """What a try's exception counts as (the module's table).

    Raises:
        ConfigError: a 401, 403 or 404: every request would fail the same.
    """
    text = " ".join(str(exc).split())[:300]
    if isinstance(exc, asyncio.TimeoutError | openai.APITimeoutError):
        return Failure("timeouts", "no answer within the time limit")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status in FATAL_STATUSES:
            raise ConfigError(f"{where} {FATAL_STATUSES[status]}: HTTP {status}: {text}") from None
        if status == 429:
            return Failure("rate_limited", f"HTTP 429: {text}", retry_after=retry_after(exc.response.headers))
        if status >= 500:
            return Failure("server_errors", f"HTTP {status}: {text}")
        return Failure("refused", f"HTTP {status}: {text}", retryable=False)
    if isinstance(exc, openai.APIConnectionError):
        return Failure("connection_errors", f"connection failed: {text}")
    if isinstance(exc, ValueError | openai.APIResponseValidationError):  # JSON that does not decode, GarbledAnswer
        return Failure("garbage", f"garbled answer: {text}")
    raise exc


def backoff(options: OpenAIJudgeOptions, retry: int, failure: Failure) -> float:
    """The wait before retry ``retry`` (from 0): ``backoff_s · 2^retry``, or a 429's ``Retry-After``
    when longer, at most ``max_backoff_s``."""
    wait = options.backoff_s * 2.0**retry
    if failure.retry_after is not None:
        wait = max(wait, failure.retry_after)
    return min(wait, options.max_backoff_s)


async def ask(
    client: openai.AsyncOpenAI,
    request: Mapping[str, Any],
    options: OpenAIJudgeOptions,
    counts: Counter[str],
    sleep: Sleep,
) -> tuple[str | None, Failure | None]:
    """The reply's text, or None and the last failure when every try failed (or was refused)."""
    where = f"judge 'openai': the endpoint {options.base_url} (model {options.model!r})"
    failure: Failure | None = None
    for attempt in range(options.max_retries + 1):
        if failure is not None:
            counts["retries"] += 1
            await sleep(backoff(options, attempt - 1, failure))
        counts["requests"] += 1
        try:
            response = await asyncio.wait_for(client.chat.completions.create(**request), options.timeout_s)
            text, prompt_tokens, completion_tokens = content_of(response)
        except Exception as exc:
            failure = classify(exc, where)
            counts[failure.kind] += 1
            if not failure.retryable:
                break
            continue
        counts["prompt_tokens"] += prompt_tokens
        counts["completion_tokens"] += completion_tokens
        return text, None
    counts["failed"] += 1
    return None, failure
