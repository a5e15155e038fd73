"""The run's metric sinks, opened from ``[logging] sinks`` and written to together."""

from __future__ import annotations

from collections.abc import Mapping

from debate_core.records.metrics import MetricSink, MetricValue


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
