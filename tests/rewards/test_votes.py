"""Vote tallies: the validity rules of docs/rewards.md#votes and the discarded-line counts."""

from __future__ import annotations

import attrs

from debate_core.records import Comparison, tally_votes
from debate_core.testing.synthetic import TurnSpec, synthetic_debate


def test_authorship_rules_drop_and_count() -> None:
    debate = synthetic_debate(
        3,
        [
            TurnSpec(comparisons=((1, ">", 2), (0, ">", 1), (1, "=", 1), (5, ">", 0)), invalid_lines=2),
            TurnSpec(comparisons=((0, "=", 2), (1, ">", 1))),
        ],
    )
    tally = tally_votes(debate)
    assert [(v.author, v.a, v.op, v.b) for v in tally.votes] == [(0, 1, ">", 2), (1, 0, "=", 2)]
    # Self-comparison first (docs/protocol.md#authorship-and-validity): ``5 > 0`` by agent 0 and
    # ``1 > 1`` by agent 1 name their author, so they are self-comparisons though their ids are malformed.
    assert [(t.self_comparisons, t.malformed_comparisons) for t in debate.turns] == [(2, 1), (1, 0)]
    assert (tally.malformed, tally.self_comparisons, tally.invalid_lines) == (1, 3, 2)


def test_failed_turns_cast_no_votes() -> None:
    debate = synthetic_debate(
        3, [TurnSpec(comparisons=((1, ">", 2), (0, ">", 1), (4, ">", 1)), failed=True)], max_rounds=2
    )
    failed = debate.turns[0]
    assert failed.failed and debate.aborted
    assert (failed.comparisons, failed.self_comparisons, failed.malformed_comparisons) == ((), 0, 0)
    tally = tally_votes(debate)
    assert tally.votes == () and tally.failed_turns == 1
    assert (tally.malformed, tally.self_comparisons) == (0, 0)


def test_failed_turn_among_good_ones_leaves_the_others_votes() -> None:
    debate = synthetic_debate(
        3,
        [
            TurnSpec(comparisons=((1, ">", 2),)),
            TurnSpec(comparisons=((0, ">", 2),), failed=True),
        ],
    )
    tally = tally_votes(debate)
    assert [(v.author, v.a, v.b) for v in tally.votes] == [(0, 1, 2)]
    assert tally.failed_turns == 1


def test_hand_written_invalid_votes_are_checked_again() -> None:
    debate = synthetic_debate(3, [TurnSpec(), TurnSpec()])
    smuggled = attrs.evolve(debate.turns[0], comparisons=(Comparison(0, ">", 1), Comparison(4, ">", 1)))
    debate = attrs.evolve(debate, turns=(smuggled, debate.turns[1]))
    tally = tally_votes(debate)
    assert tally.votes == () and tally.self_comparisons == 1 and tally.malformed == 1


def test_hand_written_self_comparison_is_checked_before_malformed() -> None:
    debate = synthetic_debate(3, [TurnSpec()])
    smuggled = attrs.evolve(debate.turns[0], comparisons=(Comparison(0, "=", 0), Comparison(0, ">", 7)))
    tally = tally_votes(attrs.evolve(debate, turns=(smuggled,)))
    assert tally.votes == () and (tally.self_comparisons, tally.malformed) == (2, 0)
