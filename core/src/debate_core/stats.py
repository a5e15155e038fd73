"""Small statistics shared by rewards, metrics and evaluation."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "mean",
    "paired_difference",
    "standard_error",
]


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean, 0.0 for no values (no entries give no signal)."""
    items = [float(x) for x in values]
    return sum(items) / len(items) if items else 0.0


def standard_error(values: Sequence[float]) -> float:
    """The standard error of the mean of ``values`` (sample standard deviation over sqrt(n));
    0.0 with fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    centre = sum(values) / n
    return math.sqrt(sum((x - centre) ** 2 for x in values) / (n - 1) / n)


def paired_difference(first: Sequence[float], second: Sequence[float]) -> tuple[float, float]:
    """The mean of ``second - first`` over paired items, and its standard error."""
    if len(first) != len(second):
        raise ValueError(f"paired values differ in length: {len(first)} and {len(second)}")
    differences = [b - a for a, b in zip(first, second, strict=True)]
    return mean(differences), standard_error(differences)
