"""Mixed precision in the local backend (docs/local-backend.md#precision): what ``dtype = "auto"``
chooses and says, float32 master weights, optimizer state and checkpoints under bfloat16 compute,
the sampler and the trainer agreeing within the documented bound, and a bfloat16 resume that is
identical to the uninterrupted run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from tinker import types

from debate_core.backends.local import torch_settings
from debate_core.backends.local.service import LocalServiceClient
from debate_core.backends.local.torch_settings import AUTO_LOW_PRECISION_MIN_HIDDEN, resolve_precision
from debate_core.backends.local.training_client import LocalTrainingClient
from debate_core.errors import ConfigError

from .conftest import datum, encode, sample_text_prompt

TINY = "embedded:debate-tiny"
CPU = torch.device("cpu")
SAMPLER_TRAINER_BOUND = 0.02
"""The documented bound on the mean absolute difference, per sampled token, between the logprobs
the bfloat16 sampler reports and those the bfloat16 trainer computes for the same tokens
(docs/local-backend.md#precision; float32 agrees to about 1e-5)."""


@pytest.fixture(scope="module")
def bf16_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServiceClient]:
    client = LocalServiceClient(dtype="bfloat16", state_directory=str(tmp_path_factory.mktemp("bf16")))
    yield client
    client.close()


@pytest.mark.parametrize(
    ("units", "device", "hidden", "expected"),
    [
        ("AMX-BF16", "cpu", 576, torch.bfloat16),
        ("AVX512-BF16", "cpu", AUTO_LOW_PRECISION_MIN_HIDDEN, torch.bfloat16),
        ("AVX512-BF16", "cpu", AUTO_LOW_PRECISION_MIN_HIDDEN - 1, torch.float32),
        ("AVX512-BF16", "cpu", 128, torch.float32),
        (None, "cpu", 576, torch.float32),
        ("AMX-BF16", "cuda", 576, torch.float32),
    ],
)
def test_auto_chooses_bfloat16_only_on_bfloat16_units_for_a_wide_enough_model(
    monkeypatch: pytest.MonkeyPatch, units: str | None, device: str, hidden: int, expected: torch.dtype
) -> None:
    monkeypatch.setattr(torch_settings, "bfloat16_units", lambda: units)
    precision = resolve_precision("auto", torch.device(device), hidden)
    assert precision.compute == expected
    assert precision.reason.startswith("auto: ")
    if expected == torch.bfloat16:
        assert units is not None and units in precision.reason
    assert precision.describe().startswith(precision.name + " (")


def test_a_named_dtype_is_taken_as_it_is_and_a_bad_one_names_the_option() -> None:
    assert resolve_precision("float32", CPU, 4096).compute == torch.float32
    assert resolve_precision("bfloat16", CPU, 16).compute == torch.bfloat16
    with pytest.raises(ConfigError, match=r"backend\.options\.dtype: 'bf16' is not one of auto, float32"):
        resolve_precision("bf16", CPU, 16)


def test_the_run_environment_says_which_precision_each_model_computes_in(bf16_service: LocalServiceClient) -> None:
    client = bf16_service.create_lora_training_client("embedded:debate-micro", rank=0, seed=1).result()
    client.close()
    assert bf16_service.environment()["precision"] == "bfloat16 (backend.options.dtype)"


def _lora_client(service: LocalServiceClient) -> LocalTrainingClient:
    return service.create_lora_training_client(TINY, rank=4, seed=5).result()


def _train(client: LocalTrainingClient, steps: int) -> None:
    data = [datum(encode(client, "Agent 1 > Agent 0 <consensus>YES</consensus>"))]
    for _ in range(steps):
        client.forward_backward(data, "cross_entropy")
        client.optim_step(types.AdamParams(learning_rate=1e-2))


def test_bfloat16_trains_float32_master_weights_over_frozen_bfloat16_ones(bf16_service: LocalServiceClient) -> None:
    client = _lora_client(bf16_service)
    try:
        trainable = {p.dtype for p in client.module.parameters() if p.requires_grad}
        frozen = {p.dtype for p in client.module.parameters() if not p.requires_grad}
        assert trainable == {torch.float32} and frozen == {torch.bfloat16}
        before = {n: p.detach().clone() for n, p in client.module.named_parameters() if p.requires_grad}
        _train(client, 2)
        path = Path(client.save_state("bf16-master").result().path)
        after = dict(client.module.named_parameters())
        # A learning-rate-sized step survives in float32 (it would round away in bfloat16 weights).
        assert any(not torch.equal(before[n], after[n]) for n in before)
        for name in ("weights.safetensors", "optimizer.safetensors"):
            assert {t.dtype for t in load_file(path / name).values()} <= {torch.float32, torch.float64}, name
    finally:
        client.close()


@pytest.mark.parametrize("rank", [0, 4])
def test_the_bfloat16_sampler_and_trainer_agree_within_the_documented_bound(
    bf16_service: LocalServiceClient, service: LocalServiceClient, rank: int
) -> None:
    differences = {}
    for name, host in (("bfloat16", bf16_service), ("float32", service)):
        client = host.create_lora_training_client(TINY, rank=rank, seed=3).result()
        try:
            _train(client, 1)
            prompt = sample_text_prompt(client)
            sampler = client.save_weights_and_get_sampling_client().result()
            params = types.SamplingParams(max_tokens=40, temperature=1.0, seed=11, stop=[])
            sequence = sampler.sample(types.ModelInput.from_ints(prompt), 1, params).result().sequences[0]
            tokens = prompt + list(sequence.tokens)
            weights = np.ones(len(tokens) - 1, dtype=np.float32)
            output = client.forward([datum(tokens, weights=weights)], "cross_entropy").result()
            trained = np.asarray(output.loss_fn_outputs[0]["logprobs"].tolist())[len(prompt) - 1 :]
            differences[name] = float(np.abs(trained - np.asarray(sequence.logprobs)).mean())
        finally:
            client.close()
    assert differences["float32"] < 1e-4
    assert differences["bfloat16"] < SAMPLER_TRAINER_BOUND
    # The sampler really computes in bfloat16: its logprobs are not float32's.
    assert differences["bfloat16"] > 10 * differences["float32"]


def test_a_bfloat16_resume_continues_exactly_like_the_uninterrupted_client(
    bf16_service: LocalServiceClient,
) -> None:
    client = _lora_client(bf16_service)
    try:
        _train(client, 3)
        saved = client.save_state("bf16-resume").result()
        resumed = bf16_service.create_training_client_from_state_with_optimizer(saved.path).result()
        _train(client, 2)
        _train(resumed, 2)
        client.save_state("bf16-resume-a").result()
        resumed.save_state("bf16-resume-b").result()
        pairs = zip(client.module.parameters(), resumed.module.parameters(), strict=True)
        assert all(a.dtype == b.dtype and torch.equal(a, b) for a, b in pairs)
        prompt = sample_text_prompt(client)
        params = types.SamplingParams(max_tokens=24, temperature=1.0, seed=5, stop=[])
        samples = [
            c.save_weights_and_get_sampling_client()
            .result()
            .sample(types.ModelInput.from_ints(prompt), 2, params)
            .result()
            for c in (client, resumed)
        ]
        assert [s.tokens for s in samples[0].sequences] == [s.tokens for s in samples[1].sequences]
        resumed.close()
    finally:
        client.close()
