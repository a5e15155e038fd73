"""Watched backend waits (docs/training.md, "A backend that is down"): a wait is announced once
it lasts, a call past ``training.backend_timeout_s`` ends in ``BackendTimeout`` and is cancelled,
and a hanging training update stops the run without asking the dead backend for a checkpoint."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

import debate_core.runtime.retries as retries
from debate_core.runtime.manifests import latest_checkpoint
from debate_core.runtime.retries import BackendTimeout, RetryPolicy, watched, with_retries
from tests.doubles.scripted_backend import ScriptedTrainingClient
from tests.training.fault_runs import train
from tests.training.trainer_harness import harness_registry

T = TypeVar("T")


def test_a_call_past_its_time_is_cancelled_and_named(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(retries, "NOTICE_AFTER_S", 0.1)
    cancelled = []

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    started = time.monotonic()
    with caplog.at_level(logging.WARNING), pytest.raises(BackendTimeout) as raised:
        # 3 s: the notice after 0.1 s comes first even when a loaded machine wakes the loop late
        asyncio.run(watched("sample", forever(), 3.0, "tinker"))
    assert time.monotonic() - started < 60  # gave up (3 s), not waited the hour
    assert "backend 'tinker': sample: no answer after" in str(raised.value)
    assert "training.backend_timeout_s = 3" in str(raised.value)
    assert cancelled == [True]
    assert any("waiting for backend 'tinker': sample" in r.getMessage() for r in caplog.records)


def test_a_call_that_answers_in_time_is_passed_through() -> None:
    async def quick() -> int:
        await asyncio.sleep(0.01)
        return 7

    assert asyncio.run(watched("sample", quick(), 5.0, "tinker")) == 7
    assert asyncio.run(watched("sample", quick(), None, "tinker")) == 7


def test_retries_count_inside_the_time_limit() -> None:
    attempts = []

    async def refused() -> None:
        attempts.append(time.monotonic())
        raise ConnectionError("refused")

    # retries 0.01 s apart for 1 s: about 100 attempts, at least 2 unless a loaded machine holds the
    # loop up for the whole second; the limit ends them long before the 1000 attempts (10 s) allowed
    policy = RetryPolicy(max_attempts=1000, initial_delay_s=0.01, backoff_factor=1.0, timeout_s=1.0)
    with pytest.raises(BackendTimeout):
        asyncio.run(with_retries("create_sampling_client", refused, policy, "tinker"))
    assert 2 <= len(attempts) < 1000


def hang_after(monkeypatch: pytest.MonkeyPatch, owner: type, method: str, answered: int) -> None:
    """``owner.method`` answers its first ``answered`` calls, then never again (a service gone silent)."""
    real = getattr(owner, method)
    calls = [0]

    def patched(self: object, *args: object, **kwargs: object) -> object:
        calls[0] += 1
        if calls[0] > answered:
            return asyncio.sleep(3600)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(owner, method, patched)


def test_a_hanging_update_stops_the_run_without_a_checkpoint_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hang_after(monkeypatch, ScriptedTrainingClient, "forward_backward", 1)  # the second update never answers
    monkeypatch.setattr(retries, "NOTICE_AFTER_S", 0.2)
    messages: list[str] = []
    run = tmp_path / "run"
    with harness_registry() as registry, pytest.raises(BackendTimeout, match="the update of step 2"):
        train(registry, run, messages=messages, extra=("training.backend_timeout_s=1",))
    assert "debate: step 2 failed before it was recorded; last checkpoint: step 1" in messages
    checkpoint = latest_checkpoint(run / "checkpoints")
    assert checkpoint is not None and checkpoint.step == 1


def test_a_hanging_sampler_stops_the_run_without_asking_the_backend_for_a_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.doubles.scripted_backend import ScriptedSamplingClient

    hang_after(monkeypatch, ScriptedSamplingClient, "sample", 40)  # silent after the first iteration's debates
    saves: list[str] = []
    for method in ("save_state", "save_weights_for_sampler"):
        monkeypatch.setattr(ScriptedTrainingClient, method, recording(getattr(ScriptedTrainingClient, method), saves))
    messages: list[str] = []
    run = tmp_path / "run"
    with harness_registry() as registry, pytest.raises(BackendTimeout, match="no answer after"):
        train(registry, run, messages=messages, extra=("training.backend_timeout_s=1", "training.save_every=0"))
    assert saves == []  # no checkpoint asked for (save_every = 0, and none when the backend is silent)
    assert any("the backend does not answer: no checkpoint attempted" in m for m in messages), messages


def recording(method: Callable[..., T], names: list[str]) -> Callable[..., T]:
    """``method``, appending the name it is called with to ``names``."""

    def recorded(self: object, name: str, *args: object, **kwargs: object) -> T:
        names.append(name)
        return method(self, name, *args, **kwargs)

    return recorded


def test_a_backend_that_runs_in_process_is_not_given_up_on() -> None:
    """The local backend's calls are this machine's own work (a large update on a CPU may take
    long): no give-up time applies to them."""
    from debate_core.backends.contract import RunsInProcess
    from debate_core.backends.local.service import LocalServiceClient

    assert isinstance(LocalServiceClient, type) and LocalServiceClient.runs_in_process is True
    assert isinstance(LocalServiceClient.__new__(LocalServiceClient), RunsInProcess)

    async def slow() -> str:
        await asyncio.sleep(0.3)
        return "done"

    unwatched = RetryPolicy(timeout_s=None, watched=False)
    assert asyncio.run(with_retries("the update", slow, unwatched, "local")) == "done"
    with pytest.raises(BackendTimeout):
        asyncio.run(with_retries("the update", slow, RetryPolicy(timeout_s=0.1), "tinker"))
