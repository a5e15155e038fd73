"""The short run of the mid-run fault tests and its unfaulted reference (metrics and weights)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main
from debate_core.runtime.manifests import read_checkpoint
from tests.tinker_wire.fake_service import FakeTinkerService

SHORT = [
    "warmstart.enabled=false",
    "training.num_iterations=3",
    "training.save_every=1",
    "training.batch_size=2",
    "debate.max_rounds=1",
    "evaluation.num_problems=0",
]
LIMIT_S = 4
"""``training.backend_timeout_s`` of the runs whose fault does not clear."""
LIMIT_MARGIN_S = 10
"""How much longer than ``LIMIT_S`` a give-up may say it waited on a loaded machine."""


BACKOFF_SCALE = 0.05
"""How much of the SDK's own waits between retries the tests of faults that clear keep."""


class _ShortRetryWaits:
    """``asyncio`` as the SDK's ``internal_client_holder`` module sees it, except that the waits of
    its whole-request retry loop (``execute_with_retries``: 1 s, 2 s, 4 s, ...) are shortened; every
    other wait of that module (its heartbeats, its polls) is left as it is."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    def sleep(delay: float, result: Any = None) -> Awaitable[Any]:
        if sys._getframe(1).f_code.co_name == "execute_with_retries":
            delay *= BACKOFF_SCALE
        return asyncio.sleep(delay, result)


def shorten_sdk_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's two retry layers wait a twentieth of their backoff: the retries, not their waits,
    are under test (the HTTP client's 0.5 s, 1 s, ... and the request loop's 1 s, 2 s, ...; a
    ``Retry-After`` the service sends is still honoured)."""
    import tinker._base_client
    import tinker.lib.internal_client_holder

    monkeypatch.setattr(tinker._base_client, "INITIAL_RETRY_DELAY", 0.5 * BACKOFF_SCALE)
    monkeypatch.setattr(tinker.lib.internal_client_holder, "asyncio", _ShortRetryWaits())


def without_retries(metrics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in record.items() if k != "backend/retries"} for record in metrics]


def final_weights(service: FakeTinkerService, run: Path) -> Any:
    """The weights of the run's last checkpoint (step 3), read on the service."""
    checkpoint = read_checkpoint(run / "checkpoints" / "step_000003.json")
    assert checkpoint.sampler_weights is not None
    return service.weights_at(checkpoint.sampler_weights)


def reference_run(service: FakeTinkerService, model_dir: Path, root: Path) -> tuple[list[dict[str, Any]], Any]:
    """The unfaulted short run's metrics and final weights (the fake computes deterministically,
    so one run serves every test of the session)."""
    from tests.tinker_wire.test_wire_contract import (
        run_file,
        stable_metrics,
    )  # it imports the conftest, which imports this

    cached = _REFERENCE.get("run")
    if cached is None:
        run = root / "run"
        assert main(["train", str(run_file(root, model_dir)), *SHORT, "--run-dir", str(run)]) == 0
        cached = (stable_metrics(run), final_weights(service, run))
        assert "backend/retries" not in str(cached[0])
        _REFERENCE["run"] = cached
        service.reset()
    return cached


_REFERENCE: dict[str, tuple[list[dict[str, Any]], Any]] = {}
