"""Small builders shared by this distribution's tests."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from debate_core.records import DebateRecord
from debate_core.testing.synthetic import TurnSpec, random_debate, synthetic_debate


def votes(*lines: str) -> tuple[tuple[int, Any, int], ...]:
    """``"0>1"``-style lines to raw comparisons."""
    out: list[tuple[int, Any, int]] = []
    for line in lines:
        op = ">" if ">" in line else "="
        a, b = line.split(op)
        out.append((int(a), op, int(b)))
    return tuple(out)


def debate_of(n: int, *turn_votes: tuple[str, ...], protocol: Any = "sequential") -> DebateRecord:
    """A debate whose turn ``k`` (agent ``k % n``) casts the votes ``turn_votes[k]``."""
    return synthetic_debate(n, [TurnSpec(comparisons=votes(*v)) for v in turn_votes], protocol=protocol)


debates: st.SearchStrategy[DebateRecord] = st.randoms(use_true_random=False).map(lambda rng: random_debate(rng))
"""Random debates with ties, invalid votes, failures, 1-5 agents."""

__all__ = ["debate_of", "debates", "random", "votes"]
