"""Fixtures for the local backend's tests: one service client per session, and a fresh
``embedded:debate-micro`` training client (about 50k parameters) per test."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import numpy as np
import torch
from tinker import types

from debate_core.backends.local.service import LocalServiceClient
from debate_core.backends.local.training_client import LocalTrainingClient

MICRO = "embedded:debate-micro"


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServiceClient]:
    client = LocalServiceClient(state_directory=str(tmp_path_factory.mktemp("states")), prefix_cache_mb=64)
    yield client
    client.close()


@pytest.fixture
def trainer(service: LocalServiceClient) -> Iterator[LocalTrainingClient]:
    client = service.create_lora_training_client(MICRO, rank=0, seed=7).result()
    yield client
    client.close()


def encode(client: Any, text: str) -> list[int]:
    return list(client.get_tokenizer().encode(text, add_special_tokens=False))


def datum(tokens: Sequence[int], **inputs: Sequence[float]) -> types.Datum:
    """Next-token form of ``tokens``: input ``tokens[:-1]``, targets ``tokens[1:]``, plus per-target inputs."""
    return types.Datum(
        model_input=types.ModelInput.from_ints(list(tokens[:-1])),
        loss_fn_inputs={
            "target_tokens": list(tokens[1:]),
            **{k: np.asarray(v, dtype=np.float32) for k, v in inputs.items()},
        },
    )


def gradients(client: LocalTrainingClient) -> dict[str, torch.Tensor]:
    """The accumulated gradients (cloned), then cleared, so the next call starts from zero."""
    grads = {}
    for name, parameter in client.module.named_parameters():
        if parameter.grad is not None:
            grads[name] = parameter.grad.detach().clone()
            parameter.grad = None
    return grads


def assert_same_gradients(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], rtol: float = 1e-4) -> None:
    assert a.keys() == b.keys()
    for name in a:
        scale = max(float(a[name].abs().max()), float(b[name].abs().max()), 1e-12)
        assert torch.allclose(a[name], b[name], rtol=rtol, atol=rtol * scale), name


def sample_text_prompt(client: Any) -> list[int]:
    return encode(client, "User: Question: What is 17 + 25?\nAssistant:")


def checkpoint_files(path: Path) -> set[str]:
    return {p.name for p in path.iterdir()}
