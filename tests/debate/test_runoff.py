"""The ``runoff`` coordinator and answer rule (docs/protocol.md#the-runoff,
docs/answer-rules.md#runoff) on scripted debates whose results are known by hand: who judges in
which seats, what a seated judge is shown, a truthful judge overturning a wrong majority, position
judges leaving it, agreeing answers never judged, seated authorship, and transcripts that read
back (and name a bad ``seats`` value)."""

from __future__ import annotations

import asyncio
import json

import attrs
import pytest

from debate_core.debate import RunoffCoordinator, RunoffOptions, RunoffRule, final_answer, run_debate
from debate_core.debate.runoff_protocol import is_runoff_judge, runoff_judge_count, runoff_seats
from debate_core.debate.transcripts import load_transcript, record_to_json
from debate_core.errors import TranscriptError
from debate_core.records import Comparison, DebateEpisode, ParsedResponse, Problem, Turn, apply_seated_authorship
from debate_core.tasks import extract_last_boxed
from debate_core.tasks.graders import BoxedGrader
from debate_core.testing.scripted_debate import ScriptedPolicy, scripted_setup
from tests.debate.test_answer_rules import boxed, parallel

TRUTH = "42"


def reply(answer: str, comparison: str = "N/A", who: str = "") -> str:
    """A response answering ``answer`` (its solution marked with ``who``) comparing ``comparison``."""
    return (
        f"<solution>{who} works it out: \\boxed{{{answer}}}</solution>\n<evaluation>Checked.</evaluation>\n"
        f"<comparison>{comparison}</comparison>\n<consensus>NO</consensus>\n<consensus_reason>-</consensus_reason>"
    )


def runoff(
    answers: list[str], judging: dict[int, str], judges_per_order: int = 1, own: tuple[str, ...] = ("40", "40")
) -> tuple[DebateEpisode, list[ScriptedPolicy]]:
    """A runoff of ``len(answers)`` candidates answering ``answers`` blind and ``2 *
    judges_per_order`` judges whose own blind answers are ``own``, judge ``j`` (its agent id)
    writing the comparison ``judging[j]`` (in its seats) when it judges; graded against 42."""
    judges = 2 * judges_per_order
    setup = attrs.evolve(
        scripted_setup(len(answers) + judges, 2, protocol="parallel"),
        coordinator=RunoffCoordinator(RunoffOptions(judges_per_order=judges_per_order)),
    )
    texts = [[reply(a, who=f"agent-{k}")] for k, a in enumerate(answers)]
    for j in range(judges):
        agent = len(answers) + j
        texts.append([reply(own[j % len(own)], who=f"judge-{agent} blind"), reply(TRUTH, judging.get(agent, "N/A"))])
    policies = [ScriptedPolicy(script) for script in texts]
    problem = Problem(id="p", question="What is 6 * 7?", answer=TRUTH)
    episode = asyncio.run(run_debate(problem, setup, policies, seed=0, grader=BoxedGrader()))
    return episode, policies


def read(solution: str) -> str | None:
    return extract_last_boxed(solution)


def first_round(*answers: str) -> list[Turn]:
    return [
        Turn(1, k, 0, k, 0, "", ParsedResponse(solution=f"\\boxed{{{a}}}", evaluation=""))
        for k, a in enumerate(answers)
    ]


CANDIDATES = ["41", "41", "42", "42", "41", "40"]
"""41 held by agents 0, 1, 4 and 42 by 2, 3: the finalists are agents 0 and 2; agents 6 and 7 judge."""


def test_the_judges_and_their_seats() -> None:
    """Each judge sits at seat 0 with the finalists (the first holders of the two most held
    answers) at seats 1 and 2, the most held answer's at seat 1 for the first judge."""
    turns = first_round(*CANDIDATES)
    assert runoff_seats(turns, [6, 7], read) == {6: (6, 0, 2), 7: (7, 2, 0)}
    assert runoff_seats(turns, [6, 7, 8, 9], read) == {6: (6, 0, 2), 7: (7, 2, 0), 8: (8, 0, 2), 9: (9, 2, 0)}
    assert runoff_seats(turns, [6, 7], read, seated_as=4) == {6: (6, 0, 2, -1), 7: (7, 2, 0, -1)}
    # a tie of holders goes to the lowest first holder; agreeing answers, or no judge, no judging
    assert runoff_seats(first_round("7", "5", "5", "7"), [4, 5], read) == {4: (4, 0, 1), 5: (5, 1, 0)}
    assert runoff_seats(first_round("42", "42", "42"), [3, 4], read) == {}
    assert runoff_seats(first_round("41", "42"), [], read) == {}
    # the last 2 * judges_per_order agents judge, leaving at least two candidates
    assert [runoff_judge_count(n, 1) for n in (1, 2, 3, 4, 8)] == [0, 0, 1, 2, 2]
    assert runoff_judge_count(8, 2) == 4 and runoff_judge_count(5, 2) == 3


def test_a_truthful_judge_overturns_a_wrong_majority() -> None:
    """Judge 6 sees 41 at seat 1 and 42 at seat 2 and prefers seat 2; judge 7 sees them the other
    way round and prefers seat 1: both votes are 42 over 41 in the debate's ids, so the runoff
    answers 42, not the majority's 41. The judges' own blind answers (40) are not candidates."""
    episode, policies = runoff(CANDIDATES, {6: "Agent 2 > Agent 1", 7: "Agent 1 > Agent 2"})
    record = episode.record
    assert record.protocol == "runoff" and not record.aborted and not record.consensus_reached
    assert [(t.round, t.agent) for t in record.turns] == [(1, k) for k in range(8)] + [(2, 6), (2, 7)]
    judges = [t for t in record.turns if t.round == 2]
    assert [(t.agent, t.seats) for t in judges] == [(6, (6, 0, 2)), (7, (7, 2, 0))]
    assert all(t.comparisons == (Comparison(2, ">", 0),) for t in judges)
    answer = final_answer(record, BoxedGrader(), rule=RunoffRule())
    assert answer.answer == "42" and answer.correct
    assert [(c.answer, c.score, c.agents) for c in answer.candidates] == [
        ("42", 2.0, (2, 3)),
        ("41", 0.0, (0, 1, 4)),
        ("40", 0.0, (5,)),
    ]
    assert [len(p.calls) for p in policies] == [1] * 6 + [2, 2]


def test_a_judge_is_shown_a_three_agent_debate() -> None:
    """Judge 7 answers blind as agent 0 of 3, then judges as agent 0's round 2 of a 3-agent
    debate: its own blind answer, agent 2's solution as agent 1's and agent 0's as agent 2's, in
    seat order, and nobody else's."""
    _, policies = runoff(CANDIDATES, {})
    blind, prompt = (call.prompt_text for call in policies[7].calls)
    assert "You are Agent 0, " in blind and "Round 1 of 2. You are Agent 0. Nobody else has answered yet." in blind
    assert "You are Agent 0, " in prompt and "among 3 agents" in prompt
    assert "Round 2 of 2. You are Agent 0." in prompt
    assert "judge-7 blind" in prompt  # its own round-1 answer, as its own message
    one, two = prompt.index("[Agent 1, round 1]"), prompt.index("[Agent 2, round 1]")
    assert one < two
    assert prompt.index("agent-2 works it out") > one and prompt.index("agent-0 works it out") > two
    for absent in ("agent-1 works", "agent-4 works", "agent-5 works", "judge-6", "Agent 3", "Agent 5"):
        assert absent not in prompt
    # every candidate answered blind as agent k mod 3 of 3, as in the debate it learned in
    for k, policy in enumerate(policies[:6]):
        first = policy.calls[0].prompt_text
        assert f"You are Agent {k % 3}, " in first and "among 3 agents" in first
        assert f"Round 1 of 2. You are Agent {k % 3}. Nobody else has answered yet." in first


def test_the_turns_record_their_seats_and_answer_as_their_seats_persona() -> None:
    episode, policies = runoff(CANDIDATES, {})
    seats = [(t.round, t.agent, t.seats) for t in episode.record.turns]
    assert seats == [
        (1, 0, (0, -1, -1)),
        (1, 1, (-1, 1, -1)),
        (1, 2, (-1, -1, 2)),
        (1, 3, (3, -1, -1)),
        (1, 4, (-1, 4, -1)),
        (1, 5, (-1, -1, 5)),
        (1, 6, (6, 0, 2)),
        (1, 7, (7, 2, 0)),
        (2, 6, (6, 0, 2)),
        (2, 7, (7, 2, 0)),
    ]
    assert [is_runoff_judge(t) for t in episode.record.turns] == [False] * 6 + [True] * 4
    assert not any(t.informed for t in episode.record.turns if t.round == 1)
    assert all(t.informed for t in episode.record.turns if t.round == 2)
    assert all(t.visible_turns == 0 for t in episode.record.turns if t.round == 1)
    # persona and temperature are the seat's: seat 0 is the Methodical Analyst at 0.6, seat 1 the
    # Creative Problem-Solver at 1.0 (docs/protocol.md#personas)
    personas = [(t.round, t.agent, t.persona) for t in episode.record.turns]
    assert personas[3] == (1, 3, "Methodical Analyst") and personas[4] == (1, 4, "Creative Problem-Solver")
    assert personas[6] == (1, 6, "Methodical Analyst") and personas[9] == (2, 7, "Methodical Analyst")
    assert [p.calls[0].temperature for p in policies] == [0.6, 1.0, 0.9, 0.6, 1.0, 0.9, 0.6, 0.6]


def test_position_judges_leave_the_majority() -> None:
    """Both judges prefer whatever sits at seat 1: one vote each way, a tie, to the more held 41."""
    episode, _ = runoff(CANDIDATES, {6: "Agent 1 > Agent 2", 7: "Agent 1 > Agent 2"})
    answer = final_answer(episode.record, BoxedGrader(), rule=RunoffRule())
    assert answer.answer == "41" and not answer.correct
    assert [c.score for c in answer.candidates[:2]] == [1.0, 1.0]


def test_agreeing_candidates_are_not_judged() -> None:
    episode, policies = runoff(["42"] * 6, {})
    assert episode.record.rounds_played == 1 and [len(p.calls) for p in policies] == [1] * 6 + [0, 0]
    assert len(episode.record.turns) == 6
    assert final_answer(episode.record, BoxedGrader(), rule=RunoffRule()).answer == "42"


def test_seated_authorship() -> None:
    """A seated judge comparing itself (seat 0) or a seat the prompt did not have (3, though the
    debate has an agent 3) breaks the authorship rules in its seats' ids; so does a candidate
    comparing an empty seat."""
    episode, _ = runoff(CANDIDATES, {6: "Agent 0 > Agent 2\nAgent 1 > Agent 3"})
    judge = next(t for t in episode.record.turns if t.agent == 6 and t.round == 2)
    assert (judge.comparisons, judge.self_comparisons, judge.malformed_comparisons) == ((), 1, 1)
    checked = apply_seated_authorship([Comparison(0, ">", 2), Comparison(1, ">", 2)], 4, (-1, 4, -1))
    assert (checked.valid, checked.self_comparisons, checked.malformed) == ((), 1, 1)


def test_the_transcript_reads_back_and_names_bad_seats() -> None:
    episode, _ = runoff(CANDIDATES, {6: "Agent 2 > Agent 1", 7: "Agent 1 = Agent 2"})
    data = json.loads(json.dumps(record_to_json(episode.record)))
    assert load_transcript(data) == episode.record
    judge = next(k for k, t in enumerate(data["turns"]) if t["round"] == 2)
    data["turns"][judge]["seats"] = [0, 3, 2]
    with pytest.raises(TranscriptError, match=rf"turns\[{judge}\]\.seats: must seat the turn's own agent 6"):
        load_transcript(data)
    data["turns"][judge]["seats"] = [6, 0, 0]
    with pytest.raises(TranscriptError, match=r"must name distinct agents of the debate \(0 to 7\) or -1"):
        load_transcript(data)


def test_the_rule_on_a_three_agent_debate() -> None:
    """Round 1 answers 5, 7, 7: the finalists are 7 (two holders) and 5. Both votes between a 5
    and a 7 go to the 5; agent 0's vote between the two 7s is left out: the runoff answers 5."""
    record = parallel(boxed("5"), boxed("7"), boxed("7"), boxed("5", "1=2"), boxed("7", "0>2"), boxed("7", "0>1"))
    answer = RunoffRule()(record, read)
    assert answer.answer == "5" and [(c.answer, c.score) for c in answer.candidates] == [("5", 2.0), ("7", 0.0)]


def test_debate_run_counts_the_answer_among_the_candidates() -> None:
    from debate_core.cli.run_cmd import format_outcome, format_transcript

    episode, _ = runoff(CANDIDATES, {6: "Agent 2 > Agent 1", 7: "Agent 1 > Agent 2"})
    answer = final_answer(episode.record, BoxedGrader(), rule=RunoffRule())
    assert (
        format_outcome(episode.record, answer)[-1]
        == "Final answer: 42 (2 of 6 candidates; runoff, vote score 2) [correct]"
    )
    outcome = format_outcome(episode.record, answer)
    assert [line for line in outcome if line.startswith("  Agent")] == [
        "  Agent 0: 0 wins, 2 losses, 0 ties (2 votes)",  # the judges are not in the tally
        "  Agent 1: 0 wins, 0 losses, 0 ties (0 votes)",
        "  Agent 2: 2 wins, 0 losses, 0 ties (2 votes)",
        *(f"  Agent {k}: 0 wins, 0 losses, 0 ties (0 votes)" for k in range(3, 6)),
    ]
    lines = format_transcript(episode.record)
    assert "(seated as Agent 0 of 3: its Agent 1 is agent 2, its Agent 2 is agent 0)" in lines
    assert "(seated as Agent 1 of 3)" in lines


def test_debate_run_says_agreeing_candidates_were_not_judged() -> None:
    from debate_core.cli.run_cmd import format_outcome

    episode, _ = runoff(["42"] * 6, {})
    answer = final_answer(episode.record, BoxedGrader(), rule=RunoffRule())
    assert format_outcome(episode.record, answer)[-2:] == [
        "Debate over after 1 of 2 rounds: the candidates agree, nothing to judge.",
        "Final answer: 42 (6 of 6 candidates; runoff, the only answer given) [correct]",
    ]
