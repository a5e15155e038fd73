"""What a prompt shows of the other agents (docs/protocol.md#what-an-agent-sees): blind review,
the answers a grader reads, and the brief persona and contract for small models."""

from __future__ import annotations

import attrs

from debate_core.debate.history_policies import AllRounds, HistoryOptions
from debate_core.debate.personas import DefaultPersonas, DefaultPersonasOptions
from debate_core.debate.running import run_debate
from debate_core.debate.xml_parser import XmlParser, XmlParserOptions
from debate_core.records import Problem
from debate_core.tasks.graders import build_boxed
from debate_core.testing.scripted_debate import ScriptedPolicy, run_sync, scripted_setup

from .helpers import response


def round_two_prompts(
    *, blind: bool = False, show_answers: bool = False, grader: bool = True, recap: bool = False
) -> list[str]:
    setup = attrs.evolve(
        scripted_setup(3, 2, protocol="parallel", blind_review=blind), show_answers=show_answers, recap=recap
    )
    texts = [
        response(f"so \\boxed{{{40 + agent}}}", ["Agent 1 > Agent 2"] if agent == 0 else [], reason=f"why {agent}")
        for agent in range(3)
    ]
    policies = [ScriptedPolicy([texts[agent], texts[agent]]) for agent in range(3)]
    problem = Problem("p", "What is 6 * 7?", "42")
    run_sync(run_debate(problem, setup, policies, seed=0, grader=build_boxed(None) if grader else None))
    return [policy.calls[1].prompt_text for policy in policies]


def test_blind_review_shows_only_solutions_and_evaluations() -> None:
    shown = round_two_prompts(blind=True)[2]
    assert "Solution: so \\boxed{40}" in shown and "Evaluation: N/A" in shown
    assert "Comparisons:" not in shown and "Consensus reason:" not in shown
    full = round_two_prompts()[2]
    assert "Comparisons: Agent 1 > Agent 2" in full and "Consensus reason: why 0" in full


def test_the_history_policys_blind_hides_the_same_as_blind_review() -> None:
    """``blind = true`` on a history policy shows what ``blind_review`` shows, under either protocol."""
    texts = [
        response(f"so \\boxed{{{40 + agent}}}", ["Agent 1 > Agent 2"], reason=f"why {agent}") for agent in range(3)
    ]
    for protocol in ("sequential", "parallel"):
        setup = scripted_setup(3, 2, protocol=protocol, history=AllRounds(HistoryOptions(blind=True)))
        policies = [ScriptedPolicy([texts[agent], texts[agent]]) for agent in range(3)]
        run_sync(run_debate(Problem("p", "What is 6 * 7?", "42"), setup, policies, seed=0))
        shown = policies[2].calls[1].prompt_text
        assert "Solution: so \\boxed{40}" in shown, protocol
        assert "Comparisons:" not in shown and "Consensus reason:" not in shown and "why 0" not in shown, protocol


def test_stated_answers_are_what_the_grader_reads() -> None:
    shown = round_two_prompts(show_answers=True)[0]
    assert "Solution: so \\boxed{41}\nAnswer: 41\n" in shown and "Answer: 42" in shown
    assert "Answer: 40" not in shown  # agent 0's own answer is its own message, not an entry
    assert "Answer:" not in round_two_prompts()[0]
    assert "Answer:" not in round_two_prompts(show_answers=True, grader=False)[0]


def test_the_brief_persona_and_contract() -> None:
    persona = DefaultPersonas(DefaultPersonasOptions(brief=True)).persona(1, 3)
    assert persona.system_prompt == "You are Agent 1 of 3, the Creative Problem-Solver."
    brief = XmlParser(XmlParserOptions(instructions="brief")).contract
    assert brief.instructions_for(1).startswith("Answer in <solution>, <evaluation>, <comparison>")
    assert "never Agent 1" in brief.instructions_for(1)
    assert len(brief.instructions_for(1)) < len(XmlParser().contract.instructions_for(1)) / 3
    assert brief.render is XmlParser().contract.render  # the same format, stated in one sentence


def test_the_recap_ends_later_prompts_with_the_question_and_the_stated_answers() -> None:
    shown = round_two_prompts(show_answers=True, recap=True)[0]
    assert shown.rstrip().endswith(
        "Question: What is 6 * 7?\nStated answers: Agent 1 says 41. Agent 2 says 42.\n\nAssistant:"
    )
    assert shown.count("Question:") == 2  # the first message's question stays where it was
    without_answers = round_two_prompts(recap=True)[0]
    assert "Stated answers" not in without_answers
    assert without_answers.rstrip().endswith("Question: What is 6 * 7?\n\nAssistant:")
    assert "Stated answers" not in round_two_prompts(show_answers=True)[0]


def test_the_recap_names_an_answer_the_grader_cannot_read() -> None:
    from debate_core.debate.observations import recap
    from debate_core.records import HistoryEntry

    entries = [
        HistoryEntry(1, 1, "so 41", "", None, None, answer=None),
        HistoryEntry(1, 2, "so \\boxed{42}", "", None, None, answer="42"),
        HistoryEntry(2, 2, "so \\boxed{43}", "", None, None, answer="43"),
    ]
    assert recap("Q?", entries) == "Question: Q?\nStated answers: Agent 1 says no answer. Agent 2 says 43."
