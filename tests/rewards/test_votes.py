"""Vote tallies: seed 000's validity rules and the discarded-line counts."""

from __future__ import annotations

import attrs

from debate_core.protocol.records import Comparison
from debate_core.rewards.synthetic import TurnSpec, synthetic_debate
from debate_core.rewards.votes import tally_votes


def test_authorship_rules_drop_and_count() -> None:
    debate = synthetic_debate(
        3,
        [
            TurnSpec(comparisons=((1, ">", 2), (0, ">", 1), (1, "=", 1), (5, ">", 0)), invalid_lines=2),
            TurnSpec(comparisons=((0, "=", 2),)),
        ],
    )
    tally = tally_votes(debate)
    assert [(v.author, v.a, v.op, v.b) for v in tally.votes] == [(0, 1, ">", 2), (1, 0, "=", 2)]
    assert (tally.malformed, tally.self_comparisons, tally.invalid_lines) == (2, 1, 2)


def test_failed_turns_cast_no_votes() -> None:
    debate = synthetic_debate(3, [TurnSpec(comparisons=((1, ">", 2),), failed=True)])
    tally = tally_votes(debate)
    assert tally.votes == () and tally.failed_turns == 1


def test_hand_written_invalid_votes_are_checked_again() -> None:
    debate = synthetic_debate(3, [TurnSpec(), TurnSpec()])
    smuggled = attrs.evolve(debate.turns[0], comparisons=(Comparison(0, ">", 1), Comparison(4, ">", 1)))
    debate = attrs.evolve(debate, turns=(smuggled, debate.turns[1]))
    tally = tally_votes(debate)
    assert tally.votes == () and tally.self_comparisons == 1 and tally.malformed == 1
