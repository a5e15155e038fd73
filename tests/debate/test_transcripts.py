"""The transcript format: full form round trip, minimal form, errors with key paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from debate_core.debate.transcripts import load_transcript, record_to_json, save_transcript
from debate_core.errors import TranscriptError
from debate_core.records import Comparison
from debate_core.testing.scripted_debate import scripted_debate

from .helpers import response


def sample_record(protocol: str = "sequential") -> Any:
    texts = [
        response("42", evaluation="é ✓"),
        response("41"),
        response("42", ["Agent 0 > Agent 1", "Agent 2 = Agent 0", "Agent 7 > Agent 1"]),
        response("42"),
        response("42", ["Agent 0 = Agent 2"]),
        "no tags at all",
    ]
    return scripted_debate(texts, 3, protocol, answer="42", question="6 * 7?")  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_full_form_round_trips_through_a_file(tmp_path: Path, protocol: str) -> None:
    record = sample_record(protocol)
    assert record.aborted and len(record.turns) == 6
    path = save_transcript(record, tmp_path / "nested" / "debate.json")
    assert [p.name for p in path.parent.iterdir()] == ["debate.json"]  # no temporary file left behind
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "debate-transcript" and data["version"] == 2
    assert data["turns"][2]["comparisons"] == [{"author": 2, "a": 0, "op": ">", "b": 1}]
    assert data["turns"][2]["parsed"]["comparisons"] == [[0, ">", 1], [2, "=", 0], [7, ">", 1]]
    assert data["turns"][5]["parsed"]["error"]["code"] == "missing_tag"
    assert load_transcript(path) == record
    assert load_transcript(record_to_json(record)) == record


def test_minimal_form_is_parsed_and_authored() -> None:
    record = load_transcript(
        {
            "num_agents": 3,
            "answer": 42,
            "turns": [
                {"round": 1, "agent": 1, "text": response("b")},
                {"round": 1, "agent": 0, "text": response("a")},
                {"round": 1, "agent": 2, "text": response("c", ["Agent 0 > Agent 1", "Agent 2 > Agent 0"])},
                {"round": 2, "agent": 0, "text": response("a", ["Agent 1 = Agent 2"], consensus=True)},
            ],
        }
    )
    assert record.answer == "42" and record.protocol == "sequential" and record.max_rounds == 2
    assert [(t.round, t.agent, t.step, t.turn_index, t.visible_turns) for t in record.turns] == [
        (1, 0, 0, 0, 0),
        (1, 1, 0, 1, 1),
        (1, 2, 0, 2, 2),
        (2, 0, 1, 3, 3),
    ]
    assert record.turns[2].comparisons == (Comparison(0, ">", 1),) and record.turns[2].self_comparisons == 1
    assert record.turns[1].response.solution == "b"
    assert not record.aborted and not record.consensus_reached


def test_minimal_form_under_parallel_rounds() -> None:
    turns = [{"round": r, "agent": a, "text": response()} for r in (1, 2) for a in (0, 1)]
    record = load_transcript({"num_agents": 2, "protocol": "parallel", "turns": turns})
    assert [t.visible_turns for t in record.turns] == [0, 0, 2, 2]


def test_minimal_form_matches_a_scripted_debate() -> None:
    record = sample_record()
    minimal = {
        "num_agents": 3,
        "answer": "42",
        "question": "6 * 7?",
        "max_rounds": 2,
        "debate_id": "scripted",
        "turns": [{"round": t.round, "agent": t.agent, "text": t.text, "persona": t.persona} for t in record.turns],
    }
    loaded = load_transcript(minimal)
    # the minimal form carries no prompts; everything else is derived
    assert loaded.turns == tuple(attrs.evolve(t, prompt=()) for t in record.turns)
    assert loaded.aborted and loaded.abort_reason == record.abort_reason


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"turns": []}, "missing required key 'num_agents'"),
        ({"num_agents": "3", "turns": []}, "num_agents: expected an integer, got str '3'"),
        ({"num_agents": 2, "turns": {}}, "turns: expected a list, got dict"),
        ({"num_agents": 2, "turns": [{"round": 1, "agent": 2, "text": ""}]}, r"turns\[0\].agent: is 2 but the debate"),
        ({"num_agents": 2, "turns": [{"round": 0, "agent": 0, "text": ""}]}, r"turns\[0\].round: must be at least 1"),
        ({"num_agents": 2, "turns": [{"round": 1, "agent": 0}]}, r"turns\[0\]: missing required key 'text'"),
        (
            {"num_agents": 2, "turns": [{"round": 1, "agent": 0, "text": ""}, {"round": 1, "agent": 0, "text": ""}]},
            r"turns\[1\]: agent 0 already has a turn in round 1 \(turns\[0\]\)",
        ),
        ({"num_agents": 2, "max_rounds": 1, "turns": [{"round": 2, "agent": 0, "text": ""}]}, "max_rounds: is 1"),
        ({"format": "chat", "num_agents": 1, "turns": []}, "format: expected 'debate-transcript'"),
        (
            {"num_agents": 2, "turns": [{"round": 1, "agent": 0, "text": "", "parsed": {"consensus": "yes"}}]},
            r"turns\[0\].parsed.consensus: expected true or false",
        ),
    ],
)
def test_bad_input_names_the_key_path(data: dict[str, Any], message: str) -> None:
    with pytest.raises(TranscriptError, match=message):
        load_transcript(data)


def test_derived_fields_that_disagree_are_rejected() -> None:
    data = record_to_json(sample_record())
    data["turns"][2]["comparisons"] = [{"author": 2, "a": 1, "op": ">", "b": 0}]
    with pytest.raises(TranscriptError, match=r"turns\[2\].comparisons: do not match"):
        load_transcript(data)
    data = record_to_json(sample_record())
    data["turns"][3]["visible_turns"] = 0
    with pytest.raises(TranscriptError, match=r"turns\[3\].visible_turns: is 0 but"):
        load_transcript(data)
    data = record_to_json(sample_record())
    data["aborted"] = False
    with pytest.raises(TranscriptError, match="aborted: is False"):
        load_transcript(data)


def _file_error(path: Path) -> str:
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    return str(info.value)


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("missing.json", None, "no such transcript file"),
        ("bad.json", "{not json", "not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2"),
        ("list.json", "[1, 2]", "a transcript is a JSON object, got list"),
        ("latin1.json", b'{"question": "caf\xe9"}', "not UTF-8 text: invalid continuation byte at byte 17"),
        ("adir", "directory", "is a directory, not a transcript file"),
        ("wrong.json", '{"num_agents": 1, "turns": [{"round": 1}]}', "turns[0]: missing required key 'agent'"),
    ],
)
def test_file_errors_name_the_file_once(tmp_path: Path, name: str, content: str | bytes | None, problem: str) -> None:
    path = tmp_path / name
    if content == "directory":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    message = _file_error(path)
    assert message.startswith(f"{path}: {problem}")
    assert message.count(name) == 1 and "\n" not in message


def test_lone_surrogates_are_escaped_not_lost(tmp_path: Path) -> None:
    record = load_transcript({"num_agents": 1, "turns": [{"round": 1, "agent": 0, "text": "odd \ud800 text"}]})
    path = save_transcript(record, tmp_path / "t.json")
    assert load_transcript(path).turns[0].text == "odd \ud800 text"


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_reading_back_asks_the_coordinator_what_each_turn_saw(protocol: str) -> None:
    """A transcript without ``visible_turns`` gets what the live debate's coordinator showed."""
    record = sample_record(protocol)
    stripped = record_to_json(record)
    for turn in stripped["turns"]:
        del turn["visible_turns"]
    assert [t.visible_turns for t in load_transcript(stripped).turns] == [t.visible_turns for t in record.turns]


def test_a_protocol_without_a_fixed_rule_keeps_the_transcript_s_visible_turns() -> None:
    turns = [{"round": 1, "agent": a, "text": response(), "visible_turns": v} for a, v in ((0, 0), (1, 0), (2, 1))]
    record = load_transcript({"num_agents": 3, "protocol": "my_protocol", "turns": turns})
    assert [t.visible_turns for t in record.turns] == [0, 0, 1]


def test_no_protocol_name_is_matched_as_a_string_outside_the_coordinators() -> None:
    """The coordinators' module is the one home of the built-in protocols' rules."""
    import ast

    from debate_core.debate.protocols import BUILTIN_TURN_STATES

    names = {state.protocol_name for state in BUILTIN_TURN_STATES}
    source_root = Path(__file__).resolve().parents[2] / "core" / "src" / "debate_core"
    found = []
    for path in source_root.rglob("*.py"):
        if path.relative_to(source_root).as_posix() == "debate/coordinators.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                constants = [c for o in operands for c in ast.walk(o) if isinstance(c, ast.Constant)]
                if any(c.value in names for c in constants if isinstance(c.value, str)):
                    found.append(f"{path.relative_to(source_root)}:{node.lineno}")
    assert found == []
