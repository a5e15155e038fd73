"""The embedded models' packaged base weights: loaded by default, checked against the tokenizer,
and reproducible from the pre-training module."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from debate_core.backends.local.models import loading as models
from debate_core.backends.local.models import pretrained as packaged
from debate_core.backends.local.models.loading import load_base
from debate_core.backends.local.models.tokenizer import build_embedded_tokenizer
from debate_core.errors import ConfigError
from debate_core.tools import pretrain_embedded as pretrain

CPU = torch.device("cpu")


def _weights(base_weights: str, name: str = "embedded:debate-tiny") -> dict[str, torch.Tensor]:
    module, _, _ = load_base(name, device=CPU, dtype=torch.float32, init_seed=0, base_weights=base_weights)
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def test_debate_tiny_ships_pretrained_weights_that_replace_the_random_init() -> None:
    assert packaged.pretrained_file("debate-tiny").is_file()
    pretrained, random_init = _weights("auto"), _weights("random")
    assert pretrained.keys() == random_init.keys()
    assert not torch.equal(pretrained["model.embed_tokens.weight"], random_init["model.embed_tokens.weight"])
    assert torch.equal(pretrained["lm_head.weight"], pretrained["model.embed_tokens.weight"])
    assert all(torch.equal(a, b) for a, b in zip(_weights("pretrained").values(), pretrained.values(), strict=True))


def test_models_without_packaged_weights_start_random_or_refuse_when_insisted_on() -> None:
    assert not packaged.pretrained_file("debate-micro").is_file()
    auto = _weights("auto", "embedded:debate-micro")
    random_init = _weights("random", "embedded:debate-micro")
    assert all(torch.equal(auto[k], random_init[k]) for k in auto)
    with pytest.raises(ConfigError, match=r"ships no pretrained weights for embedded:debate-micro"):
        _weights("pretrained", "embedded:debate-micro")


def test_weights_made_with_another_tokenizer_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors.torch import load_file, save_file

    source = packaged.pretrained_file("debate-tiny")
    forged = tmp_path / "debate-tiny.safetensors"
    save_file(load_file(str(source)), str(forged), metadata={"tokenizer_sha256_16": "0" * 16})
    monkeypatch.setattr(packaged, "pretrained_file", lambda name: forged)
    with pytest.raises(ConfigError, match=r"made with another tokenizer"):
        _weights("auto")


def test_pretraining_batches_are_seeded_and_exactly_as_long_as_asked() -> None:
    tokenizer, _ = build_embedded_tokenizer(models.embedded_spec("embedded:debate-tiny").vocab_size)
    data = pretrain.PretrainingData(tokenizer, seed=3)
    batch = data.batch(4, 96)
    assert batch.shape == (4, 96)
    assert torch.equal(batch, pretrain.PretrainingData(tokenizer, seed=3).batch(4, 96))


def test_pretraining_records_its_recipe_and_tokenizer() -> None:
    weights, metadata = pretrain.pretrain("debate-micro", steps=12, batch_size=4, length=48, log_every=0)
    _, tokenizer_json = build_embedded_tokenizer(models.embedded_spec("embedded:debate-micro").vocab_size)
    assert metadata["tokenizer_sha256_16"] == packaged.tokenizer_hash(tokenizer_json)
    assert metadata["steps"] == "12" and "model.embed_tokens.weight" in weights
