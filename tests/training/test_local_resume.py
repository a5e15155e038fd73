"""With the local torch backend: a run of 4 iterations equals a run of 2 plus a resumed 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from debate_core.plugins import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.training.progress import Progress
from debate_core.training.run import run_training

pytest.importorskip("torch")
pytest.importorskip("transformers")

OVERRIDES = [
    "backend.name=local",
    "backend.options.num_threads=1",
    "backend.options.max_batch_rows=1",  # compared runs: no batch may depend on thread timing
    "training.max_debates_in_flight=1",
    "dataset.name=arithmetic",
    "reward.name=v2",
    "debate.num_agents=2",
    "debate.max_rounds=1",
    "debate.max_tokens=24",
    "training.batch_size=2",
    "training.num_iterations=4",
    "training.save_every=0",
    "evaluation.num_problems=0",
    "logging.progress=off",
    "warmstart.enabled=true",
    "warmstart.steps=1",
    "warmstart.batch_size=2",
    "run.seed=5",
]


def stable(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith(("time/", "throughput/"))} for r in records]


def test_local_backend_resume_is_exact(registry: Registry, tmp_path: Path) -> None:
    from debate_core.config import load_run_config

    def train(directory: Path, *extra: str, resume: bool = False, signals: bool = False) -> Any:
        config = load_run_config(None, [*OVERRIDES, *extra], registry=registry)
        return asyncio.run(
            run_training(
                config,
                registry,
                RunDirectory(directory),
                resume=resume,
                progress=Progress("off"),
                handle_signals=signals,
            )
        )

    straight = train(tmp_path / "straight")
    assert (straight.warmstart_steps, straight.iterations) == (1, 4)
    # stopped by SIGTERM after the record of step 3 (warm-start + 2 iterations), then resumed
    stopped = train(
        tmp_path / "resumed", "logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=3}}]", signals=True
    )
    assert stopped.stopped_by == "SIGTERM" and stopped.iterations == 2
    train(tmp_path / "resumed", resume=True)
    assert stable(tmp_path / "resumed" / "metrics.jsonl") == stable(tmp_path / "straight" / "metrics.jsonl")
