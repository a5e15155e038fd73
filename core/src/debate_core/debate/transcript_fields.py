"""Reading one value of a transcript's JSON: each reader checks a value's type (and bounds) and
raises ``TranscriptError`` naming its key path (``turns[3].agent``), so that ``transcripts``
builds a record from checked values only (docs/transcript-format.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from debate_core.errors import TranscriptError
from debate_core.limits import short_repr
from debate_core.records import (
    CONSENSUS_RULES,
    Comparison,
    ComparisonOp,
    ConsensusRule,
    Message,
    ParsedResponse,
    ParseError,
    SectionSpan,
)
from debate_core.records.json_values import JsonMapping, JsonValue

_OPS: tuple[ComparisonOp, ...] = (">", "=")

MISSING = object()
"""The default of :func:`value_of` that makes a key required."""


def fail(path: str, message: str) -> TranscriptError:
    """The error for the value at ``path`` (``path: message``; only ``message`` at the top)."""
    return TranscriptError(f"{path}: {message}" if path else message)


def type_name(value: object) -> str:
    """The JSON-ish name of a value's type for messages (``null`` for ``None``)."""
    return "null" if value is None else type(value).__name__


def value_of(obj: JsonMapping, key: str, path: str, default: object = MISSING) -> JsonValue:
    """``obj[key]``, or ``default``; a missing key without a default is an error at ``path``."""
    if key in obj:
        return obj[key]
    if default is MISSING:
        raise fail(path, f"missing required key '{key}'")
    return default


def as_int(value: object, path: str, minimum: int | None = None) -> int:
    """An integer (not a bool), at least ``minimum`` when one is given."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, f"expected an integer, got {type_name(value)} {short_repr(value)}")
    if minimum is not None and value < minimum:
        raise fail(path, f"must be at least {minimum}, got {value}")
    return value


def as_str(value: object, path: str) -> str:
    """A string."""
    if not isinstance(value, str):
        raise fail(path, f"expected a string, got {type_name(value)} {short_repr(value)}")
    return value


def as_optional_str(value: object, path: str) -> str | None:
    """A string or null."""
    return None if value is None else as_str(value, path)


def as_bool(value: object, path: str) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise fail(path, f"expected true or false, got {type_name(value)} {short_repr(value)}")
    return value


def as_mapping(value: object, path: str) -> JsonMapping:
    """A JSON object."""
    if not isinstance(value, Mapping):
        raise fail(path, f"expected an object, got {type_name(value)}")
    return value


def as_list(value: object, path: str) -> Sequence[JsonValue]:
    """A JSON list (a tuple too, for objects built in Python)."""
    if not isinstance(value, list | tuple):
        raise fail(path, f"expected a list, got {type_name(value)}")
    return value


def as_seats(value: object, path: str, agent: int, num_agents: int) -> tuple[int, ...]:
    """A turn's seats (``Turn.seats``): the debate's agents by seat, each at most once, ``-1`` for
    an empty seat, the turn's own agent among them; ``[]`` or absent for a turn whose prompt named
    every agent by its own id."""
    if value is None:
        return ()
    seats = tuple(as_int(v, f"{path}[{k}]", -1) for k, v in enumerate(as_list(value, path)))
    if not seats:
        return ()
    if agent not in seats:
        raise fail(path, f"must seat the turn's own agent {agent}, got {list(seats)}")
    held = [s for s in seats if s >= 0]
    if len(set(held)) != len(held) or max(held) >= num_agents:
        raise fail(path, f"must name distinct agents of the debate (0 to {num_agents - 1}) or -1, got {list(seats)}")
    return seats


def as_op(value: object, path: str) -> ComparisonOp:
    """A comparison operator: ``>`` or ``=``."""
    for op in _OPS:
        if value == op:
            return op
    raise fail(path, f"expected '>' or '=', got {short_repr(value)}")


def as_grade(value: object, path: str) -> float | None:
    """A turn's grade: a number or null."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(path, f"expected a number or null, got {type_name(value)} {short_repr(value)}")
    return float(value)


def as_answer(value: object) -> str | None:
    """The reference answer: a string or null; a number is read as its text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return as_optional_str(value, "answer")


def as_consensus_rule(value: object, path: str) -> ConsensusRule:
    """One of the consensus rules (``CONSENSUS_RULES``)."""
    for rule in CONSENSUS_RULES:
        if value == rule:
            return rule
    raise fail(path, f"must be one of {', '.join(CONSENSUS_RULES)}, got {short_repr(value)}")


def as_prompt(value: object, path: str) -> tuple[Message, ...]:
    """A turn's prompt: a list of ``{"role", "content"}`` messages."""
    messages = []
    for index, raw in enumerate(as_list(value, path)):
        where = f"{path}[{index}]"
        message = as_mapping(raw, where)
        role = as_str(value_of(message, "role", where), f"{where}.role")
        content = as_str(value_of(message, "content", where), f"{where}.content")
        messages.append(Message(role, content))
    return tuple(messages)


def _parsed_comparisons(raw: object, path: str) -> tuple[Comparison, ...]:
    """The ``[a, op, b]`` triples of a turn's ``parsed.comparisons``."""
    comparisons = []
    for k, item in enumerate(as_list(raw, path)):
        where = f"{path}[{k}]"
        triple = as_list(item, where)
        if len(triple) != 3:
            raise fail(where, f"expected [a, op, b], got {short_repr(list(triple), 200)}")
        comparisons.append(
            Comparison(
                as_int(triple[0], f"{where}[0]"), as_op(triple[1], f"{where}[1]"), as_int(triple[2], f"{where}[2]")
            )
        )
    return tuple(comparisons)


def _spans(raw: object, path: str) -> tuple[SectionSpan, ...]:
    """The ``{"name", "start", "end"}`` section spans of a turn's ``parsed.spans``."""
    spans = []
    for k, item in enumerate(as_list(raw, path)):
        where = f"{path}[{k}]"
        span = as_mapping(item, where)
        spans.append(
            SectionSpan(
                as_str(value_of(span, "name", where), f"{where}.name"),
                as_int(value_of(span, "start", where), f"{where}.start", 0),
                as_int(value_of(span, "end", where), f"{where}.end", 0),
            )
        )
    return tuple(spans)


def _parse_error(raw: object, path: str) -> ParseError | None:
    """A turn's ``parsed.error``: null, or ``{"code", "message"}``."""
    if raw is None:
        return None
    err = as_mapping(raw, path)
    return ParseError(
        as_str(value_of(err, "code", path), f"{path}.code"),
        as_str(value_of(err, "message", path), f"{path}.message"),
    )


def as_parsed(raw: object, path: str) -> ParsedResponse:
    """A turn's ``parsed`` object: the parse the transcript recorded (every key optional)."""
    obj = as_mapping(raw, path)
    comparisons = _parsed_comparisons(value_of(obj, "comparisons", path, []), f"{path}.comparisons")
    spans = _spans(value_of(obj, "spans", path, []), f"{path}.spans")
    error = _parse_error(value_of(obj, "error", path, None), f"{path}.error")
    return ParsedResponse(
        solution=as_str(value_of(obj, "solution", path, ""), f"{path}.solution"),
        evaluation=as_str(value_of(obj, "evaluation", path, ""), f"{path}.evaluation"),
        comparison=as_str(value_of(obj, "comparison", path, ""), f"{path}.comparison"),
        consensus=as_bool(value_of(obj, "consensus", path, False), f"{path}.consensus"),
        consensus_reason=as_str(value_of(obj, "consensus_reason", path, ""), f"{path}.consensus_reason"),
        comparisons=comparisons,
        invalid_comparison_lines=as_int(
            value_of(obj, "invalid_comparison_lines", path, 0), f"{path}.invalid_comparison_lines", 0
        ),
        spans=spans,
        error=error,
    )


def as_stored_comparisons(raw: object, path: str, author: int) -> tuple[Comparison, ...]:
    """A turn's ``comparisons``: ``{"author", "a", "op", "b"}`` objects, each by the turn's agent."""
    found = []
    for k, item in enumerate(as_list(raw, path)):
        where = f"{path}[{k}]"
        obj = as_mapping(item, where)
        stored_author = as_int(value_of(obj, "author", where, author), f"{where}.author")
        if stored_author != author:
            raise fail(f"{where}.author", f"is {stored_author} but the turn belongs to agent {author}")
        found.append(
            Comparison(
                as_int(value_of(obj, "a", where), f"{where}.a"),
                as_op(value_of(obj, "op", where), f"{where}.op"),
                as_int(value_of(obj, "b", where), f"{where}.b"),
            )
        )
    return tuple(found)


def check_agrees(
    obj: JsonMapping, key: str, path: str, expected: object, read: Callable[[JsonValue, str], object]
) -> None:
    """A value the transcript states (when it states ``key``) must equal the one its turns give."""
    if key not in obj:
        return
    where = f"{path}.{key}" if path else key
    value = read(obj[key], where)
    if value != expected:
        raise fail(where, f"is {short_repr(value)} but the transcript's turns give {expected!r}")
