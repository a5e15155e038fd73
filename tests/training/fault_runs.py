"""Short runs of the trainer harness for the fault-injection tests: the config they share, a
runner that collects the run's messages, and metrics without their timings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.training.loop import RunOutcome
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import make_config, read_metrics, without_timings

RUN = (
    "training.num_iterations=3",
    "training.save_every=1",
    "evaluation.num_problems=1",
    "training.eval_every=2",
    "logging.num_groups_to_log=1",
)


def stable(path: Path) -> list[dict[str, Any]]:
    """The metric records of a ``metrics.jsonl`` without their timings."""
    return without_timings(read_metrics(path))


def train(
    registry: Registry,
    run: Path,
    *,
    resume: bool = False,
    messages: list[str] | None = None,
    extra: tuple[str, ...] = (),
) -> RunOutcome:
    """Run (or resume) ``RUN`` plus ``extra`` overrides, collecting the run's messages in ``messages``."""
    progress = Progress("off")
    if messages is not None:
        progress.message = messages.append  # type: ignore[method-assign]
    return asyncio.run(
        run_training(
            make_config(*RUN, *extra),
            registry,
            RunDirectory(run),
            resume=resume,
            progress=progress,
            handle_signals=False,
        )
    )
