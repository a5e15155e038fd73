"""Fixtures of this distribution's tests: a scripted endpoint, a served checkpoint of
``embedded:debate-micro`` (``debate serve``), and hypothesis profiles (``HYPOTHESIS_PROFILE=ci`` in tox)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from stub_endpoint import StubEndpoint, stub_endpoint

settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

TINY_RUN = [
    "backend.name=local",
    "backend.options.num_threads=1",
    "backend.options.max_batch_rows=1",
    "model.base_model=embedded:debate-micro",
    "dataset.name=arithmetic",
    "debate.num_agents=2",
    "debate.max_rounds=1",
    "debate.max_tokens=8",
    "training.batch_size=2",
    "training.num_iterations=1",
    "evaluation.num_problems=0",
    "logging.progress=off",
]
"""A run whose checkpoint is made in seconds, for ``debate serve``."""


@pytest.fixture
def stub() -> Iterator[StubEndpoint]:
    with stub_endpoint() as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``debate serve`` of a tiny run's checkpoint, on a free port of this machine; its policy's
    model name is ``tiny``."""
    pytest.importorskip("torch", reason="debate serve of a local checkpoint needs debate-core[local]")
    from debate_core.cli import main
    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry
    from debate_core.serve import serving

    directory = tmp_path_factory.mktemp("served")
    (directory / "run.toml").write_text("", encoding="utf-8")
    run = directory / "run"
    assert main(["train", str(directory / "run.toml"), *TINY_RUN, "--run-dir", str(run)]) == 0
    registry = get_registry()
    config = load_run_config(run / "config.toml", registry=registry)
    with serving(config, registry, str(run), "tiny") as server:
        yield server
