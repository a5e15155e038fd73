"""Small statistics shared by rewards, metrics and evaluation, and the one way amounts of money are written."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "dollars",
    "mean",
    "paired_difference",
    "standard_error",
    "wilson_interval",
]

Z_95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""


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


def wilson_interval(proportion: float, count: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a proportion observed over ``count`` trials.

    Unlike ``p ± z·sqrt(p(1-p)/n)`` it stays inside [0, 1] and does not shrink to a point at 0 or
    1: 4 successes out of 4 give [0.51, 1], not "1 ± 0". ``(0, 1)`` for no trials."""
    if count <= 0:
        return 0.0, 1.0
    p = min(max(proportion, 0.0), 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * count)) / (1 + z2 / count)
    half = z / (1 + z2 / count) * math.sqrt(p * (1 - p) / count + z2 / (4 * count * count))
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # it holds p; rounding aside


def dollars(amount: float) -> str:
    """``$0.0123``, ``$4.57``, ``$1,234``: enough digits to tell a small step's cost from nothing."""
    if amount >= 1000:
        return f"${amount:,.0f}"
    if amount >= 1:
        return f"${amount:.2f}"
    return f"${amount:.3g}"
