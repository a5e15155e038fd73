"""Metric sinks: where the trainer writes one record of metrics per step.

A metric-sink plugin's ``build(options)`` returns a factory ``(run_dir: Path) -> MetricSink``.
The JSON-lines sink is built in; Weights & Biases and TensorBoard sinks are built when
their packages are installed (``builtin.metric_sinks``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

MetricValue = float | int | str


@runtime_checkable
class MetricSink(Protocol):
    """Receives one record per step; ``step`` increases by one each time (warm-start, then RL)."""

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None: ...

    def close(self) -> None: ...


def _json_safe(value: MetricValue) -> MetricValue | None:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class JsonlSink:
    """Appends ``{"step": step, ...metrics}`` as one line, flushed and fsynced, so a crash loses
    at most the line being written (resuming drops a torn line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = path.open("a", encoding="utf-8")

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None:
        record = {"step": step, **{k: _json_safe(v) for k, v in metrics.items()}}
        self._handle.write(json.dumps(record, sort_keys=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


class MultiSink:
    """Writes every record to several sinks."""

    def __init__(self, sinks: list[MetricSink]) -> None:
        self.sinks = sinks

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None:
        for sink in self.sinks:
            sink.write(step, metrics)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()
