"""majority (docs/rewards.md#majority): 1 for agreeing with the debate's plurality answer, no
ground truth read; the contract suite, and its definition checked on random debates."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.plugin import get_registry
from debate_core.records import DebateRecord, RewardFunction
from debate_core.testing import RewardContract
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

ANSWERS = ("7", "8", "9", None, "broken")
"""A turn's content in the generated debates: a boxed answer, a solution without one, or a failed turn."""


def majority() -> RewardFunction:
    reward: RewardFunction = get_registry().build("reward", "majority")
    return reward


def spec(content: str | None, grade: float | None = None) -> TurnSpec:
    if content == "broken":
        return TurnSpec(failed=True)
    return TurnSpec(solution="no answer here" if content is None else f"so \\boxed{{{content}}}", grade=grade)


def debate_of(
    rows: list[list[str | None]], answer: str | None = None, grades: list[float | None] | None = None
) -> DebateRecord:
    """``rows[r][a]``: what agent ``a`` says in round ``r + 1``."""
    flat = [content for row in rows for content in row]
    marks = grades or [None] * len(flat)
    return synthetic_debate(
        len(rows[0]), [spec(c, g) for c, g in zip(flat, marks, strict=True)], answer=answer, protocol="parallel"
    )


class TestMajorityContract(RewardContract):
    reward_name = "majority"


class TestMajorityOnWholeSolutionsContract(RewardContract):
    reward_name = "majority"
    reward_options: ClassVar[Mapping[str, Any]] = {"answers": "text"}


def test_the_agents_of_the_plurality_answer_get_one() -> None:
    result = majority()(debate_of([["7", "8", "8"], ["7", "8", "9"]]))
    # final answers 7, 8, 9: a three-way tie, no majority
    assert result.agent_rewards == (0.0, 0.0, 0.0) and result.metrics["majority/has_majority"] == 0.0
    result = majority()(debate_of([["7", "8", "9", "8"], ["8", "broken", "9", "8"]]))
    # agent 1's last turn failed: its final answer is its round-1 8; finals 8, 8, 9, 8
    assert result.agent_rewards == (1.0, 1.0, 0.0, 1.0)
    assert result.metrics["majority/support"] == 0.75 and result.metrics["majority/answered"] == 1.0


def test_answers_are_compared_after_normalisation_and_unreadable_ones_count_for_nothing() -> None:
    debate = synthetic_debate(
        4,
        [TurnSpec(solution="\\boxed{1,000}"), TurnSpec(solution="\\boxed{1000}"), spec(None), spec(None)],
    )
    assert majority()(debate).agent_rewards == (1.0, 1.0, 0.0, 0.0)
    assert majority()(synthetic_debate(2, [spec(None), spec(None)])).agent_rewards == (0.0, 0.0)


def test_whole_solutions_are_answers_with_answers_text() -> None:
    reward = get_registry().build("reward", "majority", {"answers": "text"})
    debate = synthetic_debate(3, [TurnSpec(solution="forty  two"), TurnSpec(solution="forty two"), TurnSpec()])
    assert reward(debate).agent_rewards == (1.0, 1.0, 0.0)


contents = st.sampled_from(ANSWERS)


@st.composite
def debate_rows(draw: st.DrawFn) -> list[list[str | None]]:
    agents = draw(st.integers(1, 5))
    rounds = draw(st.integers(1, 3))
    return [[draw(contents) for _ in range(agents)] for _ in range(rounds)]


@given(debate_rows(), st.randoms(use_true_random=False))
def test_relabelling_the_agents_relabels_the_rewards(rows: list[list[str | None]], rng: random.Random) -> None:
    agents = len(rows[0])
    permutation = list(range(agents))
    rng.shuffle(permutation)
    relabelled = [[row[permutation[a]] for a in range(agents)] for row in rows]
    before = majority()(debate_of(rows)).agent_rewards
    after = majority()(debate_of(relabelled)).agent_rewards
    assert after == tuple(before[permutation[a]] for a in range(agents))


@given(debate_rows(), st.sampled_from([None, "7", "8"]), st.randoms(use_true_random=False))
def test_no_answer_key_is_read(rows: list[list[str | None]], answer: str | None, rng: random.Random) -> None:
    plain = debate_of(rows)
    grades: list[float | None] = [rng.choice((None, 0.0, 1.0)) for row in rows for _ in row]
    keyed = debate_of(rows, answer=answer, grades=grades)
    assert majority()(keyed) == majority()(plain)


@given(debate_rows())
def test_rewards_follow_the_definition(rows: list[list[str | None]]) -> None:
    record: DebateRecord = debate_of(rows)
    finals: list[str | None] = []
    for agent in range(record.num_agents):
        said = [row[agent] for row in rows if row[agent] != "broken"]
        finals.append(said[-1] if said else None)
    counts = Counter(f for f in finals if f is not None).most_common()
    winner = counts[0][0] if counts and (len(counts) == 1 or counts[0][1] > counts[1][1]) else None
    expected = tuple(float(winner is not None and f == winner) for f in finals)
    assert majority()(record).agent_rewards == pytest.approx(expected)
