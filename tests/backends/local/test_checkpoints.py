"""Checkpoint round trips: weights and AdamW state restore exactly (the next step is the same
as without the round trip), sampler checkpoints sample like the snapshot, files are
safetensors and JSON only, and a bad path fails with a message that says what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from tinker import types

from debate_core.backends.local.saved_states import SavedStateError
from debate_core.backends.local.service import LocalServiceClient
from debate_core.backends.local.training_client import LocalTrainingClient

from .conftest import checkpoint_files, datum, encode, sample_text_prompt

ADAM = types.AdamParams(learning_rate=1e-2, weight_decay=0.01)


def _train(client: LocalTrainingClient, steps: int) -> None:
    data = [datum(encode(client, "Agent 1 > Agent 0")), datum(encode(client, "<consensus>YES</consensus>"))]
    for _ in range(steps):
        client.forward_backward(data, "cross_entropy")
        client.optim_step(ADAM)


def _same_weights(a: LocalTrainingClient, b: LocalTrainingClient) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.module.parameters(), b.module.parameters(), strict=True))


def test_state_round_trip_resumes_exactly(service: LocalServiceClient, trainer: LocalTrainingClient) -> None:
    _train(trainer, 3)
    saved = trainer.save_state("round-trip").result()
    path = Path(saved.path)
    assert checkpoint_files(path) == {"state.json", "weights.safetensors", "optimizer.safetensors", "tokenizer.json"}
    resumed = service.create_training_client_from_state_with_optimizer(saved.path).result()
    assert _same_weights(trainer, resumed)
    assert resumed.optimizer_steps == 3
    _train(trainer, 2)
    _train(resumed, 2)
    trainer.save_state("sync").result()  # wait for the queued steps
    resumed.save_state("sync-resumed").result()
    assert _same_weights(trainer, resumed)
    # Without the optimizer state the next steps differ (Adam's moments restart).
    fresh = service.create_training_client_from_state(saved.path).result()
    _train(fresh, 2)
    fresh.save_state("sync-fresh").result()
    assert not _same_weights(trainer, fresh)


def test_checkpoint_files_are_safetensors_and_json(trainer: LocalTrainingClient) -> None:
    _train(trainer, 2)
    path = Path(trainer.save_state("formats").result().path)
    meta = json.loads((path / "state.json").read_text())
    assert meta["format"] == "debate-core-local/1" and meta["has_optimizer"] and meta["optimizer_steps"] == 2
    assert meta["base_model"] == "embedded:debate-micro" and meta["finetune"]["lora_rank"] == 0
    parameters = {name: p for name, p in trainer.module.named_parameters() if p.requires_grad}
    weights = load_file(str(path / "weights.safetensors"))
    assert set(weights) == set(meta["parameters"]) == set(parameters)
    assert all(torch.equal(weights[name], p.detach().cpu()) for name, p in parameters.items())
    moments = load_file(str(path / "optimizer.safetensors"))
    assert set(moments) == {f"{kind}/{name}" for kind in ("exp_avg", "exp_avg_sq", "step") for name in parameters}
    assert all(float(moments[f"step/{name}"]) == 2.0 for name in parameters)
    assert all(bool((moments[f"exp_avg_sq/{name}"] >= 0).all()) for name in parameters)
    assert json.loads((path / "tokenizer.json").read_text())["model"]["type"] == "BPE"


def test_load_state_with_optimizer_on_a_live_client(service: LocalServiceClient, trainer: LocalTrainingClient) -> None:
    _train(trainer, 2)
    saved = trainer.save_state("live").result()
    other = service.create_lora_training_client("embedded:debate-micro", rank=0, seed=3).result()
    other.load_state_with_optimizer(saved.path).result()
    assert _same_weights(trainer, other)
    _train(trainer, 1)
    _train(other, 1)
    trainer.save_state("live-a").result()
    other.save_state("live-b").result()
    assert _same_weights(trainer, other)


def test_sampler_weights_sample_like_the_snapshot(service: LocalServiceClient, trainer: LocalTrainingClient) -> None:
    _train(trainer, 2)
    snapshot = trainer.save_weights_and_get_sampling_client().result()
    saved = trainer.save_weights_for_sampler("for-sampling").result()
    assert "optimizer.safetensors" not in checkpoint_files(Path(saved.path))
    restored = service.create_sampling_client(model_path=saved.path).result()
    prompt = types.ModelInput.from_ints(sample_text_prompt(trainer))
    params = types.SamplingParams(max_tokens=10, temperature=1.0, seed=2, stop=[])
    assert restored.sample(prompt, 2, params).result().sequences[0].tokens == (
        snapshot.sample(prompt, 2, params).result().sequences[0].tokens
    )
    with pytest.raises(SavedStateError, match="holds weights only"):
        service.create_training_client_from_state_with_optimizer(saved.path).result()


def test_existing_checkpoints_are_not_overwritten_by_accident(trainer: LocalTrainingClient) -> None:
    first = trainer.save_state("kept").result()
    with pytest.raises(SavedStateError, match="already exists"):
        trainer.save_state("kept").result()
    assert trainer.save_state("kept", overwrite=True).result().path == first.path
    assert not [p for p in Path(first.path).parent.iterdir() if p.name.startswith(".kept")]


def test_bad_checkpoints_fail_with_a_clear_message(service: LocalServiceClient, tmp_path: Path) -> None:
    with pytest.raises(SavedStateError, match="not a local-backend checkpoint"):
        service.create_training_client_from_state(str(tmp_path)).result()
    (tmp_path / "state.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(SavedStateError, match="format"):
        service.create_training_client_from_state(str(tmp_path)).result()


def test_a_checkpoint_must_fit_the_model(service: LocalServiceClient, trainer: LocalTrainingClient) -> None:
    saved = trainer.save_state("micro").result()
    tiny = service.create_lora_training_client("embedded:debate-tiny", rank=0, seed=1).result()
    with pytest.raises(SavedStateError, match=r"does not fit this model.*embedded:debate-micro"):
        tiny.load_state(saved.path).result()
