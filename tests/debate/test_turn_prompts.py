"""Each turn records the prompt its agent was shown (docs/transcript-format.md, per turn
``prompt``), so history truncation and field clipping can be read from a run's transcripts."""

from __future__ import annotations

from debate_core.debate.history_policies import LastRounds, LastRoundsOptions
from debate_core.debate.transcripts import load_transcript, record_to_json
from debate_core.testing.scripted_debate import run_scripted_debate, run_sync, scripted_setup

from .helpers import response

LONG = "a" * 300 + " so 42"


def test_every_turn_keeps_the_messages_it_was_shown_with_the_clipping_applied() -> None:
    history = LastRounds(LastRoundsOptions(rounds=1, max_chars_per_field=50))
    setup = scripted_setup(2, 3, protocol="parallel", history=history)
    texts = [response(LONG), response("41"), response("42"), response("42"), response("43"), response("43")]
    record = run_sync(run_scripted_debate(texts, 2, setup=setup)).record

    for turn in record.turns:
        assert turn.prompt, f"round {turn.round}, agent {turn.agent}: no prompt recorded"
        assert turn.prompt[0].role == "system"
        shown = "\n".join(m.content for m in turn.prompt)
        assert "What is 6 * 7?" in shown
    round_two_agent_one = next(t for t in record.turns if (t.round, t.agent) == (2, 1))
    shown = "\n".join(m.content for m in round_two_agent_one.prompt)
    assert "a" * 40 in shown and "a" * 60 not in shown  # agent 0's long solution, clipped to 50 characters
    round_three_agent_one = next(t for t in record.turns if (t.round, t.agent) == (3, 1))
    shown = "\n".join(m.content for m in round_three_agent_one.prompt)
    assert "a" * 40 not in shown  # last_k with one round: round 1 is no longer shown


def test_prompts_survive_a_transcript_round_trip_and_old_files_read_without_them() -> None:
    setup = scripted_setup(2, 2, protocol="parallel")
    record = run_sync(run_scripted_debate([response("42")] * 4, 2, setup=setup)).record
    data = record_to_json(record)
    assert all("prompt" in turn for turn in data["turns"])
    assert load_transcript(data) == record
    for turn in data["turns"]:
        del turn["prompt"]
    old = load_transcript(data)
    assert all(turn.prompt == () for turn in old.turns)
