"""Every plugin result checked where it crosses into debate-core (docs/limits.md#what-a-bad-plugin-gets).

A plugin is called through one of the functions here, which runs the hook, checks what it
returned (its type, its length, its fields, its range) and turns an exception or a bad result
into one :class:`~debate_core.errors.ComponentFailure` line that names the plugin as the run file
chose it (its entry-point name or import path), the hook, the input it was given (a debate id, a
problem id, a turn) and what it returned or raised::

    reward plugin 'my_rewards:majority' returned None: not a RewardResult (a NoneType), in __call__
    on debate 'it3-d1' (problem 'train-4')

The trainer then stops before any update or checkpoint that would use the value
(docs/training.md#checkpoints-stops-faults). This module is the one home of these checks: the
debate loop, the trainer, evaluation and ``debate score`` all call plugins through it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TypeVar

import attrs

from debate_core.errors import ComponentFailure, DebateError
from debate_core.limits import short_repr
from debate_core.records import (
    DebateAnswer,
    DebateRecord,
    Grade,
    HistoryEntry,
    ParsedResponse,
    Persona,
    Problem,
    RewardResult,
    StopCondition,
    Turn,
)

__all__ = [
    "REWARD_BOUND",
    "PluginCall",
    "call_async_plugin",
    "call_plugin",
    "check_judge_verdicts",
    "check_reward_result",
    "checked_debate_answer",
    "checked_decoded_text",
    "checked_grade",
    "checked_history",
    "checked_instance",
    "checked_parsed_response",
    "checked_persona",
    "checked_problems",
    "checked_prompt",
    "checked_reward_result",
    "checked_stop_condition",
    "reward_result_problems",
]

T = TypeVar("T")

REWARD_BOUND = 1e6
"""The largest reward magnitude training accepts (docs/rewards.md#the-reward-contract): finite is
not enough, since rewards near the float limit overflow when advantages are computed and turn
every weight into NaN. Rewards of any sensible scale are far below it."""


@attrs.frozen
class PluginCall:
    """One call of a plugin's hook, as its failure message names it."""

    kind: str
    """The kind of plugin in words (``reward``, ``history policy``)."""
    name: str
    """The plugin as the run file chose it: its entry-point name or its import path."""
    hook: str
    """The method called (``__call__``, ``parse``, ``problems``)."""
    given: str
    """The input it was given, in words (``debate 'it3-d1' (problem 'train-4')``, ``split 'train'``)."""

    def failure(self, outcome: str) -> ComponentFailure:
        """The one-line error for ``outcome`` (``raised ValueError: ...``, ``returned None, ...``)."""
        plugin = f"{self.kind} plugin '{self.name}'" if self.name else f"{self.kind} plugin"
        on = f" on {self.given}" if self.given else ""
        return ComponentFailure(f"{plugin} {outcome}, in {self.hook}{on}")

    def returned(self, value: object, problems: Sequence[str]) -> ComponentFailure:
        return self.failure(f"returned {short_repr(value, 80)}: {'; '.join(problems)}")


def _raised(call: PluginCall, exc: Exception) -> ComponentFailure:
    text = " ".join(str(exc).split())
    return call.failure(f"raised {type(exc).__name__}: {text}" if text else f"raised {type(exc).__name__}")


def call_plugin(call: PluginCall, hook: Callable[[], T]) -> T:
    """Run ``hook``; an exception becomes one ``ComponentFailure`` naming the call. A
    ``DebateError`` passes through as it is: the plugin wrote it for the user (a dataset's missing
    file), or it already names a plugin (a wrapper reward's inner one)."""
    try:
        return hook()
    except (DebateError, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise _raised(call, exc) from exc


async def call_async_plugin(call: PluginCall, hook: Callable[[], Awaitable[T]]) -> T:
    """:func:`call_plugin` for a coroutine hook (a judge's ``compare``)."""
    try:
        return await hook()
    except (DebateError, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise _raised(call, exc) from exc


def checked_instance(call: PluginCall, hook: Callable[[], object], expected: type[T]) -> T:
    """The result of ``hook``, which must be an instance of ``expected`` (a coordinator's turn state)."""
    value = call_plugin(call, hook)
    if not isinstance(value, expected):
        raise call.returned(value, [f"not a {expected.__name__}"])
    return value


def _wrong_type(value: object, expected: type) -> list[str]:
    return [] if isinstance(value, expected) else [f"not a {expected.__name__}"]


def _fields_of_type(value: object, fields: dict[str, type | tuple[type, ...]]) -> list[str]:
    """Fields of an attrs record whose values are not of their declared type (attrs does not check)."""
    problems = []
    for field, expected in fields.items():
        got = getattr(value, field)
        if not isinstance(got, expected) or (expected in (int, float) and isinstance(got, bool)):
            problems.append(f"'{field}' is {short_repr(got, 40)}")
    return problems


# ---------------------------------------------------------------- rewards


def _out_of_bounds(value: object) -> bool:
    return (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or abs(value) > REWARD_BOUND
    )


def reward_result_problems(debate: DebateRecord, result: object, *, check_metrics: bool = True) -> list[str]:
    """Every way ``result`` breaks the reward contract for ``debate`` (empty when it is fine).

    Metrics are only diagnostics: ``check_metrics=False`` leaves them out of the check."""
    if not isinstance(result, RewardResult):
        return [f"not a RewardResult (a {type(result).__name__})"]
    problems: list[str] = []
    n = debate.num_agents
    if len(result.agent_rewards) != n:
        problems.append(f"{len(result.agent_rewards)} agent rewards for {n} agents")
    bad = [i for i, r in enumerate(result.agent_rewards) if _out_of_bounds(r)]
    if bad:
        shown = ", ".join(f"{i}: {result.agent_rewards[i]!r}" for i in bad)
        problems.append(f"agent rewards not finite or beyond ±{REWARD_BOUND:g} ({shown})")
    for stream, per_agent in result.step_streams.items():
        if len(per_agent) != n:
            problems.append(f"stream '{stream}' has {len(per_agent)} agents, the debate {n}")
            continue
        for agent, steps in enumerate(per_agent):
            expected = len(debate.turns_of(agent))
            if len(steps) != expected:
                problems.append(f"stream '{stream}' has {len(steps)} steps for agent {agent}, who took {expected}")
            if any(_out_of_bounds(x) for x in steps):
                bound = f"±{REWARD_BOUND:g}"
                problems.append(f"stream '{stream}' has a reward not finite or beyond {bound} for agent {agent}")
    for stream, weight in result.stream_weights.items():
        if _out_of_bounds(weight):
            problems.append(f"stream weight of '{stream}' is {weight} (finite and within ±{REWARD_BOUND:g})")
    for name, value in result.metrics.items() if check_metrics else ():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            problems.append(f"metric '{name}' is {value!r}, not a finite number")
    return problems


def check_reward_result(
    debate: DebateRecord, result: RewardResult, who: str = "reward", *, check_metrics: bool = True
) -> None:
    """Raise ``ComponentFailure`` naming ``who``, the debate and every problem of ``result``."""
    problems = reward_result_problems(debate, result, check_metrics=check_metrics)
    if problems:
        where = f" for debate '{debate.debate_id}'" if debate.debate_id else ""
        raise ComponentFailure(f"{who} returned an invalid result{where}: {'; '.join(problems)}")


def checked_reward_result(call: PluginCall, debate: DebateRecord, hook: Callable[[], object]) -> RewardResult:
    """A reward's result for ``debate``: a ``RewardResult`` that fits it (docs/rewards.md#the-reward-contract)."""
    value = call_plugin(call, hook)
    problems = reward_result_problems(debate, value)
    if problems or not isinstance(value, RewardResult):
        raise call.returned(value, problems)
    return value


# ---------------------------------------------------------------- tasks


def checked_problems(call: PluginCall, hook: Callable[[], object]) -> list[Problem]:
    """A dataset's problems of one split: a sequence of ``Problem`` with string ids, questions and
    answers, each id once."""
    value = call_plugin(call, hook)
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise call.returned(value, ["not a sequence of Problem"])
    items = list(value)
    problems: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, Problem):
            problems.append(f"item {index} is {short_repr(item, 40)}, not a Problem")
        else:
            fields = _fields_of_type(item, {"id": str, "question": str, "answer": (str, type(None))})
            problems.extend(f"problem {index}: {p}" for p in fields)
            if isinstance(item.id, str) and item.id in seen:
                problems.append(f"problem id '{item.id}' appears twice")
            seen.add(str(item.id))
        if len(problems) >= 3:
            break
    if problems:
        raise call.failure(f"returned {len(items)} items: {'; '.join(problems)}")
    return items


def checked_grade(call: PluginCall, hook: Callable[[], object]) -> Grade:
    """A grader's verdict: a ``Grade`` whose ``formatted`` and ``correct`` are booleans."""
    value = call_plugin(call, hook)
    problems = _wrong_type(value, Grade) or _fields_of_type(
        value, {"formatted": bool, "correct": bool, "extracted": (str, type(None))}
    )
    if problems or not isinstance(value, Grade):
        raise call.returned(value, problems)
    return value


def checked_debate_answer(call: PluginCall, hook: Callable[[], object]) -> DebateAnswer:
    """An answer rule's answer: a ``DebateAnswer`` whose answer and solution are both text or
    both ``None``, and whose first candidate, when it has one, is the answer it gives."""
    value = call_plugin(call, hook)
    problems = _wrong_type(value, DebateAnswer) or _fields_of_type(
        value, {"rule": str, "answer": (str, type(None)), "solution": (str, type(None)), "candidates": tuple}
    )
    if not problems and isinstance(value, DebateAnswer):
        if (value.answer is None) != (value.solution is None):
            problems = ["answer and solution must both be set or both be None"]
        elif value.answer is not None and (not value.candidates or value.candidates[0].answer != value.answer):
            problems = ["its first candidate must be the answer it gives"]
    if problems or not isinstance(value, DebateAnswer):
        raise call.returned(value, problems)
    return value


# ---------------------------------------------------------------- debate components


def checked_parsed_response(call: PluginCall, hook: Callable[[], object]) -> ParsedResponse:
    """A parser's reading of one response: a ``ParsedResponse`` with text fields."""
    value = call_plugin(call, hook)
    problems = _wrong_type(value, ParsedResponse) or _fields_of_type(
        value,
        {"solution": str, "evaluation": str, "comparison": str, "consensus": bool, "consensus_reason": str},
    )
    if problems or not isinstance(value, ParsedResponse):
        raise call.returned(value, problems)
    return value


def checked_persona(call: PluginCall, hook: Callable[[], object]) -> Persona:
    """A persona: a name, a system prompt, and a temperature that is unset or finite and at least 0."""
    value = call_plugin(call, hook)
    problems = _wrong_type(value, Persona) or _fields_of_type(
        value, {"name": str, "system_prompt": str, "temperature": (int, float, type(None))}
    )
    temperature = value.temperature if not problems and isinstance(value, Persona) else None
    if temperature is not None and not (math.isfinite(temperature) and temperature >= 0):
        problems = [f"temperature {temperature!r} is not a finite number of at least 0"]
    if problems or not isinstance(value, Persona):
        raise call.returned(value, problems)
    return value


def checked_history(
    call: PluginCall, hook: Callable[[], object], visible: Sequence[Turn], current_round: int
) -> list[HistoryEntry]:
    """A history policy's selection: ``HistoryEntry`` items, each of a turn the agent may see
    (one of ``visible``, from a round up to ``current_round``)."""
    value = call_plugin(call, hook)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | list | tuple):
        raise call.returned(value, ["not a sequence of HistoryEntry"])
    seen = {(t.round, t.agent) for t in visible}
    problems = []
    for index, entry in enumerate(value):
        if not isinstance(entry, HistoryEntry):
            problems.append(f"item {index} is {short_repr(entry, 40)}, not a HistoryEntry")
        elif (entry.round, entry.agent) not in seen or entry.round > current_round:
            problems.append(f"item {index} is agent {entry.agent}'s turn of round {entry.round}, which it cannot see")
        if len(problems) >= 3:
            break
    if problems:
        raise call.failure(f"returned {len(value)} entries: {'; '.join(problems)}")
    return list(value)


def checked_prompt(call: PluginCall, hook: Callable[[], object]) -> list[int]:
    """A renderer's prompt: a non-empty list of token ids (non-negative integers)."""
    value = call_plugin(call, hook)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | list | tuple):
        raise call.returned(value, ["not a sequence of token ids"])
    tokens = list(value)
    bad = [t for t in tokens if isinstance(t, bool) or not isinstance(t, int) or t < 0]
    if not tokens or bad:
        why = "no tokens" if not tokens else f"{short_repr(bad[0], 40)} is not a token id (an integer of at least 0)"
        raise call.failure(f"returned {len(tokens)} items: {why}")
    return tokens


def checked_decoded_text(call: PluginCall, hook: Callable[[], object]) -> str:
    """A renderer's decoding of sampled tokens: a string."""
    value = call_plugin(call, hook)
    if not isinstance(value, str):
        raise call.returned(value, ["not a str"])
    return value


def checked_stop_condition(call: PluginCall, hook: Callable[[], object]) -> StopCondition:
    """A renderer's stop condition: a ``StopCondition`` of token ids and strings."""
    value = call_plugin(call, hook)
    problems = _wrong_type(value, StopCondition)
    if not problems and isinstance(value, StopCondition):
        if not all(isinstance(t, int) and not isinstance(t, bool) for t in value.token_ids):
            problems.append("token_ids holds a value that is not an integer")
        if not all(isinstance(s, str) and s for s in value.strings):
            problems.append("strings holds a value that is not a non-empty string")
    if problems or not isinstance(value, StopCondition):
        raise call.returned(value, problems)
    return value


def check_judge_verdicts(call: PluginCall, value: object, pairs: int) -> list[int | None]:
    """A judge's verdicts: one per pair, each 1, 0, -1, or None when the judge abstains
    (docs/rewards.md#a-stronger-judge-phased-out)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | list | tuple):
        raise call.returned(value, [f"not a sequence of {pairs} verdicts"])
    verdicts = list(value)
    problems = []
    if len(verdicts) != pairs:
        problems.append(f"{len(verdicts)} verdicts for {pairs} pairs")
    bad = [v for v in verdicts if v is not None and (isinstance(v, bool) or v not in (-1, 0, 1))]
    if bad:
        problems.append(f"verdict {short_repr(bad[0], 40)} is not 1, 0, -1 or None")
    if problems:
        raise call.returned(value, problems)
    return [None if v is None else int(v) for v in verdicts]
