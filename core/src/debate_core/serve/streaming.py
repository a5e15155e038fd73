"""Server-sent events of ``debate serve`` (docs/training.md#serving-a-policy): the answers of a
``stream = true`` request as the OpenAI API streams them, and the comment lines that keep a
connection alive while a long debate is played.

The policy samples a whole sequence at once, so an answer is sent when it is known: a first chunk
with the role, then each choice's text (with its logprobs and token ids when asked), then each
choice's finish reason, a last chunk with the usage when ``stream_options.include_usage`` asks,
and ``data: [DONE]``. Until then a comment line (``: keep-alive``) goes out every few seconds,
which clients skip and which resets their read timeout.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence

from debate_core.records.json_values import JsonObject
from debate_core.serve.wire import ApiError, ChatRequest, Completion, logprobs_body, usage_body

KEEP_ALIVE = b": keep-alive\n\n"
"""The comment line sent while an answer is not yet known."""

DONE = b"data: [DONE]\n\n"


def event(payload: JsonObject) -> bytes:
    """One server-sent event of a JSON payload."""
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n\n"


def error_event(error: ApiError) -> bytes:
    """An error after the stream began (the status is already 200): the API's error object as an event."""
    return event(error.body())


def stream_events(request: ChatRequest, completions: Sequence[Completion], *, text: bool = False) -> Iterator[bytes]:
    """The events of the answers, ``data: [DONE]`` last."""
    head: JsonObject = {
        "id": f"{'cmpl' if text else 'chatcmpl'}-{uuid.uuid4().hex}",
        "object": "text_completion" if text else "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.model,
    }

    def chunk(choices: list[JsonObject], **extra: object) -> bytes:
        return event({**head, "choices": choices, **extra})

    if not text:
        yield chunk([_choice(i, {"role": "assistant", "content": ""}, text=False) for i in range(len(completions))])
    for index, completion in enumerate(completions):
        choice = _choice(index, {"content": completion.text}, text=text, text_value=completion.text)
        choice["logprobs"] = logprobs_body(completion, text=text)
        if request.return_token_ids:
            choice["token_ids"] = list(completion.token_ids)
        yield chunk([choice])
    extra: dict[str, object] = {}
    first = completions[0] if completions else None
    if first is not None and first.debate is not None:
        extra["debate"] = dict(first.debate)
    if first is not None and first.direct is not None:
        extra["direct"] = dict(first.direct)
    if request.return_token_ids and first is not None:
        extra["prompt_token_ids"] = list(first.prompt_token_ids)
    for index, completion in enumerate(completions):
        finished = _choice(index, {}, text=text, text_value="")
        finished["finish_reason"] = completion.finish_reason
        yield chunk([finished], **extra)
    if request.include_usage:
        yield chunk([], usage=usage_body(completions))
    yield DONE


def _choice(index: int, delta: JsonObject, *, text: bool, text_value: str = "") -> JsonObject:
    if text:
        return {"index": index, "text": text_value, "logprobs": None, "finish_reason": None}
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": None}
