"""Where the run's metrics records go: the run directory's own ``metrics.jsonl`` always, and the
metric sinks of ``[logging] sinks`` as extra destinations, written to together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from debate_core.config.sections import LoggingSettings
from debate_core.errors import ComponentFailure, DebateError, OutputWriteError
from debate_core.files import write_failure
from debate_core.plugin import ComponentBuilder, PluginCall, build_choice, call_plugin
from debate_core.records.metrics import MetricSink, MetricValue
from debate_core.rundir.directory import RunDirectory
from debate_core.rundir.metrics_file import MetricsRecord


class MultiSink:
    """Writes every record to the run directory's ``record`` first (when given), then to the
    metric sinks. An ``OSError`` a sink lets out (a full disk under a plugin's own files) becomes
    ``OutputWriteError`` naming the sink, so the run stops with one line as for any output it
    cannot write (the record raises ``OutputWriteError`` itself)."""

    def __init__(self, sinks: list[MetricSink], names: Sequence[str] = (), record: MetricsRecord | None = None) -> None:
        self.sinks = sinks
        self.names = list(names) or [f"logging.sinks[{index}]" for index in range(len(sinks))]
        self.record = record

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None:
        if self.record is not None:
            self.record.write(step, metrics)
        for sink, name in zip(self.sinks, self.names, strict=True):
            try:
                call_plugin(
                    PluginCall("metric sink", name, "write", f"step {step}"), partial(sink.write, step, metrics)
                )
            except ComponentFailure as exc:
                if isinstance(exc.__cause__, OSError):
                    raise self._failure(name, exc.__cause__) from exc.__cause__
                raise

    def resume(self, step: int) -> list[str]:
        """Tell every sink that the run resumes from the checkpoint of ``step``; one line per sink
        saying what it continues (a sink without ``resume`` starts afresh: it says so)."""
        lines = [] if self.record is None else [f"metrics: {self.record.resume(step)}"]
        for sink, name in zip(self.sinks, self.names, strict=True):
            resume = getattr(sink, "resume", None)
            if not callable(resume):
                lines.append(f"metric sink {name}: has no notion of resuming; it writes on from step {step + 1}")
                continue
            said = call_plugin(PluginCall("metric sink", name, "resume", f"step {step}"), partial(resume, step))
            lines.append(f"metric sink {name}: {said}")
        return lines

    def close(self) -> None:
        """Close the record and every sink, even after one fails; then raise the first failure."""
        first: DebateError | None = None
        if self.record is not None:
            self.record.close()
        for sink, name in zip(self.sinks, self.names, strict=True):
            try:
                sink.close()
            except (OutputWriteError, ComponentFailure) as exc:
                first = first or exc
            except OSError as exc:
                first = first or self._failure(name, exc)
            except Exception as exc:  # a sink's own bug, named as every plugin's is
                first = first or PluginCall("metric sink", name, "close", "").failure(
                    f"raised {type(exc).__name__}: {exc}"
                )
        if first is not None:
            raise first

    @staticmethod
    def _failure(name: str, error: OSError) -> OutputWriteError:
        where = Path(error.filename) if isinstance(error.filename, str) else Path(f"metric sink '{name}'")
        return write_failure(where, error)


def open_sinks(logging: LoggingSettings, registry: ComponentBuilder, run_dir: RunDirectory) -> MultiSink:
    """The run directory's ``metrics.jsonl``, and every metric sink of ``[logging] sinks`` built for
    this run directory. A sink that writes that same file (the built-in ``jsonl`` with its default
    file name: it has a ``path``) is closed and left out: the record is written once."""
    sinks: list[MetricSink] = []
    names: list[str] = []
    own = run_dir.metrics_path.absolute()
    for index, choice in enumerate(logging.sinks):
        factory = build_choice(registry, "metric_sink", choice, f"logging.sinks[{index}]")
        call = PluginCall("metric sink", choice.name, "build", f"run directory {run_dir.root}")
        sink = call_plugin(call, partial(factory, run_dir.root))
        if not all(callable(getattr(sink, method, None)) for method in ("write", "close")):
            raise call.returned(sink, ["not a metric sink (no write and close methods)"])
        path = getattr(sink, "path", None)
        if isinstance(path, Path) and path.absolute() == own:
            sink.close()
            continue
        sinks.append(sink)
        names.append(choice.name)
    return MultiSink(sinks, names, record=run_dir.open_metrics())
