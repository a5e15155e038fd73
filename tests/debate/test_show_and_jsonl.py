"""``debate show`` and ``debate score`` on a single transcript and on the JSON Lines that
``debate run --questions ... --out`` writes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.debate.transcripts import dumps_transcript, load_transcript, load_transcripts
from debate_core.errors import TranscriptError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "transcripts"


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    """Two debates, one per line, as `debate run --questions ... --out` writes them."""
    path = tmp_path / "debates.jsonl"
    records = [load_transcript(EXAMPLES / "full.json"), load_transcript(EXAMPLES / "parallel.json")]
    path.write_text("".join(dumps_transcript(r, indent=None) + "\n" for r in records))
    return path


def test_load_transcripts_reads_one_a_list_and_json_lines(jsonl: Path, tmp_path: Path) -> None:
    assert [r.debate_id for r in load_transcripts(EXAMPLES / "full.json")] == ["example-sequential"]
    both = load_transcripts(jsonl)
    assert len(both) == 2 and both[0] == load_transcript(EXAMPLES / "full.json")
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([json.loads(line) for line in jsonl.read_text().splitlines()]))
    assert load_transcripts(listed) == both


def test_a_bad_line_is_named(jsonl: Path) -> None:
    lines = jsonl.read_text().splitlines()
    jsonl.write_text(lines[0] + "\n\n" + lines[1].replace('"num_agents": 3', '"num_agents": "x"') + "\n")
    with pytest.raises(TranscriptError, match=r"debates.jsonl: line 3: num_agents: expected an integer"):
        load_transcripts(jsonl)
    jsonl.write_text(lines[0] + "\n{oops\n")
    with pytest.raises(TranscriptError, match=r"debates.jsonl: line 2: not valid JSON"):
        load_transcripts(jsonl)


def test_show_prints_rounds_agents_sections_votes_and_grades(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(EXAMPLES / "full.json")]) == 0
    out = capsys.readouterr().out
    assert "Question: What is 17 + 25? (ground truth 42)" in out
    assert "--- Turn 2: round 1, agent 2 (Devil's Advocate)  [correct] ---" in out
    assert "  [solution] Tens: 10 + 20 = 30. Units: 7 + 5 = 12. Total \\boxed{42}" in out
    assert "  votes: Agent 0 > Agent 1" in out
    assert "dropped comparisons: 1 naming the author" in out
    assert "Final answer: 42" in out and "Votes:" in out


def test_show_one_turn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(EXAMPLES / "full.json"), "--turn", "2"]) == 0
    out = capsys.readouterr().out
    assert "Turn 2:" in out and "Turn 1:" not in out and "Final answer" not in out
    assert main(["show", str(EXAMPLES / "full.json"), "--turn", "99"]) == 1
    assert "--turn 99: debate example-sequential has 6 turns (0 to 5)" in capsys.readouterr().err


def test_show_and_score_read_json_lines(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(jsonl)]) == 0
    out = capsys.readouterr().out
    assert out.count("=== Debate ") == 2
    assert main(["show", str(jsonl), "--debate", "1"]) == 0
    assert capsys.readouterr().out.count("=== Debate ") == 1
    assert main(["score", "--reward", "win_rate", str(jsonl)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    scored = [json.loads(line) for line in lines]
    assert [s["debate_id"] for s in scored] == [r.debate_id for r in load_transcripts(jsonl)]


def test_a_raising_reward_is_one_line_and_debug_shows_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "raising_rewards.py").write_text(
        textwrap.dedent(
            """
            def broken(debate):
                return {}["no such key"]
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["score", "--reward", "raising_rewards:broken", str(EXAMPLES / "full.json")]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "debate: error: reward plugin 'raising_rewards:broken' raised KeyError: 'no such key', in __call__ on debate "
        "'example-sequential'"
    ]
    monkeypatch.setenv("DEBATE_DEBUG", "1")
    assert main(["score", "--reward", "raising_rewards:broken", str(EXAMPLES / "full.json")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and 'return {}["no such key"]' in err


def test_show_gives_the_answer_under_the_rule_asked_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/answer-rules.md's worked example: majority 7, vote_winner 5 (the default), each named."""
    from debate_core.testing.synthetic import TurnSpec, synthetic_debate

    def turn(answer: str, vote: str = "") -> TurnSpec:
        votes = ((int(vote[0]), "=" if "=" in vote else ">", int(vote[-1])),) if vote else ()
        return TurnSpec(solution=f"so \\boxed{{{answer}}}", comparisons=votes)  # type: ignore[arg-type]

    record = synthetic_debate(
        3, [turn("5"), turn("7"), turn("7"), turn("5", "1=2"), turn("7", "0>2"), turn("7", "0>1")], protocol="parallel"
    )
    path = tmp_path / "d.json"
    path.write_text(dumps_transcript(record))
    assert main(["show", str(path)]) == 0
    assert "Final answer: 5 (1 of 3 agents; vote_winner, vote score 2)" in capsys.readouterr().out
    assert main(["show", str(path), "--rule", "majority"]) == 0
    assert "Final answer: 7 (2 of 3 agents; majority)" in capsys.readouterr().out
    assert main(["show", str(path), "--rule", "nonesuch"]) == 1
    assert "unknown answer rule 'nonesuch'" in capsys.readouterr().err
