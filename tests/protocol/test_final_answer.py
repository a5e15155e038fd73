"""Final answer of a test-time debate: majority of the latest solutions, ties broken by votes."""

from __future__ import annotations

import attrs

from debate_core.debate.final_answer import final_answer, vote_tally
from debate_core.records import Grade
from debate_core.testing.scripted_debate import scripted_debate

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
    assert [(t.agent, t.wins, t.losses, t.ties) for t in vote_tally(record)] == [
        (0, 0, 1, 0),
        (1, 2, 0, 0),
        (2, 0, 1, 0),
        (3, 0, 0, 0),
    ]
    answer = final_answer(record)
    assert answer.answer == "B" and [c.vote_score for c in answer.candidates] == [2.0, 0.0]


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
