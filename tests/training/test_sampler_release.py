"""An RL iteration's sampler is freed when the next iteration starts, not whenever Python's
collector runs (docs/local-backend.md#memory): a real model's sampler holds a copy of the weights
and a prefix cache, and runs that kept them grew by gigabytes."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.training import loop
from debate_core.training.progress import Progress
from debate_core.training.run import run_training

pytest.importorskip("torch")
pytest.importorskip("transformers")

OVERRIDES = [
    "backend.name=local",
    "backend.options.num_threads=1",
    "dataset.name=arithmetic",
    "reward.name=v2",
    "debate.num_agents=2",
    "debate.max_rounds=2",
    "debate.max_tokens=16",
    "training.batch_size=2",
    "training.num_iterations=5",
    "training.save_every=0",
    "evaluation.num_problems=0",
    "logging.progress=off",
    "training.kl_penalty_coef=0.3",
]


def live_snapshots() -> int:
    from debate_core.backends.local.sampling.engine import SamplerSnapshot

    return sum(1 for o in gc.get_objects() if type(o) is SamplerSnapshot)


@pytest.fixture
def no_automatic_collection() -> Iterator[None]:
    """Python's own collections off, so that only the loop's frees anything held in cycles."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.usefixtures("no_automatic_collection")
def test_each_iteration_starts_with_the_earlier_samplers_freed(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from debate_core.config import load_run_config

    before = live_snapshots()  # what earlier tests in this process still hold
    seen: list[int] = []
    real_iteration = loop.rl_iteration

    async def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(live_snapshots() - before)
        return await real_iteration(*args, **kwargs)

    monkeypatch.setattr(loop, "rl_iteration", counting)
    config = load_run_config(None, OVERRIDES, registry=registry)
    asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    assert len(seen) == 5
    # the current weights' sampler, and at most one the session or a worker thread still holds
    assert max(seen) <= 2, seen
