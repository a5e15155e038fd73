"""The arithmetic dataset: seeded, disjoint splits, right answers, levels."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.config.structuring import structure
from debate_core.errors import ConfigError
from debate_core.tasks.arithmetic import LEVELS, ArithmeticDataset, ArithmeticOptions, generate
from debate_core.tasks.errors import DatasetError


def _evaluate(question: str) -> int:
    match = re.fullmatch(r"What is (\d+)([-+*])(\d+)\?", question)
    assert match, question
    x, op, y = int(match.group(1)), match.group(2), int(match.group(3))
    return x + y if op == "+" else x - y if op == "-" else x * y


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_answers_ranges_and_disjoint_splits(difficulty: int) -> None:
    data = ArithmeticDataset(ArithmeticOptions(difficulty=difficulty, num_train=300, num_test=40, seed=3))
    test, train = data.problems("test"), data.problems("train")
    assert len(test) == 40 and len(train) == 300
    assert len({p.question for p in test}) == 40
    assert not {p.question for p in test} & {p.question for p in train}
    level = LEVELS[difficulty]
    for p in (*test, *train):
        assert p.answer == str(_evaluate(p.question))
        a, op, b = int(p.metadata["a"]), p.metadata["op"], int(p.metadata["b"])
        assert op in level.operations
        assert level.left[0] <= a <= level.left[1] and level.right[0] <= b <= level.right[1]
        assert int(p.answer) >= 0


def test_same_seed_same_problems_other_seed_other_problems() -> None:
    one = ArithmeticDataset(ArithmeticOptions(seed=1)).problems("train")
    assert one == ArithmeticDataset(ArithmeticOptions(seed=1)).problems("train")
    assert one != ArithmeticDataset(ArithmeticOptions(seed=2)).problems("train")


def test_level_sizes_are_exact() -> None:
    assert LEVELS[1].size() == 100
    assert LEVELS[4].size() == 90 * 90 + sum(a - 9 for a in range(10, 100))


def test_too_many_test_problems_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="only 100 distinct problems; ask for at most 50"):
        ArithmeticDataset(ArithmeticOptions(difficulty=1, num_test=60))


def test_options_validation_lists_levels() -> None:
    with pytest.raises(ConfigError, match="1: one-digit addition"):
        structure({"difficulty": 9}, ArithmeticOptions, "dataset.options")


def test_unknown_split() -> None:
    with pytest.raises(DatasetError, match="unknown split 'dev'"):
        ArithmeticDataset().problems("dev")


@given(st.sampled_from(sorted(LEVELS)), st.integers(0, 2**32))
def test_generator_is_seeded(difficulty: int, seed: int) -> None:
    first = generate(difficulty, 5, random.Random(seed))
    assert first == generate(difficulty, 5, random.Random(seed))
    assert all(p.answer == str(_evaluate(p.question)) for p in first)
