"""Hypothesis strategies for random debates (shared by the reward tests)."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from debate_core.records import DebateRecord
from debate_core.testing.synthetic import random_debate


def _debate(rng: random.Random) -> DebateRecord:
    return random_debate(rng)


debates: st.SearchStrategy[DebateRecord] = st.randoms(use_true_random=False).map(_debate)
"""Random debates: 1-5 agents, 1-3 rounds, either protocol, ties, invalid and self
comparisons, random grades, sometimes aborted by a failed turn."""
