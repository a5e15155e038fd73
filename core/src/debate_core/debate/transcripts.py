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

import attrs

from debate_core.debate.protocols import DEFAULT_PROTOCOL, visibility_rule
from debate_core.debate.transcript_fields import (
    as_answer,
    as_bool,
    as_consensus_rule,
    as_grade,
    as_int,
    as_list,
    as_mapping,
    as_optional_str,
    as_parsed,
    as_prompt,
    as_seats,
    as_stored_comparisons,
    as_str,
    check_agrees,
    fail,
    type_name,
    value_of,
)
from debate_core.errors import DebateError, LimitExceeded, TranscriptError
from debate_core.files import atomic_write_text
from debate_core.limits import check_limit, check_nesting, loads_json, nesting_message, read_limited_bytes, short_repr
from debate_core.records import (
    CheckedComparisons,
    DebateRecord,
    HistoryIndex,
    OutputParser,
    ParsedResponse,
    Turn,
    apply_authorship,
    apply_seated_authorship,
    round_reaches_consensus,
)
from debate_core.records.json_values import JsonMapping, JsonObject, JsonValue

FORMAT_NAME = "debate-transcript"
FORMAT_VERSION = 2


# ------------------------------------------------------------------ writing


def parsed_to_json(response: ParsedResponse) -> JsonObject:
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


def turn_to_json(turn: Turn) -> JsonObject:
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
        **({"seats": list(turn.seats)} if turn.seats else {}),
    }


def record_to_json(record: DebateRecord) -> JsonObject:
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


def _read_file(path: Path) -> JsonMapping:
    """The decoded JSON object of a transcript file; errors say what is wrong, not where
    (``load_transcript`` puts the file name in front, once). Its JSON may nest only to the
    ``nesting`` limit (docs/limits.md)."""
    text = _read_text(path)
    try:
        data = loads_json(text)
    except ValueError as exc:
        raise TranscriptError(str(exc)) from None
    if not isinstance(data, Mapping):
        raise TranscriptError(f"a transcript is a JSON object, got {type_name(data)}")
    return data


def load_transcript(source: str | os.PathLike[str] | JsonMapping, parser: OutputParser | None = None) -> DebateRecord:
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
            data: JsonValue = json.loads(text)
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
                    records.append(_load(as_mapping(item, ""), chosen))
                except TranscriptError as exc:
                    raise TranscriptError(f"[{k}]: {exc}") from None
            return records
        raise TranscriptError(f"a transcript is a JSON object, got {type_name(data)}")
    except TranscriptError as exc:
        raise TranscriptError(f"{file}: {exc}") from None


def _loads(text: str) -> JsonValue:
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
            raise TranscriptError(f"line {number}: a transcript is a JSON object, got {type_name(data)}")
        try:
            records.append(_load(data, parser))
        except TranscriptError as exc:
            raise TranscriptError(f"line {number}: {exc}") from None
    return records


@attrs.frozen
class _TurnEntry:
    """One turn object of a transcript, with its place in the debate and its key path."""

    round: int
    agent: int
    obj: JsonMapping
    path: str


@attrs.frozen
class _TurnReader:
    """What every turn of one transcript is read against: its agents, its parser and who
    answered in which order (for ``informed``)."""

    num_agents: int
    parser: OutputParser
    history: HistoryIndex


def _load(data: JsonMapping, parser: OutputParser) -> DebateRecord:
    """A debate record from a decoded transcript, full or minimal form; the first problem
    raises ``TranscriptError`` naming its key path."""
    _check_format(data)
    num_agents = as_int(value_of(data, "num_agents", ""), "num_agents", 1)
    check_limit("agents", num_agents, "num_agents")
    protocol = as_str(value_of(data, "protocol", "", DEFAULT_PROTOCOL), "protocol")
    if not protocol:
        raise fail("protocol", "must not be empty")
    raw_turns = as_list(value_of(data, "turns", ""), "turns")
    check_limit("turns", len(raw_turns), "turns")
    entries = _turn_entries(raw_turns, num_agents)
    turns = _read_turns(entries, protocol, _TurnReader(num_agents, parser, HistoryIndex([e.agent for e in entries])))
    return _record(data, turns, protocol, num_agents)


def _check_format(data: JsonMapping) -> None:
    """A stated format must be this one, and a stated version one this debate-core reads."""
    if "format" in data and data["format"] != FORMAT_NAME:
        raise fail("format", f"expected {FORMAT_NAME!r}, got {short_repr(data['format'])}")
    if "version" in data:
        version = as_int(data["version"], "version", 1)
        if version > FORMAT_VERSION:
            raise fail("version", f"this debate-core reads transcripts up to version {FORMAT_VERSION}, got {version}")


def _turn_entries(raw_turns: Sequence[JsonValue], num_agents: int) -> list[_TurnEntry]:
    """The turns in debate order (round, then agent), whatever their order in the file; an agent
    out of range or a second turn of one agent in a round is an error."""
    entries: list[_TurnEntry] = []
    seen: dict[tuple[int, int], str] = {}
    for k, raw in enumerate(raw_turns):
        path = f"turns[{k}]"
        obj = as_mapping(raw, path)
        round_ = as_int(value_of(obj, "round", path), f"{path}.round", 1)
        check_limit("rounds", round_, f"{path}.round")
        agent = as_int(value_of(obj, "agent", path), f"{path}.agent", 0)
        if agent >= num_agents:
            raise fail(f"{path}.agent", f"is {agent} but the debate has {num_agents} agents (0 to {num_agents - 1})")
        if (round_, agent) in seen:
            raise fail(path, f"agent {agent} already has a turn in round {round_} ({seen[(round_, agent)]})")
        seen[(round_, agent)] = path
        entries.append(_TurnEntry(round_, agent, obj, path))
    entries.sort(key=lambda entry: (entry.round, entry.agent))
    return entries


def _read_turns(entries: Sequence[_TurnEntry], protocol: str, reader: _TurnReader) -> list[Turn]:
    """Every turn, with its step, turn index and visible turns derived from the order; what each
    turn saw is the coordinator's rule, or the transcript's own for a protocol without one."""
    visible_at = visibility_rule(protocol)  # the coordinator's rule; None: the transcript's own
    turns: list[Turn] = []
    steps: dict[int, int] = {}
    turns_before_round: dict[int, int] = {}
    for index, entry in enumerate(entries):
        turns_before_round.setdefault(entry.round, index)
        step = steps.get(entry.agent, 0)
        steps[entry.agent] = step + 1
        ruled = None if visible_at is None else visible_at(index, turns_before_round[entry.round])
        turns.append(_read_turn(entry, index, step, ruled, reader))
    return turns


def _read_turn(entry: _TurnEntry, index: int, step: int, ruled: int | None, reader: _TurnReader) -> Turn:
    """One turn: its text parsed (or its recorded parse), the authorship rules applied, and every
    derived value it states checked against the derived one."""
    obj, path, agent = entry.obj, entry.path, entry.agent
    text = as_str(value_of(obj, "text", path), f"{path}.text")
    check_limit("response_chars", len(text), f"{path}.text")
    parsed_raw = obj.get("parsed")
    response = reader.parser.parse(text) if parsed_raw is None else as_parsed(parsed_raw, f"{path}.parsed")
    seats = as_seats(obj.get("seats"), f"{path}.seats", agent, reader.num_agents)
    if not response.ok:
        authored = CheckedComparisons()
    elif seats:
        authored = apply_seated_authorship(response.comparisons, agent, seats)
    else:
        authored = apply_authorship(response.comparisons, agent, reader.num_agents)
    visible = ruled if ruled is not None else as_int(obj.get("visible_turns", index), f"{path}.visible_turns", 0)
    check_agrees(obj, "step", path, step, as_int)
    check_agrees(obj, "turn_index", path, index, as_int)
    check_agrees(obj, "visible_turns", path, visible, as_int)
    informed = (
        as_bool(obj["informed"], f"{path}.informed")
        if "informed" in obj
        else reader.history.others_seen(agent, visible) == reader.num_agents - 1
    )
    _check_authored(entry, authored)
    return Turn(
        round=entry.round,
        agent=agent,
        step=step,
        turn_index=index,
        visible_turns=visible,
        text=text,
        response=response,
        persona=as_str(value_of(obj, "persona", path, ""), f"{path}.persona"),
        comparisons=authored.valid,
        self_comparisons=authored.self_comparisons,
        malformed_comparisons=authored.malformed,
        grade=as_grade(obj.get("grade"), f"{path}.grade"),
        informed=informed,
        prompt=as_prompt(obj.get("prompt", []), f"{path}.prompt"),
        seats=seats,
    )


def _check_authored(entry: _TurnEntry, authored: CheckedComparisons) -> None:
    """The counts and comparisons a turn states must be what the authorship rules give."""
    obj, path = entry.obj, entry.path
    check_agrees(obj, "self_comparisons", path, authored.self_comparisons, as_int)
    check_agrees(obj, "malformed_comparisons", path, authored.malformed, as_int)
    if "comparisons" in obj:
        stored = as_stored_comparisons(obj["comparisons"], f"{path}.comparisons", entry.agent)
        if stored != authored.valid:
            raise fail(
                f"{path}.comparisons",
                "do not match the parsed comparisons after the authorship rules "
                f"(expected {[[c.a, c.op, c.b] for c in authored.valid]})",
            )


def _record(data: JsonMapping, turns: list[Turn], protocol: str, num_agents: int) -> DebateRecord:
    """The debate record of the read turns: consensus and abort derived from them (and checked
    against what the transcript states), the rest read from the transcript."""
    failed = next((t for t in turns if t.failed), None)
    rounds = max((t.round for t in turns), default=0)
    last_round = [t for t in turns if t.round == rounds]
    # transcripts written before the consensus rule existed were made under the literal rule
    rule = as_consensus_rule(data.get("consensus_rule", "any"), "consensus_rule")
    consensus = failed is None and round_reaches_consensus(last_round, num_agents, rule)
    aborted = failed is not None
    check_agrees(data, "aborted", "", aborted, as_bool)
    check_agrees(data, "consensus_reached", "", consensus, as_bool)
    abort_reason = _abort_reason(data, failed)
    max_rounds = _max_rounds(data, rounds)
    return DebateRecord(
        question=as_str(value_of(data, "question", "", ""), "question"),
        num_agents=num_agents,
        turns=tuple(turns),
        protocol=protocol,
        max_rounds=max_rounds,
        answer=as_answer(data.get("answer")),
        debate_id=as_str(value_of(data, "debate_id", "", ""), "debate_id"),
        consensus_reached=consensus,
        aborted=aborted,
        abort_reason=abort_reason if aborted else None,
        consensus_rule=rule,
    )


def _abort_reason(data: JsonMapping, failed: Turn | None) -> str | None:
    """The stated abort reason, else the failed turn's parse error (``round R, agent A: code: message``)."""
    computed_reason = None
    if failed is not None and failed.response.error is not None:
        error = failed.response.error
        computed_reason = f"round {failed.round}, agent {failed.agent}: {error.code}: {error.message}"
    return as_optional_str(data.get("abort_reason", computed_reason), "abort_reason")


def _max_rounds(data: JsonMapping, rounds: int) -> int:
    """The stated round limit (default: the rounds the turns reach), which the turns must not pass."""
    max_rounds = as_int(value_of(data, "max_rounds", "", max(rounds, 1)), "max_rounds", 1)
    check_limit("rounds", max_rounds, "max_rounds")
    if max_rounds < rounds:
        raise fail("max_rounds", f"is {max_rounds} but the turns reach round {rounds}")
    return max_rounds
