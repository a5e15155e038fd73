"""The metric-sink interface: where the trainer writes one record of metrics per step.

A metric-sink plugin's ``build(options)`` returns a factory ``(run_dir: Path) -> MetricSink``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

MetricValue = float | int | str
"""One metric: a number, or a string (the phase of a step)."""


@runtime_checkable
class MetricSink(Protocol):
    """Receives one record per step; ``step`` increases by one each time (warm-start, then RL)."""

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None: ...

    def close(self) -> None: ...
