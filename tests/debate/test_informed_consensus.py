"""When a round of YES ends a debate (docs/protocol.md, "when a debate ends"): by default only
an informed YES counts, one from an agent whose prompt showed the latest solution of every
other agent; the literal rule (``any``) and ``never`` stay available."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from debate_core.debate.history_policies import NoHistory
from debate_core.debate.transcripts import load_transcript, record_to_json
from debate_core.records import ConsensusRule, DebateRecord
from debate_core.testing.scripted_debate import run_scripted_debate, run_sync, scripted_setup

from .helpers import RecordingPolicy, response

YES = response("42", consensus=True)


def run(
    texts: Sequence[str],
    protocol: str,
    rule: ConsensusRule = "informed",
    *,
    num_agents: int = 3,
    max_rounds: int = 3,
    no_history: bool = False,
) -> DebateRecord:
    setup = scripted_setup(
        num_agents,
        max_rounds,
        protocol=protocol,  # type: ignore[arg-type]
        history=NoHistory() if no_history else None,
    )
    setup = attrs.evolve(setup, consensus_rule=rule)
    return run_sync(run_scripted_debate(texts, num_agents, setup=setup)).record


def test_parallel_round_one_yes_is_uninformed_and_the_debate_goes_on() -> None:
    record = run([YES] * 9, "parallel")
    assert [t.informed for t in record.turns] == [False] * 3 + [True] * 3
    assert record.rounds_played == 2 and record.consensus_reached
    assert record.consensus_rule == "informed"


def test_sequential_round_one_counts_only_the_last_agents_yes() -> None:
    # agent 0 has seen nobody, agent 1 has not seen agent 2; agent 2 has seen both. From
    # round 2 on every agent has seen the latest solution of both others.
    record = run([YES] * 9, "sequential")
    assert [t.informed for t in record.turns] == [False, False, True, True, True, True]
    assert record.rounds_played == 2 and record.consensus_reached


def test_an_uninformed_no_does_not_matter_and_an_informed_no_continues() -> None:
    texts = [YES, YES, YES, YES, response("41"), YES, YES, YES, YES]
    record = run(texts, "parallel")
    assert record.rounds_played == 3 and record.consensus_reached


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_the_literal_rule_ends_on_any_unanimous_round(protocol: str) -> None:
    record = run([YES] * 9, protocol, "any")
    assert record.rounds_played == 1 and record.consensus_reached
    assert record.consensus_rule == "any"


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_never_plays_every_round(protocol: str) -> None:
    record = run([YES] * 9, protocol, "never")
    assert record.rounds_played == 3 and not record.consensus_reached


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_a_history_that_shows_nobody_never_informs(protocol: str) -> None:
    record = run([YES] * 9, protocol, no_history=True)
    assert not any(t.informed for t in record.turns)
    assert record.rounds_played == 3 and not record.consensus_reached


def test_a_single_agent_is_informed() -> None:
    record = run([YES], "sequential", num_agents=1, max_rounds=1)
    assert record.turns[0].informed and record.consensus_reached


def test_the_instructions_say_when_a_yes_counts() -> None:
    policy = RecordingPolicy(lambda _: YES)
    setup = scripted_setup(3, 2, protocol="parallel")
    from debate_core.debate.running import run_debate
    from debate_core.records import Problem

    run_sync(run_debate(Problem("p", "What is 6 * 7?"), setup, [policy] * 3, seed=0))
    prompts = [policy.tokenizer.decode(call["prompt"]) for call in policy.calls]  # type: ignore[arg-type]
    first_round, second_round = prompts[:3], prompts[3:]
    assert all("Say NO in <consensus>: you have not seen every other agent's latest solution" in p for p in first_round)
    assert all("Say YES in <consensus> only if every final answer" in p for p in second_round)


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_transcripts_keep_the_rule_and_the_informed_flags(protocol: str) -> None:
    record = run([YES] * 9, protocol)
    assert load_transcript(record_to_json(record)) == record


def test_older_transcripts_read_under_the_literal_rule() -> None:
    data = record_to_json(run([YES] * 9, "sequential", "any"))
    del data["consensus_rule"]
    for turn in data["turns"]:
        del turn["informed"]
    loaded = load_transcript(data)
    assert loaded.consensus_rule == "any" and loaded.consensus_reached
    assert [t.informed for t in loaded.turns] == [False, False, True]
