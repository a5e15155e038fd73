"""A checkpoint to serve: one RL iteration of ``embedded:debate-micro`` (a few seconds of training),
and the server of it on a thread of this process (docs/training.md#serving-a-policy)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from debate_core.serve import PolicyServer

TINY_RUN = [
    "backend.name=local",
    "backend.options.num_threads=1",
    "backend.options.max_batch_rows=1",  # one sequence per model call: a debate gives the same tokens every time
    "model.base_model=embedded:debate-micro",
    "dataset.name=arithmetic",
    "debate.num_agents=2",
    "debate.max_rounds=2",
    "debate.max_tokens=16",
    "training.batch_size=2",
    "training.num_iterations=1",
    "evaluation.num_problems=0",
    "logging.progress=off",
]
"""A run whose checkpoint is made in seconds; its config.toml is what ``debate serve`` reads."""


def train_tiny_run(directory: Path) -> Path:
    """Train :data:`TINY_RUN` into ``directory/run`` and return the run directory."""
    pytest.importorskip("torch", reason="the local backend needs torch (debate-core[local])")
    from debate_core.cli import main

    run_file = directory / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = directory / "run"
    assert main(["train", str(run_file), *TINY_RUN, "--run-dir", str(run)]) == 0
    return run


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_run(tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="session")
def server(tiny_run: Path) -> Iterator[PolicyServer]:
    """``debate serve`` of the tiny run, as the command would start it, on a free port."""
    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry
    from debate_core.serve import serving

    registry = get_registry()
    config = load_run_config(tiny_run / "config.toml", registry=registry)
    with serving(config, registry, str(tiny_run), "tiny") as running:
        yield running
