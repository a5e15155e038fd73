"""The OpenAI chat-completions wire format of ``debate serve`` (docs/training.md#serving-a-policy):
requests read and checked, answers and errors written.

A request body that is not what the API accepts gets an :class:`ApiError`, which becomes the
API's JSON error (``{"error": {"message", "type", "param", "code"}}``) with its HTTP status; a
client library raises it as its own ``BadRequestError``, ``NotFoundError``, ...
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Sequence
from typing import TypedDict

import attrs

from debate_core.limits import limit_value, loads_json
from debate_core.records import Message
from debate_core.records.json_values import JsonMapping, JsonObject

ROLES = ("system", "developer", "user", "assistant")
"""The message roles a request may use; ``developer`` is read as ``system``."""

MAX_STOP_STRINGS = 4
"""Stop strings a request may give (the API's own limit)."""

MAX_CHOICES = 8
"""Choices one request may ask for (``n``)."""


class ApiError(Exception):
    """A request the server answers with an OpenAI-style error."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code

    @property
    def error_type(self) -> str:
        """The API's error ``type``: ``invalid_request_error`` for the client's mistakes, else ``server_error``."""
        return "invalid_request_error" if self.status < 500 else "server_error"

    def body(self) -> JsonObject:
        """The JSON body of the error."""
        return {"error": {"message": self.message, "type": self.error_type, "param": self.param, "code": self.code}}


@attrs.frozen
class ChatRequest:
    """A checked chat-completions request; None where the request left a value to the server."""

    model: str
    messages: tuple[Message, ...]
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    n: int = 1
    """Choices asked for; choice ``i`` is sampled with seed ``seed + i``."""
    stream: bool = False
    include_usage: bool = False
    """``stream_options.include_usage``: a last chunk with the usage and no choices."""
    logprobs: bool = False
    """The sampled tokens' own logprobs asked for (``logprobs``; in ``/v1/completions`` a number)."""
    return_token_ids: bool = False
    """The prompt's and each choice's sampled token ids asked for (``return_token_ids``, as vLLM names it)."""
    prompt: str | tuple[int, ...] | None = None
    """``/v1/completions``' prompt, sampled as it is (no chat format): text, or token ids."""

    @property
    def question(self) -> str:
        """The last user message: the question a debate answers."""
        return next(m.content for m in reversed(self.messages) if m.role == "user")


@attrs.frozen
class Completion:
    """One answer: its text, why it ended (``stop`` or ``length``), the tokens it cost, and, for a
    debate, what the debate did (an extra ``debate`` object in the response)."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    debate: JsonMapping | None = None
    direct: JsonMapping | None = None
    """For a question answered as evaluation's direct answers are: the whole response, whether it
    followed the output contract, and the answer the grader reads (an extra ``direct`` object)."""
    prompt_token_ids: tuple[int, ...] = ()
    token_ids: tuple[int, ...] = ()
    """Every token sampled, the stop included (empty for a debate, which samples many sequences)."""
    token_logprobs: tuple[tuple[str, float], ...] | None = None
    """Each sampled token's text and the policy's own logprob of it, when the request asked; the
    texts join to ``text``."""


def read_body(body: bytes) -> JsonObject:
    """The request's JSON object.

    Raises:
        ApiError: the body is over the input limit, not UTF-8 JSON, or not an object.
    """
    if len(body) > limit_value("input_bytes"):
        raise ApiError(413, f"the request body is over {limit_value('input_bytes')} bytes (DEBATE_MAX_INPUT_BYTES)")
    try:
        data = loads_json(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"the request body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return data


def parse_chat_request(body: bytes, models: Sequence[str]) -> ChatRequest:
    """A chat-completions request for one of ``models``.

    Raises:
        ApiError: anything the server does not accept, naming the parameter (404 for an unknown model).
    """
    data = read_body(body)
    model = _model(data, models)
    top = data.get("top_logprobs")
    if top not in (None, 0):
        raise ApiError(400, _NO_TOP_LOGPROBS, "top_logprobs")
    return ChatRequest(
        model=model,
        messages=_messages(data.get("messages")),
        logprobs=_flag(data, "logprobs"),
        **_common(data),
    )


_NO_TOP_LOGPROBS = (
    "'top_logprobs' must be 0 or absent: debate serve gives each sampled token's own logprob "
    "(logprobs=true), not the most likely alternatives"
)


def parse_completion_request(body: bytes, models: Sequence[str]) -> ChatRequest:
    """A ``/v1/completions`` request for one of ``models``: its ``prompt`` (text, or token ids)
    sampled as it is; for the ``debate`` model the prompt text is the question.

    Raises:
        ApiError: anything the server does not accept, naming the parameter (404 for an unknown model).
    """
    data = read_body(body)
    model = _model(data, models)
    prompt = _prompt(data.get("prompt"))
    logprobs = data.get("logprobs")
    if logprobs not in (None, 0, 1) or isinstance(logprobs, bool):
        raise ApiError(400, "'logprobs' must be 0 or 1 (the sampled token's own logprob) or absent", "logprobs")
    if data.get("echo") not in (None, False):
        raise ApiError(400, "'echo' is not supported by debate serve: ask without it", "echo")
    question = prompt if isinstance(prompt, str) else "(token ids)"
    return ChatRequest(
        model=model,
        messages=(Message("user", question),),
        logprobs=logprobs == 1,
        prompt=prompt,
        **_common(data),
    )


def _model(data: JsonMapping, models: Sequence[str]) -> str:
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "'model' must be a model name: one of " + ", ".join(models), "model")
    if model not in models:
        raise ApiError(
            404, f"The model '{model}' does not exist; this server has {', '.join(models)}", "model", "model_not_found"
        )
    return model


class _Shared(TypedDict):
    """The fields chat and text completions read alike."""

    max_tokens: int | None
    temperature: float | None
    seed: int | None
    stop: tuple[str, ...]
    n: int
    stream: bool
    include_usage: bool
    return_token_ids: bool


def _common(data: JsonMapping) -> _Shared:
    """What chat and text completions share: limits, sampling, choices, streaming, token ids."""
    stream = _flag(data, "stream")
    options = data.get("stream_options")
    if options is not None and (not isinstance(options, dict) or not stream):
        raise ApiError(400, "'stream_options' must be an object, and only with stream=true", "stream_options")
    include_usage = (options or {}).get("include_usage", False)
    if not isinstance(include_usage, bool):
        raise ApiError(400, "'stream_options.include_usage' must be true or false", "stream_options.include_usage")
    return {
        "max_tokens": _max_tokens(data),
        "temperature": _number(data, "temperature", 0.0, 2.0),
        "seed": _seed(data.get("seed")),
        "stop": _stop(data.get("stop")),
        "n": _choices(data.get("n")),
        "stream": stream,
        "include_usage": include_usage,
        "return_token_ids": _flag(data, "return_token_ids"),
    }


def _flag(data: JsonMapping, name: str) -> bool:
    value = data.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ApiError(400, f"'{name}' must be true or false: {str(value)[:40]}", name)
    return value


def _choices(value: object) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CHOICES:
        raise ApiError(400, f"'n' must be an integer from 1 to {MAX_CHOICES}: {str(value)[:40]}", "n")
    return value


def _prompt(value: object) -> str | tuple[int, ...]:
    """A completions prompt: a string, a one-string array, or an array of token ids."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        value = value[0]
    if isinstance(value, str) and value:
        return value
    if isinstance(value, list) and value and all(type(t) is int and t >= 0 for t in value):
        return tuple(value)
    raise ApiError(
        400, "'prompt' must be a non-empty string or an array of token ids (one prompt per request)", "prompt"
    )


def _messages(value: object) -> tuple[Message, ...]:
    if not isinstance(value, list) or not value:
        raise ApiError(400, "'messages' must be a non-empty array of {role, content} objects", "messages")
    messages = []
    for index, item in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            raise ApiError(400, f"'{where}' must be an object with 'role' and 'content'", where)
        role = item.get("role")
        if role not in ROLES:
            raise ApiError(
                400, f"'{where}.role' must be one of {', '.join(ROLES)}: {str(role)[:40]!r}", f"{where}.role"
            )
        messages.append(Message("system" if role == "developer" else str(role), _content(item.get("content"), where)))
    if not any(m.role == "user" for m in messages):
        raise ApiError(400, "'messages' must hold a user message", "messages")
    return tuple(messages)


def _content(value: object, where: str) -> str:
    """A message's text: a string, or text parts (``[{"type": "text", "text": ...}]``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in value):
        texts = [p.get("text") for p in value]
        if all(isinstance(t, str) for t in texts):
            return "".join(str(t) for t in texts)
    raise ApiError(400, f"'{where}.content' must be a string or text parts (no images or audio)", f"{where}.content")


def _max_tokens(data: JsonMapping) -> int | None:
    """``max_completion_tokens`` (the newer name) or ``max_tokens``."""
    name = "max_completion_tokens" if data.get("max_completion_tokens") is not None else "max_tokens"
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ApiError(400, f"'{name}' must be a positive integer: {str(value)[:40]}", name)
    limit = limit_value("tokens_per_turn")
    if value > limit:
        raise ApiError(400, f"'{name}' = {value} is over {limit} (DEBATE_MAX_TOKENS_PER_TURN)", name)
    return value


def _number(data: JsonMapping, name: str, low: float, high: float) -> float | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ApiError(400, f"'{name}' must be a number: {str(value)[:40]}", name)
    if not low <= value <= high:
        raise ApiError(400, f"'{name}' must be between {low:g} and {high:g}: {value}", name)
    return float(value)


def _seed(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
        raise ApiError(400, f"'seed' must be a 64-bit integer: {str(value)[:40]}", "seed")
    return value


def _stop(value: object) -> tuple[str, ...]:
    stops = [value] if isinstance(value, str) else value
    if stops is None:
        return ()
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise ApiError(400, "'stop' must be a non-empty string or an array of them", "stop")
    if len(stops) > MAX_STOP_STRINGS:
        raise ApiError(400, f"'stop' may hold at most {MAX_STOP_STRINGS} strings", "stop")
    return tuple(stops)


def cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the first of ``stops`` (not included), and whether one was found."""
    cuts = [i for i in (text.find(s) for s in stops) if i >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)


def completion_body(
    request: ChatRequest, completions: Sequence[Completion], created: int | None = None, *, text: bool = False
) -> JsonObject:
    """The ``chat.completion`` object of the answers (``text_completion`` for ``/v1/completions``)."""
    body: JsonObject = {
        "id": f"{'cmpl' if text else 'chatcmpl'}-{uuid.uuid4().hex}",
        "object": "text_completion" if text else "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": request.model,
        "choices": [choice_body(request, c, i, text=text) for i, c in enumerate(completions)],
        "usage": usage_body(completions),
    }
    if request.return_token_ids and completions:
        body["prompt_token_ids"] = list(completions[0].prompt_token_ids)
    first = completions[0] if completions else None
    if first is not None and first.debate is not None:
        body["debate"] = dict(first.debate)
    if first is not None and first.direct is not None:
        body["direct"] = dict(first.direct)
    return body


def choice_body(request: ChatRequest, completion: Completion, index: int, *, text: bool = False) -> JsonObject:
    """One choice: its text (a message for chat), why it ended, its logprobs and token ids when asked."""
    choice: JsonObject = {"index": index}
    if text:
        choice["text"] = completion.text
    else:
        choice["message"] = {"role": "assistant", "content": completion.text}
    choice["finish_reason"] = completion.finish_reason
    choice["logprobs"] = logprobs_body(completion, text=text)
    if request.return_token_ids:
        choice["token_ids"] = list(completion.token_ids)
    return choice


def logprobs_body(completion: Completion, *, text: bool = False) -> JsonObject | None:
    """The sampled tokens' logprobs as the API writes them (chat: ``content``; completions:
    ``tokens`` and ``token_logprobs``), or None when not asked for."""
    if completion.token_logprobs is None:
        return None
    pairs = completion.token_logprobs
    if text:
        offsets, at = [], 0
        for token, _ in pairs:
            offsets.append(at)
            at += len(token)
        return {
            "tokens": [t for t, _ in pairs],
            "token_logprobs": [lp for _, lp in pairs],
            "top_logprobs": None,
            "text_offset": offsets,
        }
    return {
        "content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode("utf-8")), "top_logprobs": []} for t, lp in pairs
        ],
        "refusal": None,
    }


def usage_body(completions: Sequence[Completion]) -> JsonObject:
    """The tokens the answers cost: the prompt once per choice, as each was sampled."""
    prompt = sum(c.prompt_tokens for c in completions)
    sampled = sum(c.completion_tokens for c in completions)
    return {"prompt_tokens": prompt, "completion_tokens": sampled, "total_tokens": prompt + sampled}


def models_body(models: Sequence[str], created: int) -> JsonObject:
    """The ``/v1/models`` list."""
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "created": created, "owned_by": "debate-core"} for name in models],
    }
