"""Opening a backend session, resolving checkpoints, and retrying transient errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from debate_core.runtime.checkpoint_format import Checkpoint, DataPosition
from debate_core.runtime.manifests import resolve_state_path, write_checkpoint
from debate_core.runtime.retries import BackendError, RetryPolicy, is_transient, with_retries
from debate_core.runtime.session import open_session
from tests.training.trainer_harness import SERVICES, harness_registry, make_config


def test_sampling_only_and_training_sessions(tmp_path: Path) -> None:
    with harness_registry() as registry:
        config = make_config()
        sampling = open_session(config, registry, training=False)
        assert sampling.training_client is None
        with pytest.raises(BackendError, match="sampling only"):
            sampling.require_training_client()
        training = open_session(config, registry, state_directory=tmp_path / "states")
        path = asyncio.run(training.save_state("first"))
        assert Path(path).parent == tmp_path / "states"
        before = training.sampling_client()
        assert asyncio.run(training.refresh_sampling_client()) is not before
        # a trainer manifest and a run directory resolve to the backend state they record
        checkpoint = Checkpoint(step=3, warmstart_steps=0, iteration=3, backend_state=path, data=DataPosition(), seed=0)
        write_checkpoint(tmp_path / "run" / "checkpoints", checkpoint)
        assert resolve_state_path(str(tmp_path / "run")) == path
        assert resolve_state_path(str(tmp_path / "run" / "checkpoints" / "step_000003.json")) == path
        assert resolve_state_path("tinker://run/weights/x") == "tinker://run/weights/x"
        restored = open_session(config, registry, training=False, state_path=str(tmp_path / "run"))
        assert any(label.startswith("create_training_client_from_state") for _, label in SERVICES[-1].log)
        assert restored.tokenizer is not None


def test_retries_back_off_then_give_up_naming_the_backend() -> None:
    calls: list[int] = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("reset")
        return "ok"

    policy = RetryPolicy(max_attempts=3, initial_delay_s=0.0)
    assert asyncio.run(with_retries("sample", flaky, policy, "remote")) == "ok" and len(calls) == 3

    async def down() -> str:
        raise TimeoutError("slow")

    with pytest.raises(BackendError, match=r"backend 'remote': sample failed after 3 attempts: TimeoutError"):
        asyncio.run(with_retries("sample", down, policy, "remote"))

    async def wrong() -> str:
        raise ValueError("bad datum")

    with pytest.raises(BackendError, match=r"forward_backward failed: ValueError"):  # not retried
        asyncio.run(with_retries("forward_backward", wrong, policy, "remote"))
    assert RetryPolicy(initial_delay_s=1.0, backoff_factor=2.0, max_delay_s=5.0).delay(4) == 5.0
    assert is_transient(ConnectionError()) and not is_transient(KeyError())
