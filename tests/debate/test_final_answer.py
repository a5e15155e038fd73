"""Final answer of a test-time debate: majority of the latest solutions, ties broken by votes."""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from debate_core.cli import run_cmd
from debate_core.debate.final_answer import final_answer
from debate_core.debate.transcripts import load_transcript, record_to_json
from debate_core.records import Grade, vote_counts
from debate_core.tasks.graders import build_boxed
from debate_core.testing.scripted_debate import scripted_debate
from debate_core.training.correctness import grade_debate

from .helpers import response


def test_majority_of_the_last_round_wins_with_whitespace_normalised() -> None:
    texts = [response("7"), response("7"), response("7"), response("x =  42"), response("x = 42\n"), response("9")]
    answer = final_answer(scripted_debate(texts, 3))
    assert answer.answer == "x = 42" and answer.support == 2
    assert [c.agents for c in answer.candidates] == [(0, 1), (2,)]


def test_a_tie_is_broken_by_peer_votes() -> None:
    texts = [
        response("A"),
        response("B"),
        response("A", ["Agent 1 > Agent 0"]),
        response("B", ["Agent 1 > Agent 2"]),
    ]
    record = scripted_debate(texts, 4)
    assert [(t.agent, t.wins, t.losses, t.ties) for t in vote_counts(record)] == [
        (0, 0, 1, 0),
        (1, 2, 0, 0),
        (2, 0, 1, 0),
        (3, 0, 0, 0),
    ]
    answer = final_answer(record)
    assert answer.answer == "B" and [c.score for c in answer.candidates] == [2.0, 0.0]


def test_without_votes_the_lowest_agent_id_breaks_the_tie() -> None:
    assert final_answer(scripted_debate([response("B"), response("A")], 2)).answer == "B"


@attrs.frozen
class BoxedGrader:
    def grade(self, solution: str, answer: str) -> Grade:
        start = solution.find("\\boxed{")
        extracted = solution[start + 7 : solution.find("}", start)] if start >= 0 else None
        return Grade(formatted=extracted is not None, correct=extracted == answer, extracted=extracted)


def test_a_grader_compares_extracted_answers_and_judges_the_winner() -> None:
    texts = [response("so \\boxed{42}"), response("\\boxed{42} it is"), response("\\boxed{41}")]
    record = scripted_debate(texts, 3, answer="42")
    answer = final_answer(record, BoxedGrader())
    assert answer.answer == "42" and answer.support == 2 and answer.correct is True
    assert final_answer(record).support == 1  # as plain text the three solutions all differ


def test_failed_turns_fall_back_to_the_previous_solution() -> None:
    record = scripted_debate([response("A"), response("B"), response("B"), "broken"], 2)
    assert record.aborted
    answer = final_answer(record)
    assert answer.answer == "B" and answer.candidates[0].agents == (0, 1)


def test_no_valid_response_gives_no_answer() -> None:
    answer = final_answer(scripted_debate(["broken"], 1))
    assert answer.answer is None and answer.support == 0


SOLUTIONS = ("\\boxed{7}", "so \\boxed{7}", "\\boxed{8}", "7", "8", "no idea")


@settings(max_examples=150, deadline=None)
@given(
    num_agents=st.integers(1, 4),
    turns=st.lists(
        st.tuples(
            st.sampled_from((*SOLUTIONS, "broken")),
            st.lists(st.tuples(st.integers(0, 3), st.sampled_from(">="), st.integers(0, 3)), max_size=3),
        ),
        min_size=1,
        max_size=10,
    ),
)
def test_debate_run_and_debate_eval_agree_on_the_same_transcript(
    num_agents: int, turns: list[tuple[str, list[tuple[int, str, int]]]]
) -> None:
    """docs/protocol.md#the-final-answer is the one rule: the answer `debate run` prints (and marks
    correct or wrong) is the one evaluation scores as cons@k, and each agent's final answer that
    pass@k and avg@k count is the latest turn that followed the contract."""
    texts = [
        "broken" if solution == "broken" else response(solution, [f"Agent {a} {op} Agent {b}" for a, op, b in votes])
        for solution, votes in turns
    ]
    saved = record_to_json(scripted_debate(texts, num_agents, answer="7"))
    record = load_transcript(saved)  # the same transcript, as both commands would read it
    grader = build_boxed(None)
    printed = "\n".join(run_cmd.format_outcome(record, final_answer(record, grader)))
    graded = grade_debate(record, grader)
    assert graded is not None
    assert ("[correct]" in printed) == (graded.cons_at_k == 1.0)
    assert ("[wrong]" in printed) == (graded.cons_at_k == 0.0 and "Final answer: none" not in printed)
    for agent in range(num_agents):
        final = record.final_turn(agent)
        expected = final is not None and grader.grade(final.response.solution, "7").correct
        assert graded.final_grades[agent].correct == expected
