"""The answer rules of docs/answer-rules.md on scripted debates whose answers are known by hand:
majority and vote winner disagreeing, a tie of votes, no comparisons, a self-vote, an agent whose
turns all failed; the contract suite over each built-in rule; and a plugin rule's bad answer
reported as one line naming it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debate_core.debate.final_answer import (
    AnswerVotesRule,
    MajorityRule,
    NamedAnswerRule,
    VoteWinnerRule,
    final_answer,
    judged_votes,
)
from debate_core.errors import ComponentFailure
from debate_core.records import DebateAnswer, DebateRecord
from debate_core.tasks import extract_last_boxed
from debate_core.testing import AnswerRuleContract
from debate_core.testing.synthetic import TurnSpec, synthetic_debate


def boxed(answer: str, *votes: str, failed: bool = False) -> TurnSpec:
    """A turn answering ``answer`` with comparison lines ``votes`` (``"1>2"``, ``"0=1"``)."""
    lines = tuple((int(v[0]), ">" if ">" in v else "=", int(v[-1])) for v in votes)
    return TurnSpec(solution=f"so \\boxed{{{answer}}}", comparisons=lines, failed=failed)  # type: ignore[arg-type]


def parallel(*turns: TurnSpec, agents: int = 3) -> DebateRecord:
    return synthetic_debate(agents, list(turns), protocol="parallel")


def read(solution: str) -> str | None:
    return extract_last_boxed(solution)


MAJORITY, VOTE_WINNER, ANSWER_VOTES = MajorityRule(), VoteWinnerRule(), AnswerVotesRule()


def test_majority_and_vote_winner_disagree() -> None:
    """Round 1 answers 5, 7, 7; in round 2 the two 7-holders each judge agent 0's 5 better than the
    other's 7 and keep 7 themselves, agent 0 calls the two 7s equal. Final answers 5, 7, 7: the
    majority is 7; every vote on a 5-against-7 pair went to the 5 (agent 0's round-1 solution
    scores 2, each 7 half a vote from the tie), so the vote winner is 5."""
    record = parallel(
        boxed("5"),
        boxed("7"),
        boxed("7"),
        boxed("5", "1=2"),
        boxed("7", "0>2"),
        boxed("7", "0>1"),
    )
    assert MAJORITY(record, read).answer == "7"
    winner = VOTE_WINNER(record, read)
    assert winner.answer == "5" and winner.fallback is None
    assert [(c.answer, c.score) for c in winner.candidates] == [("5", 2.0), ("7", 0.5)]
    grouped = ANSWER_VOTES(record, read)
    assert grouped.answer == "5" and [(c.answer, c.score) for c in grouped.candidates] == [("5", 2.0), ("7", 0.0)]


def test_each_vote_counts_for_the_solution_the_judge_was_shown() -> None:
    """Agent 1 changes its answer in round 2; the round-2 vote on it judged its round-1 solution."""
    record = parallel(boxed("1"), boxed("2"), boxed("3"), boxed("1", "1>2"), boxed("9", "0>2"), boxed("3", "0>1"))
    positions = [(v.judge, v.first, v.second) for v in judged_votes(record)]
    assert positions == [(0, 1, 2), (1, 0, 2), (2, 0, 1)]
    # agent 0's round-1 solution (position 0) has two wins: its answer 1 is the vote winner
    assert VOTE_WINNER(record, read).answer == "1"


def test_a_tie_of_votes_goes_to_the_answer_more_agents_hold_then_the_earliest_solution() -> None:
    # a cycle: every round-1 solution wins once; final answers 4, 6, 6: 6 is held by two agents
    record = parallel(boxed("4"), boxed("6"), boxed("8"), boxed("4", "1>2"), boxed("6", "2>0"), boxed("6", "0>1"))
    assert VOTE_WINNER(record, read).answer == "6"
    # the same cycle with final answers 4, 6, 8: one agent each, the earliest scored solution wins
    record = parallel(boxed("4"), boxed("6"), boxed("8"), boxed("4", "1>2"), boxed("6", "2>0"), boxed("8", "0>1"))
    assert VOTE_WINNER(record, read).answer == "4"
    assert MAJORITY(record, read).answer == "4"


def test_a_debate_with_no_comparisons_falls_back_to_the_majority() -> None:
    record = parallel(boxed("3"), boxed("5"), boxed("5"), boxed("3"), boxed("5"), boxed("5"))
    for rule in (VOTE_WINNER, ANSWER_VOTES):
        answer = rule(record, read)
        assert answer.answer == "5" and answer.fallback == "majority" and answer.rule == rule.name


def test_a_self_vote_is_dropped_as_the_parser_drops_it() -> None:
    # agent 1 votes itself over agent 0 (dropped); agent 2 prefers agent 0
    record = parallel(boxed("2"), boxed("3"), boxed("3"), boxed("2", "1=2"), boxed("3", "1>0"), boxed("3", "0>1"))
    assert [(v.judge, v.first, v.second) for v in judged_votes(record)] == [(0, 1, 2), (2, 0, 1)]
    assert VOTE_WINNER(record, read).answer == "2"


def test_an_agent_whose_turns_all_failed_gives_no_answer_and_gets_no_vote() -> None:
    # sequential: agent 1 fails in round 1 and the debate aborts there
    record = synthetic_debate(3, [boxed("4"), boxed("9", failed=True)])
    for rule in (MAJORITY, VOTE_WINNER, ANSWER_VOTES):
        assert rule(record, read).answer == "4"
    # votes on a broken response are left out: agent 2 compares 0 and 1, whose turn failed
    record = synthetic_debate(3, [boxed("4"), boxed("9", failed=True), boxed("7", "1>0")])
    assert list(judged_votes(record)) == []
    empty = synthetic_debate(3, [boxed("4", failed=True)])
    assert all(rule(empty, read).answer is None for rule in (MAJORITY, VOTE_WINNER, ANSWER_VOTES))


def test_final_answer_grades_the_chosen_solution() -> None:
    record = parallel(
        boxed("5"), boxed("7"), boxed("7"), boxed("5", "1=2"), boxed("7", "0>2"), boxed("7", "0>1"), agents=3
    )
    from debate_core.plugin import get_registry

    grader = get_registry().build("grader", "boxed")
    assert final_answer(record, grader, "5", VOTE_WINNER).correct is True
    assert final_answer(record, grader, "5", MAJORITY).correct is False
    assert final_answer(record, grader, None, VOTE_WINNER).correct is None


class Broken:
    def __call__(self, debate: DebateRecord, read_answer: object) -> object:
        return DebateAnswer("broken", "7", None, ())


def test_a_rule_that_returns_a_bad_answer_is_one_line_naming_it() -> None:
    record = parallel(boxed("7"), boxed("7"), boxed("7"))
    with pytest.raises(ComponentFailure, match=r"answer rule plugin 'my_rules:broken'.*both be set or both be None"):
        NamedAnswerRule("my_rules:broken", Broken())(record, read)  # type: ignore[arg-type]


ANSWERS = st.sampled_from(["1", "2", "3"])


@st.composite
def debates(draw: st.DrawFn) -> DebateRecord:
    """Parallel 3-agent, 2-round debates: any answers, any round-2 comparison of the two others."""
    turns = [boxed(draw(ANSWERS)) for _ in range(3)]
    for agent in range(3):
        a, b = [x for x in range(3) if x != agent]
        op = draw(st.sampled_from([">", "<", "="]))
        vote = f"{a}{op}{b}" if op != "<" else f"{b}>{a}"
        turns.append(boxed(draw(ANSWERS), vote))
    return parallel(*turns)


@settings(max_examples=200, deadline=None)
@given(debates())
def test_the_vote_winner_is_the_answer_of_a_highest_scored_solution(record: DebateRecord) -> None:
    """Definition: Borda scores per judged solution (a win 1, a tie 1/2); the answer is that of a
    solution with the highest score."""
    scores: dict[int, float] = {}
    for vote in judged_votes(record):
        scores[vote.first] = scores.get(vote.first, 0.0) + (0.5 if vote.tie else 1.0)
        scores[vote.second] = scores.get(vote.second, 0.0) + (0.5 if vote.tie else 0.0)
    best = max(scores.values())
    allowed = {read(record.turns[p].response.solution) for p, s in scores.items() if s == best}
    assert VOTE_WINNER(record, read).answer in allowed


class TestMajorityContract(AnswerRuleContract):
    component_name = "majority"


class TestVoteWinnerContract(AnswerRuleContract):
    component_name = "vote_winner"


class TestAnswerVotesContract(AnswerRuleContract):
    component_name = "answer_votes"
