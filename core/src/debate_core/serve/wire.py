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

import attrs

from debate_core.limits import limit_value, loads_json
from debate_core.records import Message
from debate_core.records.json_values import JsonMapping, JsonObject

ROLES = ("system", "developer", "user", "assistant")
"""The message roles a request may use; ``developer`` is read as ``system``."""

MAX_STOP_STRINGS = 4
"""Stop strings a request may give (the API's own limit)."""


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
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "'model' must be a model name: one of " + ", ".join(models), "model")
    if model not in models:
        raise ApiError(
            404, f"The model '{model}' does not exist; this server has {', '.join(models)}", "model", "model_not_found"
        )
    if data.get("stream") not in (None, False):
        raise ApiError(400, "stream=true is not supported by debate serve: ask without streaming", "stream")
    if data.get("n") not in (None, 1):
        raise ApiError(400, "'n' must be 1: debate serve answers one choice per request", "n")
    return ChatRequest(
        model=model,
        messages=_messages(data.get("messages")),
        max_tokens=_max_tokens(data),
        temperature=_number(data, "temperature", 0.0, 2.0),
        seed=_seed(data.get("seed")),
        stop=_stop(data.get("stop")),
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


def completion_body(request: ChatRequest, completion: Completion, created: int | None = None) -> JsonObject:
    """The ``chat.completion`` object of an answer."""
    body: JsonObject = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": completion.text},
                "finish_reason": completion.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "total_tokens": completion.prompt_tokens + completion.completion_tokens,
        },
    }
    if completion.debate is not None:
        body["debate"] = dict(completion.debate)
    if completion.direct is not None:
        body["direct"] = dict(completion.direct)
    return body


def models_body(models: Sequence[str], created: int) -> JsonObject:
    """The ``/v1/models`` list."""
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "created": created, "owned_by": "debate-core"} for name in models],
    }
