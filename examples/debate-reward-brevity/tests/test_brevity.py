"""The example plugin, found and built through its entry point like any installed plugin."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from debate_core.errors import ConfigError
from debate_core.plugin import get_registry
from debate_core.testing import RewardContract, TurnSpec


def test_entry_point_is_declared() -> None:
    (entry,) = [ep for ep in entry_points(group="debate") if ep.name == "brevity"]
    assert entry.value == "debate_reward_brevity"
    assert entry.dist is not None and entry.dist.metadata["Name"] == "debate-reward-brevity"


def test_listed_as_active_from_its_distribution() -> None:
    rows = [row for row in get_registry().listing("reward") if row.name == "brevity"]
    assert [(row.distribution, row.status) for row in rows] == [("debate-reward-brevity", "active")]


def test_shorter_final_solutions_win(make_debate) -> None:  # type: ignore[no-untyped-def]
    debate = make_debate(
        [
            TurnSpec(solution="one two three four"),
            TurnSpec(solution="a b"),
            TurnSpec(solution="x"),
            TurnSpec(solution="one"),
            TurnSpec(solution="a b c d"),
            TurnSpec(solution="x y"),
        ],
        num_agents=3,
    )
    reward = get_registry().build("reward", "brevity", {"max_words": 4})
    result = reward(debate)
    assert result.agent_rewards == pytest.approx((0.75, 0.0, 0.5))
    assert result.metrics["brevity/mean"] == pytest.approx(1.25 / 3)


def test_a_failed_turn_is_no_answer(make_debate) -> None:  # type: ignore[no-untyped-def]
    # Agent 0's last turn broke the contract: its previous valid solution counts, not the empty one.
    # Agent 1 never gave a valid turn: it gets 0, like an agent that wrote max_words words.
    debate = make_debate(
        [TurnSpec(solution="one two three"), TurnSpec(solution="", failed=True), TurnSpec(solution="", failed=True)],
        num_agents=2,
    )
    result = get_registry().build("reward", "brevity", {"max_words": 4})(debate)
    assert result.agent_rewards == pytest.approx((0.25, 0.0))


def test_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="max_words"):
        get_registry().build("reward", "brevity", {"max_words": 0})


class TestBrevityContract(RewardContract):
    reward_name = "brevity"
