"""selected_answer (docs/rewards.md#selected_answer): 1 for agreeing with the answer the debate's
answer rule selects, no ground truth read; the contract suite, and its definition checked on
generated debates against the rule it wraps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from debate_core.debate.final_answer import MajorityRule, VoteWinnerRule
from debate_core.plugin import get_registry
from debate_core.records import DebateRecord, RewardFunction, answer_of
from debate_core.tasks import extract_last_boxed, normalise_answer
from debate_core.testing import RewardContract
from debate_core.testing.synthetic import TurnSpec, synthetic_debate


def reward(**options: Any) -> RewardFunction:
    built: RewardFunction = get_registry().build("reward", "selected_answer", options)
    return built


def read(solution: str) -> str | None:
    boxed = extract_last_boxed(solution)
    return None if boxed is None else normalise_answer(boxed)


class TestSelectedAnswerContract(RewardContract):
    reward_name = "selected_answer"


class TestSelectedAnswerByMajorityContract(RewardContract):
    reward_name = "selected_answer"
    reward_options: ClassVar[Mapping[str, Any]] = {"rule": {"name": "majority"}, "answers": "text"}


def turn(answer: str, vote: str = "") -> TurnSpec:
    lines = ((int(vote[0]), ">", int(vote[-1])),) if vote else ()
    return TurnSpec(solution=f"\\boxed{{{answer}}}", comparisons=lines)


def test_agents_holding_the_vote_winner_get_one() -> None:
    # round 1: 5, 7, 7; both 7-holders prefer agent 0's 5; final answers 5, 7, 5
    record = synthetic_debate(
        3, [turn("5"), turn("7"), turn("7"), turn("5", "1>2"), turn("7", "0>2"), turn("5", "0>1")], protocol="parallel"
    )
    result = reward()(record)
    assert result.agent_rewards == (1.0, 0.0, 1.0)
    assert result.metrics["selected_answer/has_answer"] == 1.0 and result.metrics["selected_answer/fallback"] == 0.0
    assert reward(rule={"name": "majority"})(record).agent_rewards == (1.0, 0.0, 1.0)


def test_no_answer_selected_pays_nobody() -> None:
    record = synthetic_debate(3, [TurnSpec(failed=True)])
    assert reward()(record).agent_rewards == (0.0, 0.0, 0.0)


@st.composite
def debates(draw: st.DrawFn) -> DebateRecord:
    turns = [turn(draw(st.sampled_from("123"))) for _ in range(3)]
    for agent in range(3):
        a, b = [x for x in range(3) if x != agent]
        turns.append(turn(draw(st.sampled_from("123")), draw(st.sampled_from([f"{a}>{b}", f"{b}>{a}", ""]))))
    return synthetic_debate(3, turns, protocol="parallel")


@settings(max_examples=100, deadline=None)
@given(debates())
def test_the_reward_is_agreement_with_the_rule_s_answer(record: DebateRecord) -> None:
    for name, rule in (("vote_winner", VoteWinnerRule()), ("majority", MajorityRule())):
        chosen = rule(record, read).answer
        finals = [record.final_turn(a) for a in range(3)]
        expected = tuple(float(t is not None and answer_of(t.response.solution, read)[0] == chosen) for t in finals)
        assert reward(rule={"name": name})(record).agent_rewards == expected
