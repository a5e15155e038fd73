"""Small statistics shared by rewards, metrics and evaluation."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "mean",
]


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean, 0.0 for no values (no entries give no signal)."""
    items = [float(x) for x in values]
    return sum(items) / len(items) if items else 0.0
