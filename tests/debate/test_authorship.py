"""Authorship rules (docs/protocol.md#authorship-and-validity): self-comparisons dropped first, then malformed ones."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from debate_core.records import Comparison, apply_authorship


def test_self_comparisons_are_dropped_and_counted() -> None:
    result = apply_authorship([Comparison(1, ">", 2), Comparison(0, ">", 2), Comparison(2, "=", 1)], 1, 3)
    assert result.valid == (Comparison(0, ">", 2),)
    assert (result.self_comparisons, result.malformed) == (2, 0)


def test_out_of_range_and_equal_ids_are_malformed() -> None:
    result = apply_authorship(
        [Comparison(0, ">", 3), Comparison(2, "=", 2), Comparison(-1, ">", 2), Comparison(0, "=", 2)], 1, 3
    )
    assert result.valid == (Comparison(0, "=", 2),)
    assert (result.self_comparisons, result.malformed) == (0, 3)


def test_self_rule_comes_first() -> None:
    # the author on either side is a self-comparison even when the other id is invalid
    result = apply_authorship([Comparison(1, ">", 1), Comparison(1, ">", 9)], 1, 3)
    assert (result.valid, result.self_comparisons, result.malformed) == ((), 2, 0)


def test_without_num_agents_only_the_range_check_is_skipped() -> None:
    result = apply_authorship([Comparison(7, ">", 9), Comparison(4, "=", 4)], 0, None)
    assert result.valid == (Comparison(7, ">", 9),) and result.malformed == 1


@given(
    st.lists(st.tuples(st.integers(-2, 6), st.sampled_from([">", "="]), st.integers(-2, 6)), max_size=12),
    st.integers(0, 4),
    st.integers(1, 5),
)
def test_every_comparison_is_kept_or_counted_once(
    raw: list[tuple[int, str, int]], author: int, num_agents: int
) -> None:
    comparisons = [Comparison(a, op, b) for a, op, b in raw]  # type: ignore[arg-type]
    result = apply_authorship(comparisons, author, num_agents)
    assert len(result.valid) + result.self_comparisons + result.malformed == len(comparisons)
    for c in result.valid:
        assert author not in (c.a, c.b) and c.a != c.b
        assert 0 <= c.a < num_agents and 0 <= c.b < num_agents
