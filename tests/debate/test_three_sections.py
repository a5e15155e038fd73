"""The three-section contract (docs/protocol.md#the-three-section-contract): three sections read
leniently, no turn ever fails over format, the debate runs every round, and a response that
should have compared and did not costs its judge stream the v2 format penalty."""

from __future__ import annotations

import attrs
from hypothesis import given
from hypothesis import strategies as st

from debate_core.debate.running import run_debate
from debate_core.debate.three_sections import THREE_SECTION_CONTRACT, ThreeSectionParser, parse_three_sections
from debate_core.records import JUDGE_STREAM, Comparison, Problem, ResponseContent
from debate_core.rewards.v2 import V2Reward
from debate_core.testing.scripted_debate import ScriptedPolicy, run_sync, scripted_setup


def three(solution: str, comparison: str = "N/A") -> str:
    return f"<solution>{solution}</solution>\n<evaluation>fine</evaluation>\n<comparison>{comparison}</comparison>"


def test_reads_the_three_sections_in_any_order_and_missing_ones_as_empty() -> None:
    response = parse_three_sections("<think>hm</think>" + three("so \\boxed{42}", "Agent 0 > Agent 1"))
    assert response.ok and response.solution == "so \\boxed{42}" and response.evaluation == "fine"
    assert response.comparisons == (Comparison(0, ">", 1),)
    swapped = parse_three_sections("<comparison>Agent 2 = Agent 0</comparison><solution>7</solution>")
    assert swapped.ok and swapped.solution == "7" and swapped.evaluation == ""
    assert swapped.comparisons == (Comparison(2, "=", 0),)
    assert [s.name for s in swapped.spans] == ["comparison", "solution"]  # in text order
    unclosed = parse_three_sections("<solution>the answer is 5")
    assert unclosed.ok and unclosed.solution == "the answer is 5" and unclosed.comparisons == ()


@given(st.text(max_size=300))
def test_no_text_is_a_format_error(text: str) -> None:
    response = parse_three_sections(text)
    assert response.error is None
    for span in response.spans:
        assert 0 <= span.start <= span.end <= len(text)


def test_the_contract_names_no_consensus_and_stops_after_the_comparison() -> None:
    assert THREE_SECTION_CONTRACT.sections == ("solution", "evaluation", "comparison")
    assert THREE_SECTION_CONTRACT.stop_marker == "</comparison>"
    rendered = THREE_SECTION_CONTRACT.render(ResponseContent(solution="42", comparisons=(Comparison(0, ">", 1),)))
    assert rendered.text == three("42", "Agent 0 > Agent 1").replace("fine", "N/A")
    assert "consensus" not in THREE_SECTION_CONTRACT.instructions_for(1).lower()


def test_a_debate_never_aborts_over_format_and_missing_comparisons_cost_the_judge_stream() -> None:
    setup = attrs.evolve(scripted_setup(3, 2), parser=ThreeSectionParser(), consensus_rule="never")
    scripts = {
        0: [three("1"), three("1", "Agent 1 > Agent 2")],
        1: ["no tags at all, \\boxed{2}", three("2", "Agent 0 > Agent 2")],
        2: [three("3", "Agent 0 > Agent 1"), "<solution>3</solution>"],  # round 2: no comparison
    }
    policies = [ScriptedPolicy(scripts[agent]) for agent in range(3)]
    record = run_sync(run_debate(Problem("p", "What is 1 + 1?", "2"), setup, policies, seed=0)).record
    assert not record.aborted and len(record.turns) == 6 and not any(t.failed for t in record.turns)
    assert record.turns[1].response.solution == ""  # the untagged response has no solution section
    prompts = [call.prompt_text for policy in policies for call in policy.calls]
    assert all("YES" not in prompt and "Consensus reason" not in prompt for prompt in prompts)
    result = V2Reward()(record)
    judge = result.step_streams[JUDGE_STREAM]
    # agent 2's round-2 turn (turn index 5) saw two other agents and compared nobody: -0.5
    assert judge[2][1] == -0.5 and result.metrics["v2/missing_comparisons"] == 1
