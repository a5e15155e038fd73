"""Built-in metric sinks: ``jsonl`` (always), ``wandb`` and ``tensorboard`` (when installed): extra
destinations of the records the run directory writes to ``metrics.jsonl`` itself.

Each ``build`` returns a factory ``(run_dir) -> MetricSink``; the optional packages are
imported inside the factory, so listing plugins never imports them. Each continues its own
record of the run when the run resumes (``resume``; docs/training.md#metric-sinks-on-resume).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import secrets
import string
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from debate_core.errors import PluginError
from debate_core.files import StepRecords, atomic_write_json
from debate_core.plugin import MetricSinkSpec, hookimpl
from debate_core.records import MetricSink, MetricValue

SinkFactory = Callable[[Path], MetricSink]


class JsonlSink(StepRecords):
    """Appends ``{"step": step, ...metrics}`` as one line to ``path`` (``files.StepRecords``:
    unbuffered and fsynced, non-finite numbers as ``null``): a copy of the run's records in a file
    of its own. The run directory writes ``metrics.jsonl`` itself whatever the sinks; this sink
    with that file name (its default) adds nothing (``training.sinks``)."""


@attrs.frozen(kw_only=True)
class JsonlSinkOptions:
    """Options of the ``jsonl`` sink."""

    filename: str = "metrics.jsonl"
    """File name inside the run directory; ``metrics.jsonl``, the run directory's own record, adds
    no second copy."""


def build_jsonl(options: JsonlSinkOptions) -> SinkFactory:
    return lambda run_dir: JsonlSink(run_dir / options.filename)


def _require(module: str, sink: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise PluginError(f"metric sink '{sink}' needs the {install} package; install it with `pip install {install}`")


@attrs.frozen(kw_only=True)
class WandbOptions:
    """Options of the ``wandb`` sink (Weights & Biases)."""

    project: str = "debate"
    entity: str | None = None
    mode: str = attrs.field(default="online", validator=attrs.validators.in_(("online", "offline", "disabled")))
    """``online``, ``offline`` (sync later with ``wandb sync``) or ``disabled``."""
    name: str | None = None
    """Run name; the run directory's name when unset."""


WANDB_RUN_FILE = "wandb-run.json"
"""Where a run directory keeps the id of its wandb run, so that a resume continues that run."""


class WandbSink:
    """Logs each record with ``wandb.log(metrics, step=step)``; strings go to the run summary."""

    def __init__(self, run: Any, run_id: str, options: WandbOptions) -> None:  # Any: a wandb Run (untyped)
        self._run = run
        self._id = run_id
        self._options = options

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None:
        numbers = {k: v for k, v in metrics.items() if not isinstance(v, str)}
        self._run.log(numbers, step=step)

    def resume(self, step: int) -> str:
        where = f"{self._options.entity}/{self._options.project}" if self._options.entity else self._options.project
        offline = " (offline: `wandb sync` joins its files to the run)" if self._options.mode == "offline" else ""
        return (
            f"continues wandb run {self._id} in project {where}{offline} from step {step + 1} "
            "(resume='allow'; wandb keeps the first value of a step it was already sent)"
        )

    def close(self) -> None:
        self._run.finish()


def wandb_run_id(run_dir: Path) -> tuple[str, bool]:
    """The wandb run id of ``run_dir`` and whether it is new: the one the directory keeps, else the
    directory's name for a run started before ids were kept (its ``wandb/`` folder shows it logged
    there), else a fresh random id (so two run directories of one name never share a wandb run)."""
    try:
        kept = json.loads((run_dir / WANDB_RUN_FILE).read_text(encoding="utf-8")).get("id")
    except (OSError, ValueError, AttributeError):
        kept = None
    if isinstance(kept, str) and kept:
        return kept, False
    if (run_dir / "wandb").is_dir():
        return run_dir.name, True
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(8)), True


def build_wandb(options: WandbOptions) -> SinkFactory:
    _require("wandb", "wandb", "wandb")

    def open_sink(run_dir: Path) -> MetricSink:
        wandb = importlib.import_module("wandb")
        run_id, new = wandb_run_id(run_dir)
        if new:
            atomic_write_json(run_dir / WANDB_RUN_FILE, {"id": run_id, "project": options.project})
        run = wandb.init(
            project=options.project,
            entity=options.entity,
            mode=options.mode,
            name=options.name or run_dir.name,
            dir=str(run_dir),
            resume="allow",
            id=run_id,
        )
        return WandbSink(run, run_id, options)

    return open_sink


@attrs.frozen(kw_only=True)
class TensorboardOptions:
    """Options of the ``tensorboard`` sink."""

    subdirectory: str = "tensorboard"
    """Event files go to ``RUN_DIR/<subdirectory>``."""


class _ScalarWriter(Protocol):
    """The part of a TensorBoard ``SummaryWriter`` the sink uses."""

    def add_scalar(self, tag: str, scalar_value: float, global_step: int) -> object: ...

    def flush(self) -> object: ...

    def close(self) -> object: ...


class TensorboardSink:
    """Writes numeric metrics as scalars with a ``SummaryWriter`` on ``log_dir``, opened at the
    first write; on a resume with ``purge_step``, so that TensorBoard hides the events of the
    redone steps that an earlier process wrote."""

    def __init__(self, open_writer: Callable[..., _ScalarWriter], log_dir: Path) -> None:
        self._open_writer = open_writer
        self._log_dir = log_dir
        self._purge_step: int | None = None
        self._writer: _ScalarWriter | None = None

    def write(self, step: int, metrics: Mapping[str, MetricValue]) -> None:
        if self._writer is None:
            self._writer = self._open_writer(log_dir=str(self._log_dir), purge_step=self._purge_step)
        for name, value in metrics.items():
            if not isinstance(value, str):
                self._writer.add_scalar(name, float(value), step)
        self._writer.flush()

    def resume(self, step: int) -> str:
        self._purge_step = step + 1
        return f"continues the event files in {self._log_dir}; events of step {step + 1} on are replaced (purge_step)"

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def build_tensorboard(options: TensorboardOptions) -> SinkFactory:
    _require("tensorboard", "tensorboard", "tensorboard")

    def open_sink(run_dir: Path) -> MetricSink:
        if importlib.util.find_spec("torch") is not None:
            module = importlib.import_module("torch.utils.tensorboard")
        else:
            _require("tensorboardX", "tensorboard", "tensorboardX")
            module = importlib.import_module("tensorboardX")
        return TensorboardSink(module.SummaryWriter, run_dir / options.subdirectory)

    return open_sink


@hookimpl
def debate_metric_sinks() -> list[MetricSinkSpec]:
    return [
        MetricSinkSpec(
            name="jsonl",
            description="one JSON object per step in RUN_DIR/<filename> (a copy of RUN_DIR/metrics.jsonl)",
            build=build_jsonl,
            options=JsonlSinkOptions,
        ),
        MetricSinkSpec(
            name="wandb",
            description="Weights & Biases (needs `pip install wandb`)",
            build=build_wandb,
            options=WandbOptions,
        ),
        MetricSinkSpec(
            name="tensorboard",
            description="TensorBoard event files (needs `pip install tensorboard`)",
            build=build_tensorboard,
            options=TensorboardOptions,
        ),
    ]
