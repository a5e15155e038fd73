"""A real (scripted-backend) run directory for the report tests, made once per session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from debate_core.rundir.directory import RunDirectory
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import harness_registry, make_config


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run: 3 RL iterations with evaluations at the start, every iteration and the end."""
    root = tmp_path_factory.mktemp("report") / "run"
    with harness_registry() as registry:
        config = make_config(
            "training.num_iterations=3",
            "training.eval_every=1",
            "training.save_every=1",
            "evaluation.at_start=true",
            "logging.num_groups_to_log=2",
        )
        asyncio.run(run_training(config, registry, RunDirectory(root), progress=Progress("off"), handle_signals=False))
    return root


@pytest.fixture(scope="session")
def resumed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 2 iterations (reward win_rate), resumed to 4 iterations with another reward (flat):
    two segments, each ending with a 'final' evaluation."""
    root = tmp_path_factory.mktemp("resumed") / "run"
    common = ("training.eval_every=1", "training.save_every=1", "evaluation.at_start=true")
    with harness_registry() as registry:
        for resume, overrides in (
            (False, ("training.num_iterations=2",)),
            (True, ("training.num_iterations=4", "reward=flat")),
        ):
            config = make_config(*overrides, *common)
            asyncio.run(
                run_training(
                    config, registry, RunDirectory(root), resume=resume, progress=Progress("off"), handle_signals=False
                )
            )
    return root


@pytest.fixture(scope="session")
def peer_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The finished run's twin with another reward (flat): the same problems, evaluated alike."""
    root = tmp_path_factory.mktemp("peer") / "peer"
    with harness_registry() as registry:
        config = make_config(
            "training.num_iterations=3",
            "training.eval_every=1",
            "training.save_every=1",
            "evaluation.at_start=true",
            "logging.num_groups_to_log=2",
            "reward=flat",
        )
        asyncio.run(run_training(config, registry, RunDirectory(root), progress=Progress("off"), handle_signals=False))
    return root
