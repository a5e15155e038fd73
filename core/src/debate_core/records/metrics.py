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
    """Receives one record per step; ``step`` increases by one each time (warm-start, then RL).

    A sink may also define ``resume(step: int) -> str``: called once, before any write, when
    ``debate train --resume`` continues the run from the checkpoint of ``step`` (the next write is
    ``step + 1``; steps after it that an earlier process wrote are written again). It returns what
    the sink continues, for the resume's message (``continues wandb run 3fk2x9ab``);
    docs/training.md#metric-sinks-on-resume says what each built-in sink does.
    """

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None: ...

    def close(self) -> None: ...
