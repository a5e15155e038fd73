"""The trainer harness's fixtures (``registry``, ``uninterrupted``, ``straight_run``), shared by the
training and run-directory tests through their conftest.py (not the root's: the tinker and contract
environments have no torch, which the harness imports)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from debate_core.plugin import Registry
from tests.training.trainer_harness import harness_registry


@pytest.fixture
def registry() -> Iterator[Registry]:
    """The process registry with the scripted backend and the test plugins of the harness."""
    with harness_registry() as reg:
        yield reg


@pytest.fixture(scope="session")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of ``fault_runs.RUN``: what every damaged or killed run must resume to."""
    from tests.training.fault_runs import train

    run = tmp_path_factory.mktemp("uninterrupted") / "run"
    with harness_registry() as registry:
        train(registry, run)
    return run


@pytest.fixture(scope="session")
def straight_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted 4-iteration run with the default harness config."""
    from tests.training.trainer_harness import make_config, train_quietly

    run = tmp_path_factory.mktemp("straight") / "run"
    with harness_registry() as registry:
        assert train_quietly(make_config(), registry, run, handle_signals=False).iterations == 4
    return run
