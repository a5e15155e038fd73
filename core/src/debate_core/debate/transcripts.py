"""The transcript format: one JSON object per debate, for logs, ``debate score`` and analysis.

``record_to_json`` writes the full form (see docs/transcript-format.md); ``load_transcript``
reads it back, or reads the minimal form::

    {"num_agents": 3, "answer": "42", "turns": [{"round": 1, "agent": 0, "text": "<solution>..."}]}

parsing each raw text itself and applying the authorship rules. Step, turn index and
visible turns are derived from the turns' order and the protocol's coordinator (its
``visible_at`` rule; ``sequential`` when the transcript names none); values written in the file
must agree with them. Every
problem raises ``TranscriptError`` naming the key path (``turns[3].agent``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from debate_core.debate.coordinators import DEFAULT_PROTOCOL, visibility_rule
from debate_core.errors import DebateError, LimitExceeded, TranscriptError
from debate_core.files import atomic_write_text
from debate_core.limits import check_limit, check_nesting, loads_json, nesting_message, read_limited_bytes, short_repr
from debate_core.records import (
    CONSENSUS_RULES,
    CheckedComparisons,
    Comparison,
    ConsensusRule,
    DebateRecord,
    HistoryIndex,
    Message,
    OutputParser,
    ParsedResponse,
    ParseError,
    SectionSpan,
    Turn,
    apply_authorship,
    round_reaches_consensus,
)

FORMAT_NAME = "debate-transcript"
FORMAT_VERSION = 2

_MISSING = object()


# ------------------------------------------------------------------ writing


def parsed_to_json(response: ParsedResponse) -> dict[str, Any]:
    """The parsed fields of one response as plain JSON data."""
    return {
        "solution": response.solution,
        "evaluation": response.evaluation,
        "comparison": response.comparison,
        "consensus": response.consensus,
        "consensus_reason": response.consensus_reason,
        "comparisons": [[c.a, c.op, c.b] for c in response.comparisons],
        "invalid_comparison_lines": response.invalid_comparison_lines,
        "spans": [{"name": s.name, "start": s.start, "end": s.end} for s in response.spans],
        "error": None if response.error is None else {"code": response.error.code, "message": response.error.message},
    }


def turn_to_json(turn: Turn) -> dict[str, Any]:
    """One turn as plain JSON data."""
    return {
        "round": turn.round,
        "agent": turn.agent,
        "step": turn.step,
        "turn_index": turn.turn_index,
        "visible_turns": turn.visible_turns,
        "informed": turn.informed,
        "persona": turn.persona,
        "text": turn.text,
        "parsed": parsed_to_json(turn.response),
        "comparisons": [{"author": turn.agent, "a": c.a, "op": c.op, "b": c.b} for c in turn.comparisons],
        "self_comparisons": turn.self_comparisons,
        "malformed_comparisons": turn.malformed_comparisons,
        "grade": turn.grade,
        **({"prompt": [{"role": m.role, "content": m.content} for m in turn.prompt]} if turn.prompt else {}),
    }


def record_to_json(record: DebateRecord) -> dict[str, Any]:
    """A debate record in the full transcript form."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "debate_id": record.debate_id,
        "question": record.question,
        "answer": record.answer,
        "num_agents": record.num_agents,
        "protocol": record.protocol,
        "max_rounds": record.max_rounds,
        "consensus_rule": record.consensus_rule,
        "consensus_reached": record.consensus_reached,
        "aborted": record.aborted,
        "abort_reason": record.abort_reason,
        "turns": [turn_to_json(t) for t in record.turns],
    }


def dumps_transcript(record: DebateRecord, indent: int | None = 2) -> str:
    """The transcript as JSON text (non-ASCII kept readable when it can be encoded as UTF-8)."""
    data = record_to_json(record)
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them rather than lose them
        text = json.dumps(data, ensure_ascii=True, indent=indent)
    return text


def save_transcript(record: DebateRecord, path: str | os.PathLike[str]) -> Path:
    """Write the transcript to ``path`` atomically (a temporary file renamed over it)."""
    target = Path(path)
    atomic_write_text(target, dumps_transcript(record) + "\n")
    return target


# ------------------------------------------------------------------ reading


def _fail(path: str, message: str) -> TranscriptError:
    return TranscriptError(f"{path}: {message}" if path else message)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _field(obj: Mapping[str, Any], key: str, path: str, default: Any = _MISSING) -> Any:
    if key in obj:
        return obj[key]
    if default is _MISSING:
        raise _fail(path, f"missing required key '{key}'")
    return default


def _int(value: Any, path: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"expected an integer, got {_type_name(value)} {short_repr(value)}")
    if minimum is not None and value < minimum:
        raise _fail(path, f"must be at least {minimum}, got {value}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"expected a string, got {_type_name(value)} {short_repr(value)}")
    return value


def _optional_str(value: Any, path: str) -> str | None:
    return None if value is None else _str(value, path)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"expected true or false, got {_type_name(value)} {short_repr(value)}")
    return value


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(path, f"expected an object, got {_type_name(value)}")
    return value


def _list(value: Any, path: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise _fail(path, f"expected a list, got {_type_name(value)}")
    return value


def _prompt(value: Any, path: str) -> tuple[Message, ...]:
    messages = []
    for index, raw in enumerate(_list(value, path)):
        where = f"{path}[{index}]"
        message = _mapping(raw, where)
        role = _str(_field(message, "role", where), f"{where}.role")
        content = _str(_field(message, "content", where), f"{where}.content")
        messages.append(Message(role, content))
    return tuple(messages)


def _op(value: Any, path: str) -> Any:
    if value not in (">", "="):
        raise _fail(path, f"expected '>' or '=', got {short_repr(value)}")
    return value


def _parsed_from_json(raw: Any, path: str) -> ParsedResponse:
    obj = _mapping(raw, path)
    comparisons = []
    for k, item in enumerate(_list(_field(obj, "comparisons", path, []), f"{path}.comparisons")):
        where = f"{path}.comparisons[{k}]"
        triple = _list(item, where)
        if len(triple) != 3:
            raise _fail(where, f"expected [a, op, b], got {short_repr(list(triple), 200)}")
        comparisons.append(
            Comparison(_int(triple[0], f"{where}[0]"), _op(triple[1], f"{where}[1]"), _int(triple[2], f"{where}[2]"))
        )
    spans = []
    for k, item in enumerate(_list(_field(obj, "spans", path, []), f"{path}.spans")):
        where = f"{path}.spans[{k}]"
        span = _mapping(item, where)
        spans.append(
            SectionSpan(
                _str(_field(span, "name", where), f"{where}.name"),
                _int(_field(span, "start", where), f"{where}.start", 0),
                _int(_field(span, "end", where), f"{where}.end", 0),
            )
        )
    error_raw = _field(obj, "error", path, None)
    error = None
    if error_raw is not None:
        err = _mapping(error_raw, f"{path}.error")
        error = ParseError(
            _str(_field(err, "code", f"{path}.error"), f"{path}.error.code"),
            _str(_field(err, "message", f"{path}.error"), f"{path}.error.message"),
        )
    return ParsedResponse(
        solution=_str(_field(obj, "solution", path, ""), f"{path}.solution"),
        evaluation=_str(_field(obj, "evaluation", path, ""), f"{path}.evaluation"),
        comparison=_str(_field(obj, "comparison", path, ""), f"{path}.comparison"),
        consensus=_bool(_field(obj, "consensus", path, False), f"{path}.consensus"),
        consensus_reason=_str(_field(obj, "consensus_reason", path, ""), f"{path}.consensus_reason"),
        comparisons=tuple(comparisons),
        invalid_comparison_lines=_int(
            _field(obj, "invalid_comparison_lines", path, 0), f"{path}.invalid_comparison_lines", 0
        ),
        spans=tuple(spans),
        error=error,
    )


def _stored_comparisons(raw: Any, path: str, author: int) -> tuple[Comparison, ...]:
    found = []
    for k, item in enumerate(_list(raw, path)):
        where = f"{path}[{k}]"
        obj = _mapping(item, where)
        stored_author = _int(_field(obj, "author", where, author), f"{where}.author")
        if stored_author != author:
            raise _fail(f"{where}.author", f"is {stored_author} but the turn belongs to agent {author}")
        found.append(
            Comparison(
                _int(_field(obj, "a", where), f"{where}.a"),
                _op(_field(obj, "op", where), f"{where}.op"),
                _int(_field(obj, "b", where), f"{where}.b"),
            )
        )
    return tuple(found)


def _check_agrees(obj: Mapping[str, Any], key: str, path: str, expected: Any, read: Any) -> None:
    if key not in obj:
        return
    where = f"{path}.{key}" if path else key
    value = read(obj[key], where)
    if value != expected:
        raise _fail(where, f"is {short_repr(value)} but the transcript's turns give {expected!r}")


def _grade(value: Any, path: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(path, f"expected a number or null, got {_type_name(value)} {short_repr(value)}")
    return float(value)


def _answer(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return _optional_str(value, "answer")


def _default_parser() -> OutputParser:
    from debate_core.debate.xml_parser import XmlParser

    return XmlParser()


def _read_text(path: Path) -> str:
    """The text of a transcript file, read only up to the ``input_bytes`` limit (docs/limits.md);
    errors say what is wrong, not where."""
    try:
        raw = read_limited_bytes(path, "transcript file")
    except LimitExceeded:
        raise
    except DebateError as exc:
        raise TranscriptError(str(exc).removeprefix(f"{path}: ")) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def _read_file(path: Path) -> Mapping[str, Any]:
    """The decoded JSON object of a transcript file; errors say what is wrong, not where
    (``load_transcript`` puts the file name in front, once). Its JSON may nest only to the
    ``nesting`` limit (docs/limits.md)."""
    text = _read_text(path)
    try:
        data = loads_json(text)
    except ValueError as exc:
        raise TranscriptError(str(exc)) from None
    if not isinstance(data, Mapping):
        raise TranscriptError(f"a transcript is a JSON object, got {_type_name(data)}")
    return data


def load_transcript(
    source: str | os.PathLike[str] | Mapping[str, Any], parser: OutputParser | None = None
) -> DebateRecord:
    """Read a transcript (a file path or an already-decoded JSON object), full or minimal form.

    Turns without ``parsed`` fields are parsed with ``parser`` (default: the built-in XML
    parser); the authorship rules are always applied to the parsed comparisons.

    Raises:
        TranscriptError: one line, ``FILE: what is wrong`` for a file that cannot be read or
            decoded, ``FILE: key.path: what is wrong`` for the first problem inside it (no
            ``FILE:`` prefix when ``source`` is already a JSON object).
    """
    if isinstance(source, Mapping):
        return _load(source, parser or _default_parser())
    path = Path(source)
    try:
        return _load(_read_file(path), parser or _default_parser())
    except (TranscriptError, LimitExceeded) as exc:
        if str(exc).startswith(f"{path}: "):
            raise
        raise type(exc)(f"{path}: {exc}") from None


def load_transcripts(path: str | os.PathLike[str], parser: OutputParser | None = None) -> list[DebateRecord]:
    """Every debate of a file: one transcript (a JSON object), a JSON list of them, or JSON Lines
    with one transcript per line (what ``debate run --questions ... --out`` writes).

    Raises:
        TranscriptError: one line naming the file (and the line, for JSON Lines) and what is wrong.
    """
    file = Path(path)
    chosen = parser or _default_parser()
    try:
        text = _read_text(file)
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as whole:
            return _load_lines(file, text, chosen, whole)
        except (RecursionError, ValueError):  # nested too deeply, or an integer too long to read
            data = _loads(text)  # says which, in one line
        check_nesting(data, lambda depth: TranscriptError(f"nested too deeply {nesting_message()}"))
        if isinstance(data, Mapping):
            return [_load(data, chosen)]
        if isinstance(data, list):
            if not data:
                raise TranscriptError("holds no transcripts (an empty JSON list)")
            records = []
            for k, item in enumerate(data):
                try:
                    records.append(_load(_mapping(item, ""), chosen))
                except TranscriptError as exc:
                    raise TranscriptError(f"[{k}]: {exc}") from None
            return records
        raise TranscriptError(f"a transcript is a JSON object, got {_type_name(data)}")
    except TranscriptError as exc:
        raise TranscriptError(f"{file}: {exc}") from None


def _loads(text: str) -> Any:
    """JSON text within the ``nesting`` limit (docs/limits.md); one-line errors."""
    try:
        return loads_json(text)
    except ValueError as exc:
        raise TranscriptError(str(exc)) from None


def _load_lines(file: Path, text: str, parser: OutputParser, whole: json.JSONDecodeError) -> list[DebateRecord]:
    """JSON Lines: one transcript per non-blank line; errors name the line."""
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(lines) < 2:
        raise TranscriptError(f"not valid JSON: {whole}")
    records = []
    for number, line in lines:
        try:
            data = _loads(line)
        except TranscriptError as exc:
            raise TranscriptError(f"line {number}: {exc}") from None
        if not isinstance(data, Mapping):
            raise TranscriptError(f"line {number}: a transcript is a JSON object, got {_type_name(data)}")
        try:
            records.append(_load(data, parser))
        except TranscriptError as exc:
            raise TranscriptError(f"line {number}: {exc}") from None
    return records


def _load(data: Mapping[str, Any], parser: OutputParser) -> DebateRecord:
    if "format" in data and data["format"] != FORMAT_NAME:
        raise _fail("format", f"expected {FORMAT_NAME!r}, got {short_repr(data['format'])}")
    if "version" in data:
        version = _int(data["version"], "version", 1)
        if version > FORMAT_VERSION:
            raise _fail("version", f"this debate-core reads transcripts up to version {FORMAT_VERSION}, got {version}")
    num_agents = _int(_field(data, "num_agents", ""), "num_agents", 1)
    check_limit("agents", num_agents, "num_agents")
    protocol = _str(_field(data, "protocol", "", DEFAULT_PROTOCOL), "protocol")
    if not protocol:
        raise _fail("protocol", "must not be empty")
    raw_turns = _list(_field(data, "turns", ""), "turns")
    check_limit("turns", len(raw_turns), "turns")

    keyed: list[tuple[tuple[int, int], Mapping[str, Any], str]] = []
    seen: dict[tuple[int, int], str] = {}
    for k, raw in enumerate(raw_turns):
        path = f"turns[{k}]"
        obj = _mapping(raw, path)
        round_ = _int(_field(obj, "round", path), f"{path}.round", 1)
        check_limit("rounds", round_, f"{path}.round")
        agent = _int(_field(obj, "agent", path), f"{path}.agent", 0)
        if agent >= num_agents:
            raise _fail(f"{path}.agent", f"is {agent} but the debate has {num_agents} agents (0 to {num_agents - 1})")
        if (round_, agent) in seen:
            raise _fail(path, f"agent {agent} already has a turn in round {round_} ({seen[(round_, agent)]})")
        seen[(round_, agent)] = path
        keyed.append(((round_, agent), obj, path))
    keyed.sort(key=lambda item: item[0])

    visible_at = visibility_rule(protocol)  # the coordinator's rule; None: the transcript's own
    history = HistoryIndex([agent for (_, agent), _, _ in keyed])
    turns: list[Turn] = []
    steps: dict[int, int] = {}
    turns_before_round: dict[int, int] = {}
    for index, ((round_, agent), obj, path) in enumerate(keyed):
        turns_before_round.setdefault(round_, index)
        text = _str(_field(obj, "text", path), f"{path}.text")
        check_limit("response_chars", len(text), f"{path}.text")
        parsed_raw = obj.get("parsed")
        response = parser.parse(text) if parsed_raw is None else _parsed_from_json(parsed_raw, f"{path}.parsed")
        authored = apply_authorship(response.comparisons, agent, num_agents) if response.ok else CheckedComparisons()
        step = steps.get(agent, 0)
        steps[agent] = step + 1
        ruled = None if visible_at is None else visible_at(index, turns_before_round[round_])
        visible = ruled if ruled is not None else _int(obj.get("visible_turns", index), f"{path}.visible_turns", 0)
        _check_agrees(obj, "step", path, step, _int)
        _check_agrees(obj, "turn_index", path, index, _int)
        _check_agrees(obj, "visible_turns", path, visible, _int)
        informed = (
            _bool(obj["informed"], f"{path}.informed")
            if "informed" in obj
            else history.others_seen(agent, visible) == num_agents - 1
        )
        _check_agrees(obj, "self_comparisons", path, authored.self_comparisons, _int)
        _check_agrees(obj, "malformed_comparisons", path, authored.malformed, _int)
        if "comparisons" in obj:
            stored = _stored_comparisons(obj["comparisons"], f"{path}.comparisons", agent)
            if stored != authored.valid:
                raise _fail(
                    f"{path}.comparisons",
                    "do not match the parsed comparisons after the authorship rules "
                    f"(expected {[[c.a, c.op, c.b] for c in authored.valid]})",
                )
        turns.append(
            Turn(
                round=round_,
                agent=agent,
                step=step,
                turn_index=index,
                visible_turns=visible,
                text=text,
                response=response,
                persona=_str(_field(obj, "persona", path, ""), f"{path}.persona"),
                comparisons=authored.valid,
                self_comparisons=authored.self_comparisons,
                malformed_comparisons=authored.malformed,
                grade=_grade(obj.get("grade"), f"{path}.grade"),
                informed=informed,
                prompt=_prompt(obj.get("prompt", []), f"{path}.prompt"),
            )
        )

    failed = next((t for t in turns if t.failed), None)
    rounds = max((t.round for t in turns), default=0)
    last_round = [t for t in turns if t.round == rounds]
    # transcripts written before the consensus rule existed were made under the literal rule
    rule = _consensus_rule(data.get("consensus_rule", "any"), "consensus_rule")
    consensus = failed is None and round_reaches_consensus(last_round, num_agents, rule)
    aborted = failed is not None
    _check_agrees(data, "aborted", "", aborted, _bool)
    _check_agrees(data, "consensus_reached", "", consensus, _bool)
    computed_reason = None
    if failed is not None and failed.response.error is not None:
        error = failed.response.error
        computed_reason = f"round {failed.round}, agent {failed.agent}: {error.code}: {error.message}"
    abort_reason = _optional_str(data.get("abort_reason", computed_reason), "abort_reason")
    max_rounds = _int(_field(data, "max_rounds", "", max(rounds, 1)), "max_rounds", 1)
    check_limit("rounds", max_rounds, "max_rounds")
    if max_rounds < rounds:
        raise _fail("max_rounds", f"is {max_rounds} but the turns reach round {rounds}")
    return DebateRecord(
        question=_str(_field(data, "question", "", ""), "question"),
        num_agents=num_agents,
        turns=tuple(turns),
        protocol=protocol,
        max_rounds=max_rounds,
        answer=_answer(data.get("answer")),
        debate_id=_str(_field(data, "debate_id", "", ""), "debate_id"),
        consensus_reached=consensus,
        aborted=aborted,
        abort_reason=abort_reason if aborted else None,
        consensus_rule=rule,
    )


def _consensus_rule(value: Any, path: str) -> ConsensusRule:
    if value not in CONSENSUS_RULES:
        raise _fail(path, f"must be one of {', '.join(CONSENSUS_RULES)}, got {short_repr(value)}")
    rule: ConsensusRule = value
    return rule
