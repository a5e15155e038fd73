"""The documented limits on what debate-core reads (docs/limits.md), and bounded readers.

Every input a command reads is checked against a limit before it can cost much time or memory:
the size of a file, the number of agents, rounds and turns of a debate, the length of one
response, the nesting depth of JSON and TOML. Past a limit the command stops with one
:class:`~debate_core.errors.LimitExceeded` line that names the limit and how to raise it:
each limit is read from its environment variable (``DEBATE_MAX_AGENTS=200``) when that is
set, else it has its default.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from debate_core.errors import DebateError, LimitExceeded

__all__ = [
    "LIMITS",
    "Limit",
    "check_limit",
    "check_nesting",
    "exceeded_message",
    "how_to_raise",
    "nesting_message",
    "limit_value",
    "long_integer_message",
    "loads_json",
    "read_limited_bytes",
    "read_limited_text",
    "short_repr",
]


@attrs.frozen
class Limit:
    """One documented limit: its default, the environment variable that raises it, and what it counts."""

    name: str
    default: int
    env: str
    counts: str
    """What the number counts, for messages (``agents in a debate``)."""


LIMITS: dict[str, Limit] = {
    limit.name: limit
    for limit in (
        Limit("input_bytes", 16 * 1024 * 1024, "DEBATE_MAX_INPUT_BYTES", "bytes in an input file"),
        Limit("dataset_bytes", 256 * 1024 * 1024, "DEBATE_MAX_DATASET_BYTES", "bytes in a dataset file"),
        Limit("metrics_bytes", 1024 * 1024 * 1024, "DEBATE_MAX_METRICS_BYTES", "bytes in a run's metrics.jsonl"),
        Limit("agents", 100, "DEBATE_MAX_AGENTS", "agents in a debate"),
        Limit("rounds", 100, "DEBATE_MAX_ROUNDS", "rounds in a debate"),
        Limit("turns", 10_000, "DEBATE_MAX_TURNS", "turns in a transcript"),
        Limit("response_chars", 1_000_000, "DEBATE_MAX_RESPONSE_CHARS", "characters in one response"),
        Limit("tokens_per_turn", 1_000_000, "DEBATE_MAX_TOKENS_PER_TURN", "sampled tokens per turn"),
        Limit("nesting", 64, "DEBATE_MAX_NESTING", "levels of nesting in a JSON or TOML value"),
    )
}
"""Every limit by name; docs/limits.md lists them (a test keeps the two in step)."""


def limit_value(name: str) -> int:
    """The value of limit ``name``: its environment variable when set, else its default.

    Raises:
        LimitExceeded: the environment variable is set to something that is not a positive integer.
    """
    limit = LIMITS[name]
    text = os.environ.get(limit.env, "").strip()
    if not text:
        return limit.default
    if not text.isdigit() or len(text) > 18 or int(text) < 1:
        raise LimitExceeded(f"{limit.env}={text[:40]!r}: must be a positive whole number (docs/limits.md)")
    return int(text)


def how_to_raise(name: str) -> str:
    """``(raise it with DEBATE_MAX_...=N; see docs/limits.md)``: the end of every limit message."""
    return f"(raise it with {LIMITS[name].env}=N; see docs/limits.md)"


def exceeded_message(name: str, value: int | str) -> str:
    """``<value>, more than the limit of <n> <what> (raise it with <ENV>=N; ...)``."""
    return f"{value}, more than the limit of {limit_value(name)} {LIMITS[name].counts} {how_to_raise(name)}"


def check_limit(name: str, value: int, where: str) -> None:
    """Raise :class:`LimitExceeded` naming ``where`` when ``value`` is past limit ``name``."""
    if value > limit_value(name):
        raise LimitExceeded(f"{where}: {exceeded_message(name, short_repr(value))}")


def read_limited_bytes(path: Path, what: str = "file", limit: str = "input_bytes") -> bytes:
    """The bytes of ``path``, read only up to the ``limit`` (``input_bytes`` unless told) so that
    ``/dev/zero`` or an endless pipe costs no more than that; ``what`` names the file in messages.

    Raises:
        LimitExceeded: the file is longer than the limit.
        DebateError: the file is missing, a folder, or cannot be read (the message names it).
    """
    most = limit_value(limit)
    try:
        with open(path, "rb") as handle:
            data = handle.read(most + 1)
    except FileNotFoundError:
        raise DebateError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise DebateError(f"{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise DebateError(f"{path}: cannot be read: {exc.strerror or type(exc).__name__}") from None
    if len(data) > most:
        raise LimitExceeded(f"{path}: longer than the limit of {most} {LIMITS[limit].counts} {how_to_raise(limit)}")
    return data


def read_limited_text(path: Path, what: str = "file", limit: str = "input_bytes") -> str:
    """The UTF-8 text of ``path`` (see :func:`read_limited_bytes`).

    Raises:
        DebateError: as :func:`read_limited_bytes`, or the bytes are not UTF-8 (the message gives the offset).
    """
    data = read_limited_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DebateError(f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def loads_json(text: str) -> Any:  # Any: a JSON value (records' JsonValue, a layer above limits)
    """Decode JSON text whose values nest at most ``nesting`` levels deep.

    Raises:
        ValueError: with a one-line reason: not JSON, nested too deeply, or an integer too long to
            read (more digits than Python converts, ``sys.get_int_max_str_digits()``).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"nested too deeply {nesting_message()}") from None
    except ValueError as exc:  # an integer with more digits than int() converts
        raise ValueError(long_integer_message(exc)) from None
    check_nesting(data, lambda depth: ValueError(f"nested too deeply {nesting_message()}"))
    return data


def long_integer_message(exc: ValueError) -> str:
    """The one line for a number with more digits than Python converts (``sys.get_int_max_str_digits``)."""
    found = re.search(r"value has (\d+) digits", str(exc))
    digits = f" of {found.group(1)} digits" if found else ""
    return (
        f"not accepted: an integer{digits}, more than the {sys.get_int_max_str_digits()} digits Python reads "
        "(raise it with PYTHONINTMAXSTRDIGITS=N)"
    )


def nesting_message() -> str:
    """``(more than N levels; raise it with ...)`` for data nested past the ``nesting`` limit."""
    return f"(more than {limit_value('nesting')} levels; raise it with {LIMITS['nesting'].env}=N; see docs/limits.md)"


def check_nesting(data: object, error: Callable[[int], Exception]) -> None:
    """Raise ``error(depth)`` when lists and objects in ``data`` nest deeper than the ``nesting`` limit.

    Iterative, so that data nested too deeply for Python's recursion is reported, not crashed on.
    """
    most = limit_value("nesting")
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Iterable[object] = value.values()
        elif isinstance(value, list | tuple):
            children = value
        else:
            continue
        if depth > most:
            raise error(depth)
        stack.extend((child, depth + 1) for child in children)


def short_repr(value: object, limit: int = 60) -> str:
    """A ``repr`` for a message, cut to ``limit`` characters; safe on huge or deeply nested values
    and on integers too long to print."""
    if isinstance(value, list | tuple | dict):
        return f"a {'list' if not isinstance(value, dict) else 'object'} of {len(value)} items"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
