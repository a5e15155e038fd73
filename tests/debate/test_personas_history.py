"""Personas, history policies and turn instructions (docs/protocol.md#what-an-agent-sees)."""

from __future__ import annotations

import attrs
import pytest

from debate_core.builtin.history import debate_history_policies
from debate_core.builtin.personas import debate_persona_sets
from debate_core.config.structuring import structure
from debate_core.debate.history_policies import (
    CLIP_MARKER,
    AllRounds,
    HistoryOptions,
    LastRounds,
    LastRoundsOptions,
    NoHistory,
    clip_field,
)
from debate_core.debate.instructions import turn_instructions
from debate_core.debate.observations import system_prompt
from debate_core.debate.personas import DefaultPersonas, DefaultPersonasOptions, PlainPersonas
from debate_core.debate.xml_parser import XML_CONTRACT
from debate_core.records import ParsedResponse, Turn

NAMES = ["Methodical Analyst", "Creative Problem-Solver", "Devil's Advocate", "Synthesizer", "First Principles Thinker"]


def test_default_personas_have_their_temperatures_and_cycle() -> None:
    personas = [DefaultPersonas().persona(i, 7) for i in range(7)]
    assert [p.name for p in personas] == [*NAMES, NAMES[0], NAMES[1]]
    assert [p.temperature for p in personas] == [0.6, 1.0, 0.9, 1.0, 0.8, 0.6, 1.0]
    for i, p in enumerate(personas):
        assert f"You are Agent {i}, the {p.name}" in p.system_prompt
        assert f"Never include yourself (Agent {i}) in a comparison" in system_prompt(p, XML_CONTRACT, i)
    no_temperatures = DefaultPersonas(DefaultPersonasOptions(use_persona_temperatures=False))
    assert no_temperatures.persona(0, 3).temperature is None


def test_plain_personas_state_the_contract_without_a_persona() -> None:
    p = PlainPersonas().persona(2, 3)
    assert p.temperature is None and p.name == "Agent 2"
    prompt = system_prompt(p, XML_CONTRACT, 2)  # the persona, then the parser's contract instructions
    assert prompt.startswith("You are Agent 2 in a debate among 3 agents")
    for tag in ("<solution>", "<evaluation>", "<comparison>", "<consensus>", "<consensus_reason>"):
        assert tag in prompt
    assert "Reason before judging" in prompt and '"Agent A > Agent B"' in prompt
    assert "Never include yourself (Agent 2)" in prompt


def test_persona_plugins() -> None:
    specs = {s.name: s for s in debate_persona_sets()}
    assert set(specs) == {"default", "plain"}
    assert isinstance(specs["default"].make(), DefaultPersonas)
    assert isinstance(specs["plain"].make(), PlainPersonas)


def turn(round_: int, agent: int, text: str = "x" * 30) -> Turn:
    response = ParsedResponse(solution=text, evaluation=text, comparison="Agent 1 > Agent 2", consensus_reason=text)
    return Turn(round=round_, agent=agent, step=round_ - 1, turn_index=0, visible_turns=0, text="", response=response)


VISIBLE = [turn(r, a) for r in (1, 2, 3) for a in range(3)][:7]  # rounds 1, 2 and agent 0 of round 3


def test_all_none_and_last_k_select_rounds_as_documented() -> None:
    assert [(e.round, e.agent) for e in AllRounds().select(VISIBLE, 3)] == [(t.round, t.agent) for t in VISIBLE]
    assert list(NoHistory().select(VISIBLE, 3)) == []
    last_one = LastRounds(LastRoundsOptions(rounds=1)).select(VISIBLE, 3)
    assert [(e.round, e.agent) for e in last_one] == [(2, 0), (2, 1), (2, 2), (3, 0)]
    assert len(LastRounds(LastRoundsOptions(rounds=2)).select(VISIBLE, 3)) == 7
    # round 1 of a sequential debate: the current round stays visible whatever K is
    assert len(LastRounds().select(VISIBLE[:2], 1)) == 2


def rounds_shown(policy: LastRounds, visible: list[Turn], current_round: int) -> list[int]:
    return sorted({e.round for e in policy.select(visible, current_round)})


@pytest.mark.parametrize("k", [1, 2, 3])
def test_counting_the_current_round_is_the_recipes_last_k_rounds_with_a_response(k: int) -> None:
    """``history_rounds = K``: the last K of the rounds that hold a response the agent can see."""
    recipe = LastRounds(LastRoundsOptions(rounds=k, count_current_round=True))
    everything = [turn(r, a) for r in (1, 2, 3, 4) for a in range(3)]
    for current in (1, 2, 3, 4):
        for agent in range(3):  # sequential: rounds before, and the earlier agents of this round
            visible = [t for t in everything if t.round < current or (t.round == current and t.agent < agent)]
            with_a_response = sorted({t.round for t in visible})
            assert rounds_shown(recipe, visible, current) == with_a_response[-k:], (current, agent)
            # without counting the current round, agents 1 and up see one round more (while there is one)
            plain = rounds_shown(LastRounds(LastRoundsOptions(rounds=k)), visible, current)
            expected = with_a_response[-(k + 1) :] if agent > 0 else with_a_response[-k:]
            assert plain == expected, (current, agent)


def test_fields_are_clipped_and_judgements_hidden_when_blind() -> None:
    (entry,) = AllRounds(HistoryOptions(max_chars_per_field=10, blind=True)).select(VISIBLE[:1], 2)
    assert entry.solution == "x" * 10 + CLIP_MARKER == entry.evaluation
    assert entry.comparison is None and entry.consensus_reason is None
    (entry,) = AllRounds(HistoryOptions(max_chars_per_field=10)).select(VISIBLE[:1], 2)
    assert entry.consensus_reason == "x" * 10 + CLIP_MARKER
    (entry,) = LastRounds(LastRoundsOptions(max_chars_per_field=100)).select(VISIBLE[:1], 1)
    assert entry.solution == "x" * 30 and entry.comparison == "Agent 1 > Agent 2"
    assert clip_field("abc", 3) == "abc" and clip_field("abcd", None) == "abcd"


def test_history_options_are_validated_with_key_paths() -> None:
    from debate_core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"debate.history_policy.options.max_chars_per_field: must be at least 1"):
        structure({"max_chars_per_field": 0}, HistoryOptions, "debate.history_policy.options")
    with pytest.raises(ConfigError, match=r"rounds: must be at least 1"):
        structure({"rounds": 0}, LastRoundsOptions, "debate.history_policy.options")
    specs = {s.name: s for s in debate_history_policies()}
    assert set(specs) == {"all", "none", "last_k"}


def instructions(
    agent: int, round_: int, now: list[int], earlier: list[int], *, brief: bool = False, informed: bool = True
) -> str:
    return turn_instructions(
        agent=agent,
        round=round_,
        max_rounds=3,
        answered_this_round=now,
        seen_in_earlier_rounds=earlier,
        contract=XML_CONTRACT,
        brief=brief,
        informed=informed,
    )


def test_round_one_bootstrapping_follows_whom_the_agent_sees() -> None:
    first = instructions(0, 1, [], [])
    assert "Nobody else has answered yet" in first and "N/A in <evaluation> and N/A in <comparison>" in first
    second = instructions(1, 1, [0], [])
    assert "evaluate Agent 0's solution" in second and "N/A in <comparison>" in second
    third = instructions(3, 1, [0, 1, 2], [])
    assert "compare only agents who have already answered (Agent 0, Agent 1 and Agent 2)" in third
    assert "Round 1 of 3. You are Agent 3." in third


@pytest.mark.parametrize(
    ("agent", "round", "now", "earlier", "expected"),
    [
        (0, 1, [], [], "Round 1 of 3. You are Agent 0. Solve it in <solution>, N/A in <evaluation> and <comparison>."),
        (1, 1, [0], [], "check Agent 0 in <evaluation>, N/A in <comparison>."),
        (
            3,
            1,
            [0, 1, 2],
            [],
            "check Agent 0, Agent 1 and Agent 2 in <evaluation>, compare them in <comparison>, never",
        ),
        (
            1,
            2,
            [0],
            [0, 1, 2],
            "check Agent 0 and Agent 2 in <evaluation>, compare them in <comparison>, never yourself.",
        ),
        (0, 2, [], [0, 1], "check Agent 1 in <evaluation>, N/A in <comparison>."),
    ],
)
def test_brief_instructions_keep_the_rules_in_a_sentence(
    agent: int, round: int, now: list[int], earlier: list[int], expected: str
) -> None:
    full = instructions(agent, round, now, earlier)
    brief = instructions(agent, round, now, earlier, brief=True)
    assert expected in brief
    assert len(brief) < len(full) * 0.7
    assert brief.endswith("YES in <consensus> only if all answers agree with yours.")
    uninformed = instructions(agent, round, now, earlier, brief=True, informed=False)
    assert uninformed.endswith("NO in <consensus>.")


def test_later_rounds_ask_for_meta_judging() -> None:
    text = instructions(1, 2, [0], [0, 1, 2])
    assert "also their evaluations and comparisons" in text
    assert "compare the other agents (Agent 0 and Agent 2)" in text and "never include yourself" in text
    two_agents = instructions(0, 2, [], [0, 1])
    assert "not two other agents to compare" in two_agents
    alone = instructions(1, 3, [], [])  # the `none` history: nobody in view
    assert "Nobody else has answered yet" in alone


def test_the_question_ends_the_first_user_message_and_only_that_one() -> None:
    from debate_core.debate.observations import OwnTurn, build_messages
    from debate_core.records import HistoryEntry

    entry = HistoryEntry(round=1, agent=0, solution="s0", evaluation="e0", comparison="N/A", consensus_reason="r0")
    first = build_messages(
        question="What is 6 * 7?",
        system_prompt="sys",
        agent=1,
        entries=[entry],
        turn_indices=[0],
        own_turns={},
        instructions="Round 1 of 2. You are Agent 1.",
    )
    assert [m.role for m in first] == ["system", "user"]
    assert first[1].content.startswith("Responses of the other agents:")
    assert first[1].content.endswith("Round 1 of 2. You are Agent 1.\n\nQuestion:\nWhat is 6 * 7?")
    later = build_messages(
        question="What is 6 * 7?",
        system_prompt="sys",
        agent=1,
        entries=[attrs.evolve(entry, agent=1)],
        turn_indices=[0],
        own_turns={
            1: OwnTurn(instructions="Round 1 of 2. You are Agent 1.", text="<solution>42</solution>", visible_turns=0)
        },
        instructions="Round 2 of 2.",
    )
    assert later[1].content.endswith("Question:\nWhat is 6 * 7?") and later[-1].content == "Round 2 of 2."
