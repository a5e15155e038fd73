"""``debate export`` (docs/training.md#exporting-a-policy): a local checkpoint becomes a Hugging Face
directory that ``AutoModelForCausalLM.from_pretrained`` loads, with the backend's logits."""

from __future__ import annotations

import stat
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from debate_core.backends.local.service import LocalServiceClient
from debate_core.cli import main
from debate_core.runtime.manifests import read_checkpoint
from tests.backends.local.one_iteration import ONE_ITERATION

PROMPT = "User: Question: What is 17 + 25?\n\nAssistant:"


def backend_logits(state: str, tokens: list[int]) -> torch.Tensor:
    """The logits the local backend's model gives ``tokens``, from the checkpoint as it opens it."""
    service = LocalServiceClient(num_threads=1)
    try:
        client = service.create_training_client_from_state(state).result()
        with torch.no_grad():
            return client.module(input_ids=torch.tensor([tokens])).logits[0]
    finally:
        service.close()


def exported_logits(directory: Path, tokens: list[int]) -> torch.Tensor:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(directory)
    with torch.no_grad():
        return model(input_ids=torch.tensor([tokens])).logits[0]


@pytest.mark.parametrize("rank", [4, 0])
def test_an_exported_checkpoint_loads_in_transformers_with_the_backends_logits(
    rank: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from transformers import AutoTokenizer

    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    assert main(["train", str(run_file), *ONE_ITERATION, f"model.lora_rank={rank}", "--run-dir", str(run)]) == 0
    state = read_checkpoint(run / "checkpoints" / "step_000001.json").backend_state
    exported = tmp_path / "hf"
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["export", str(run), "--to", str(exported)]) == 0
    out, err = capsys.readouterr()
    assert ("LoRA merged into" if rank else "fine-tuned from") in out and "embedded:debate-tiny" in out
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in exported.iterdir()}
    # issue 44: transformers' shard progress bar and peft's tied-weights warning were relayed (the
    # latter as `debate: warning:`), and the weights came out 0600 beside 0644 files
    relayed = [*(str(w.message) for w in caught), err]
    assert not any("tie_word_embeddings" in text or "Writing model shards" in text for text in relayed), relayed
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in exported.iterdir()}
    assert modes["model.safetensors"] == modes["config.json"], modes

    tokenizer: Any = AutoTokenizer.from_pretrained(exported)
    tokens = tokenizer.encode(PROMPT, add_special_tokens=False)
    service = LocalServiceClient(num_threads=1)
    try:
        backend_tokenizer = service.create_training_client_from_state(state).result().get_tokenizer()
    finally:
        service.close()
    assert tokens == backend_tokenizer.encode(PROMPT, add_special_tokens=False)
    chat = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Question: What is 17 + 25?"}], tokenize=False, add_generation_prompt=True
    )
    assert chat.endswith(PROMPT)  # the role_colon renderer's format

    expected = backend_logits(state, tokens)
    got = exported_logits(exported, tokens)
    assert got.shape == expected.shape
    if rank:  # B·A folded into the base weight rounds differently from adding it after
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    else:
        assert torch.equal(got, expected)
    base = backend_logits_of_base(tokens)
    assert not torch.allclose(got, base, atol=1e-3)  # the trained weights, not the base model's


def backend_logits_of_base(tokens: list[int]) -> torch.Tensor:
    from debate_core.backends.local.models.loading import load_base

    module, _, _ = load_base(
        "embedded:debate-tiny", device=torch.device("cpu"), dtype=torch.float32, init_seed=0, base_weights="auto"
    )
    with torch.no_grad():
        return module(input_ids=torch.tensor([tokens])).logits[0]


def test_a_tinker_checkpoint_gets_the_services_download_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = "tinker://run-7/sampler_weights/step_000010_sampler"
    assert main(["export", path, "--to", str(tmp_path / "hf")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"tinker checkpoint download {path} -o {tmp_path / 'hf'}" in err[0]
    assert not (tmp_path / "hf").exists()


def test_an_export_never_overwrites_a_directory_that_holds_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "hf"
    target.mkdir()
    (target / "mine.txt").write_text("keep", encoding="utf-8")
    state = tmp_path / "state"
    service = LocalServiceClient(num_threads=1, state_directory=str(tmp_path))
    try:
        client = service.create_lora_training_client("embedded:debate-micro", rank=0, seed=1).result()
        client.save_state(str(state)).result()
    finally:
        service.close()
    assert main(["export", str(state), "--to", str(target)]) == 1
    assert "already exists and is not an empty directory" in capsys.readouterr().err
    assert [p.name for p in target.iterdir()] == ["mine.txt"]


def test_a_gguf_loaded_model_exports_with_its_chat_template_and_the_backends_logits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A LoRA checkpoint on a model read from a GGUF file (made here: a tiny Llama)."""
    pytest.importorskip("gguf")
    import numpy as np
    from tinker import types

    from tests.backends.local.models.tiny_gguf import CHAT_TEMPLATE, write_tiny_gguf

    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    state = tmp_path / "state"
    service = LocalServiceClient(num_threads=1)
    try:
        client = service.create_lora_training_client(f"gguf:{model}", rank=4, seed=3).result()
        tokens = list(client.get_tokenizer().encode(PROMPT, add_special_tokens=False))
        datum = types.Datum(
            model_input=types.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": tokens[1:], "weights": np.ones(len(tokens) - 1, dtype=np.float32)},
        )
        for _ in range(2):  # the adapter's B starts at zero: two steps move both factors
            client.forward_backward([datum], "cross_entropy").result()
            client.optim_step(types.AdamParams(learning_rate=0.05)).result()
        client.save_state(str(state)).result()
    finally:
        service.close()
    exported = tmp_path / "hf"
    assert main(["export", str(state), "--to", str(exported)]) == 0
    assert "LoRA merged into gguf:" in capsys.readouterr().out

    from transformers import AutoTokenizer

    tokenizer: Any = AutoTokenizer.from_pretrained(exported)
    assert tokenizer.chat_template == CHAT_TEMPLATE
    assert tokenizer.encode(PROMPT, add_special_tokens=False) == tokens
    expected = backend_logits(str(state), tokens)
    torch.testing.assert_close(exported_logits(exported, tokens), expected, rtol=1e-5, atol=1e-5)
    base = exported_logits_of_gguf(model, tokens)
    assert not torch.allclose(expected, base, atol=1e-4)  # the adapter changed what the model computes


def exported_logits_of_gguf(model: Path, tokens: list[int]) -> torch.Tensor:
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(model.parent, gguf_file=model.name)
    with torch.no_grad():
        return base(input_ids=torch.tensor([tokens])).logits[0]


def test_a_lora_runs_adapter_loads_with_peft_onto_its_base_with_the_backends_logits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--adapter`` writes PEFT's files and key names; ``--base`` the base model the run read; PEFT
    puts one on the other and computes the backend's logits (docs/training.md#lora-adapters)."""
    import json

    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from debate_core.backends.local.models.loading import FinetuneMode, lora_targets

    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    assert main(["train", str(run_file), *ONE_ITERATION, "model.lora_rank=4", "--run-dir", str(run)]) == 0
    state = read_checkpoint(run / "checkpoints" / "step_000001.json").backend_state
    capsys.readouterr()
    assert main(["export", str(run), "--adapter", "--to", str(tmp_path / "adapter")]) == 0
    out = capsys.readouterr().out
    assert "a PEFT LoRA adapter (rank 4" in out and "--base --to BASE" in out
    assert main(["export", str(run), "--base", "--to", str(tmp_path / "base")]) == 0
    assert "the base model embedded:debate-tiny" in capsys.readouterr().out

    adapter = tmp_path / "adapter"
    assert {p.name for p in adapter.iterdir()} >= {"adapter_config.json", "adapter_model.safetensors"}
    config = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    base = AutoModelForCausalLM.from_pretrained(tmp_path / "base")
    expected_targets = lora_targets(base, FinetuneMode(lora_rank=4))
    assert (config["peft_type"], config["r"], config["base_model_name_or_path"]) == ("LORA", 4, "embedded:debate-tiny")
    assert all(t.endswith(tuple(config["target_modules"])) for t in expected_targets) and "lm_head" in expected_targets
    keys = set(load_file(adapter / "adapter_model.safetensors"))
    assert keys == {f"base_model.model.{t}.lora_{ab}.weight" for t in expected_targets for ab in "AB"}

    tokens = [3, 17, 25, 9, 41, 5, 60, 2]
    model = PeftModel.from_pretrained(base, adapter).eval()
    adapted = {name for name, layer in model.get_base_model().named_modules() if hasattr(layer, "lora_A")}
    assert adapted == set(expected_targets)  # PEFT's target names pick exactly the layers the run trained
    with torch.no_grad():
        got = model(input_ids=torch.tensor([tokens])).logits[0]
        untrained = model.get_base_model()
        with model.disable_adapter():
            plain = untrained(input_ids=torch.tensor([tokens])).logits[0]
    expected = backend_logits(state, tokens)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(plain, backend_logits_of_base(tokens), rtol=1e-5, atol=1e-5)  # the run's own base
    assert not torch.allclose(got, plain, atol=1e-3)  # the adapter is the trained one, not a zero


def test_a_full_fine_tune_has_no_adapter_to_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    service = LocalServiceClient(num_threads=1, state_directory=str(tmp_path))
    try:
        client = service.create_lora_training_client("embedded:debate-micro", rank=0, seed=1).result()
        client.save_state(str(state)).result()
    finally:
        service.close()
    for flag in ("--adapter", "--base"):
        assert main(["export", str(state), flag, "--to", str(tmp_path / "out")]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{flag}: this checkpoint is a full fine-tune" in err[0], err
        assert not (tmp_path / "out").exists()
