"""The run's metric sinks, opened from ``[logging] sinks`` and written to together."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from debate_core.components import ComponentBuilder, build_choice
from debate_core.config.sections import LoggingSettings
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


def open_sinks(logging: LoggingSettings, registry: ComponentBuilder, run_dir: Path) -> MultiSink:
    """Build every metric sink of ``[logging] sinks`` for this run directory."""
    sinks: list[MetricSink] = []
    for index, choice in enumerate(logging.sinks):
        factory = build_choice(registry, "metric_sink", choice, f"logging.sinks[{index}]")
        sinks.append(factory(run_dir))
    return MultiSink(sinks)
