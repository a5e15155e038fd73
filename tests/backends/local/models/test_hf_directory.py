"""Hugging Face model directories (tiny random models written to a temporary directory, never
downloaded): LoRA on the chosen layers, the fast decoder for Llama-family models and the
generic one for others, both agreeing with the model's own forward pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tinker import types

from debate_core.backends.local.models.tokenizer import build_embedded_tokenizer
from debate_core.backends.local.sampling.fast_decoder import FastDecoder
from debate_core.backends.local.sampling.generic_decoder import GenericDecoder
from debate_core.backends.local.service import LocalServiceClient
from debate_core.errors import ConfigError
from tests.backends.local.conftest import datum, encode


def _save(model: torch.nn.Module, directory: Path) -> str:
    tokenizer, _ = build_embedded_tokenizer(1024)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


@pytest.fixture(scope="module")
def qwen3_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer, _ = build_embedded_tokenizer(1024)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=512,
        tie_word_embeddings=False,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    return _save(Qwen3ForCausalLM(config), tmp_path_factory.mktemp("qwen3"))


@pytest.fixture(scope="module")
def qwen2_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer, _ = build_embedded_tokenizer(1024)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=False,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    with torch.no_grad():  # biases start at zero: make them large, so a misplaced one shows
        for module in model.modules():
            if isinstance(module, torch.nn.Linear) and module.bias is not None:
                module.bias.normal_(0.0, 0.5)
    return _save(model, tmp_path_factory.mktemp("qwen2"))


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer, _ = build_embedded_tokenizer(1024)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=256)
    torch.manual_seed(0)
    return _save(GPT2LMHeadModel(config), tmp_path_factory.mktemp("gpt2"))


def _train_a_little(client: object, steps: int = 3) -> None:
    data = [datum(encode(client, "<solution>\\boxed{42}</solution>"))]
    for _ in range(steps):
        client.forward_backward(data, "cross_entropy")  # type: ignore[attr-defined]
        client.optim_step(types.AdamParams(learning_rate=5e-2))  # type: ignore[attr-defined]


def _check_sampler_agrees_with_training(client: object) -> None:
    sampler = client.save_weights_and_get_sampling_client().result()  # type: ignore[attr-defined]
    tokens = encode(client, "User: What is 2 + 2?\nAssistant: <solution>4</solution>")
    from_sampler = sampler.compute_logprobs(types.ModelInput.from_ints(tokens)).result()
    from_training = client.forward([datum(tokens)], "cross_entropy").result()  # type: ignore[attr-defined]
    np.testing.assert_allclose(from_sampler[1:], from_training.loss_fn_outputs[0]["logprobs"].tolist(), atol=1e-4)
    response = sampler.sample(
        types.ModelInput.from_ints(tokens[:8]), 2, types.SamplingParams(max_tokens=6, seed=1, stop=[])
    ).result()
    assert [len(s.tokens) for s in response.sequences] == [6, 6]


def test_lora_on_attention_only(service: LocalServiceClient, qwen3_dir: str) -> None:
    client = service.create_lora_training_client(
        qwen3_dir, rank=4, seed=0, train_mlp=False, train_unembed=False
    ).result()
    trainable = [name for name, p in client.module.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name and "self_attn" in name for name in trainable)
    info = client.get_info()
    assert info.is_lora and info.lora_rank == 4
    _train_a_little(client)
    _check_sampler_agrees_with_training(client)
    snapshot = client.save_weights_and_get_sampling_client().result()
    assert isinstance(snapshot.snapshot.decoder, FastDecoder)


def test_lora_on_mlp_and_unembedding_round_trips(service: LocalServiceClient, qwen3_dir: str) -> None:
    client = service.create_lora_training_client(qwen3_dir, rank=2, seed=0, train_attn=False).result()
    names = [name for name, p in client.module.named_parameters() if p.requires_grad]
    assert any("lm_head" in n for n in names) and any(".mlp." in n for n in names)
    assert not any("self_attn" in n for n in names)
    _train_a_little(client)
    _check_sampler_agrees_with_training(client)
    saved = client.save_state("qwen3-lora").result()
    resumed = service.create_training_client_from_state_with_optimizer(saved.path).result()
    for a, b in zip(client.module.parameters(), resumed.module.parameters(), strict=True):
        assert torch.equal(a, b)


def test_full_finetuning_of_a_directory_model(service: LocalServiceClient, qwen3_dir: str) -> None:
    client = service.create_lora_training_client(qwen3_dir, rank=0, seed=0).result()
    assert all(p.requires_grad for p in client.module.parameters())
    _train_a_little(client)
    _check_sampler_agrees_with_training(client)


def test_attention_biases_reach_the_fast_decoder(service: LocalServiceClient, qwen2_dir: str) -> None:
    client = service.create_lora_training_client(qwen2_dir, rank=2, seed=0, train_mlp=False).result()
    assert any(p.bias is not None for p in client.module.modules() if isinstance(p, torch.nn.Linear))
    _train_a_little(client)
    _check_sampler_agrees_with_training(client)
    snapshot = client.save_weights_and_get_sampling_client().result()
    assert isinstance(snapshot.snapshot.decoder, FastDecoder)


def test_other_architectures_use_the_generic_decoder(service: LocalServiceClient, gpt2_dir: str) -> None:
    from transformers import AutoModelForCausalLM

    client = service.create_lora_training_client(gpt2_dir, rank=4, seed=0).result()
    _train_a_little(client)
    _check_sampler_agrees_with_training(client)
    sampler = client.save_weights_and_get_sampling_client().result()
    assert isinstance(sampler.snapshot.decoder, GenericDecoder)
    base = service.create_sampling_client(base_model=gpt2_dir).result()
    prompt = encode(client, "User: What is 2 + 2?")
    ours = base.sample(
        types.ModelInput.from_ints(prompt), 1, types.SamplingParams(max_tokens=8, temperature=0.0, stop=[])
    )
    model = AutoModelForCausalLM.from_pretrained(gpt2_dir).eval()
    with torch.no_grad():
        reference = model.generate(torch.tensor([prompt]), max_new_tokens=8, do_sample=False, pad_token_id=0)
    assert ours.result().sequences[0].tokens == reference[0, len(prompt) :].tolist()


def test_a_missing_model_is_a_clear_error(service: LocalServiceClient, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="never downloads"):
        service.create_lora_training_client("Qwen/Qwen3-0.6B", rank=0).result()
    with pytest.raises(ConfigError, match=r"no embedded model 'nope'.*embedded:debate-tiny"):
        service.create_lora_training_client("embedded:nope", rank=0).result()
