"""A roofline for the local sampler: the machine's limits, one decode step's bytes and FLOPs at the
main job's shapes, where a step's time goes, and the sampler's fraction of the tighter bound.

    python benchmarks/sampler_roofline.py                      # debate-tiny, batch 48, ~600-token contexts
    python benchmarks/sampler_roofline.py --batch 48 --context 600 --threads 1

Measured in one run, side by side:

* **the machine**: memory bandwidth (``dst.copy_(src)`` of 256 MB: bytes read + written per
  second) and the matrix-product peak (a 1024² float32 and bfloat16 ``mm``) on ``--threads``;
* **one decode step's work** at ``--batch`` rows whose contexts are ``--context`` tokens (the main
  job's: 3 agents x 16 debates, ~600-token round-2 prompts): the bytes it must read (the weights
  once, every row's keys and values) and the FLOPs it must do (the matrix products of every row,
  and attention over every cached position);
* **the step as the sampler runs it** (``FastDecoder.step`` plus ``choose_tokens``, the engine's
  token draw), and split by ``torch.profiler`` into attention (``scaled_dot_product_attention``
  and the cache writes), matrix products (``linear``), sampling (``choose_tokens``) and the
  rest (norms, rotary, Python);
* **the fractions**: the time the tighter bound allows (bytes at the measured bandwidth, or
  FLOPs at the measured peak, whichever is longer) over the measured step time. The issue's
  target is >= 50% at batch 48 (docs/local-backend.md#the-samplers-roofline).

Absolute figures vary with the machine and with other load; the fractions are measured in one
run against limits measured in the same run. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any


def best_of(repeats: int, run: Callable[[], object]) -> float:
    """The fastest of ``repeats`` timed calls after one warm-up (the least disturbed by other load)."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def machine_limits(repeats: int) -> dict[str, float]:
    """Bandwidth (bytes/s of a large copy, read plus write) and matmul peaks (FLOP/s)."""
    import torch

    src = torch.ones(64 << 20)  # 256 MB of float32
    dst = torch.empty_like(src)
    copy_s = best_of(repeats, lambda: dst.copy_(src))
    limits = {"bandwidth": 2 * src.numel() * 4 / copy_s}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        a = torch.randn(1024, 1024).to(dtype)
        b = torch.randn(1024, 1024).to(dtype)
        limits[f"matmul_{name}"] = 2 * 1024**3 / best_of(repeats, lambda a=a, b=b: torch.mm(a, b))
    return limits


def step_work(weights: Any, batch: int, context: int) -> dict[str, float]:
    """Bytes one decode step must read and FLOPs it must do (the lower bounds of its time)."""
    layers = weights.layers
    matrix = sum(t.numel() for layer in layers for t in (layer.qkv, layer.out, layer.gate_up, layer.down))
    head = weights.lm_head.numel()
    element = weights.embed.element_size()
    kv = 2 * len(layers) * weights.num_kv_heads * weights.head_dim * context * batch * element
    attention_flops = 4 * len(layers) * weights.num_heads * weights.head_dim * context * batch
    return {
        "weight_bytes": float((matrix + head) * element),
        "kv_bytes": float(kv),
        "bytes": float((matrix + head) * element + kv),
        "flops": float(2 * (matrix + head) * batch + attention_flops),
    }


def decode_state(decoder: Any, batch: int, context: int, capacity: int) -> tuple[Any, Any, Any]:
    """A batch of ``batch`` rows whose caches hold ``context`` positions (random keys and values:
    the step's cost does not depend on them), the last tokens and the active mask."""
    import torch

    from debate_core.backends.local.sampling.fast_decoder import KVBatch

    state = KVBatch.allocate(decoder.weights, batch, capacity)
    for k, v in zip(state.keys, state.values, strict=True):
        k[:, :, :context].normal_()
        v[:, :, :context].normal_()
    state.lengths.fill_(context)
    tokens = torch.randint(0, decoder.vocab_size, (batch,))
    return state, tokens, torch.ones(batch, dtype=torch.bool)


PROFILE_PARTS = {
    "attention": {
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        "aten::_scaled_dot_product_attention_math",
        "aten::index_put_",
        "aten::_index_put_impl_",
        "aten::bmm",
        "aten::baddbmm",
        "aten::_softmax",
    },
    "matmul": {"aten::addmm", "aten::mm"},
    "sampling": {"aten::searchsorted", "aten::cumsum", "aten::exp", "aten::_log_softmax", "aten::gather"},
}
"""The profiler's operators counted in each part of a step (the others are ``other``)."""


def profile_step(run: Callable[[], object]) -> dict[str, float]:
    """Seconds per step by part, from ``torch.profiler``'s CPU self times over 20 steps."""
    from torch.profiler import ProfilerActivity, profile

    parts = {"attention": 0.0, "matmul": 0.0, "sampling": 0.0, "other": 0.0}
    steps = 20
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            run()
    for event in prof.key_averages():
        name, self_s = event.key, event.self_cpu_time_total / 1e6
        part = next((part for part, ops in PROFILE_PARTS.items() if name in ops), None)
        if part is not None:
            parts[part] += self_s
        elif name.startswith("aten::"):
            parts["other"] += self_s
    return {k: v / steps for k, v in parts.items()}


def attention_variants(weights: Any, batch: int, context: int, repeats: int) -> dict[str, float]:
    """Seconds of one layer's decoding attention at these shapes, as the sampler runs it (torch's
    ``scaled_dot_product_attention`` with the additive mask) and as two batched products (the
    variants tried, kept here so that a change of machine or torch can be judged again). Each
    call runs every layer's attention over its own cache, as a step does, so that the caches do
    not fit in the CPU's last-level cache; the figure is per layer."""
    import torch
    import torch.nn.functional as F

    heads, kv_heads, dim = weights.num_heads, weights.num_kv_heads, weights.head_dim
    group, capacity, layers = heads // kv_heads, context + 448, len(weights.layers)
    caches = [
        (
            torch.randn(batch, kv_heads, capacity, dim)[:, :, :context],
            torch.randn(batch, kv_heads, capacity, dim)[:, :, :context],
        )
        for _ in range(layers)
    ]
    q = torch.randn(batch, kv_heads, group, dim)
    mask = torch.zeros(batch, 1, group, context)

    def sdpa() -> object:
        return [F.scaled_dot_product_attention(q, k, v, attn_mask=mask) for k, v in caches]

    def products() -> object:
        return [
            torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-1, -2)).mul_(dim**-0.5).add_(mask), dim=-1), v)
            for k, v in caches
        ]

    def einsum() -> object:
        return [
            torch.einsum(
                "bhgs,bhsd->bhgd",
                torch.softmax(torch.einsum("bhgd,bhsd->bhgs", q, k).mul_(dim**-0.5).add_(mask), -1),
                v,
            )
            for k, v in caches
        ]

    variants = {
        "scaled_dot_product_attention (the sampler's)": sdpa,
        "two batched matmuls": products,
        "two einsums": einsum,
    }
    return {name: best_of(repeats, run) / layers for name, run in variants.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="embedded:debate-tiny-subtraction3")
    parser.add_argument("--batch", type=int, default=48)
    parser.add_argument("--context", type=int, default=600)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    import torch

    from debate_core.backends.local.models.decoder_weights import extract_weights
    from debate_core.backends.local.models.loading import load_base
    from debate_core.backends.local.sampling.engine import choose_tokens
    from debate_core.backends.local.sampling.fast_decoder import FastDecoder
    from debate_core.backends.local.threads import ThreadPlan

    torch.set_num_threads(args.threads)
    print(f"load average before: {os.getloadavg()[0]:.2f}; torch {torch.__version__}, {args.threads} thread(s)")
    limits = machine_limits(args.repeats)
    print(
        f"machine: bandwidth {limits['bandwidth'] / 1e9:.1f} GB/s (copy), matmul fp32 "
        f"{limits['matmul_fp32'] / 1e9:.0f} GFLOP/s, bf16 {limits['matmul_bf16'] / 1e9:.0f} GFLOP/s (1024²)"
    )
    module, _, _ = load_base(args.model, device=torch.device("cpu"), dtype=torch.float32, init_seed=0)
    decoder = FastDecoder(extract_weights(module), threads=ThreadPlan(max_threads=args.threads))
    work = step_work(decoder.weights, args.batch, args.context)
    capacity = args.context + 448
    state, tokens, active = decode_state(decoder, args.batch, args.context, capacity)
    rows = [_row() for _ in range(args.batch)]

    def model_step() -> torch.Tensor:
        state.lengths.fill_(args.context)  # every step at the same context length
        return decoder.step(state, tokens, active)

    logits = model_step()
    model_s = best_of(args.repeats, model_step)
    sampling_s = best_of(args.repeats, lambda: choose_tokens(logits, rows))
    step_s = model_s + sampling_s
    parts = profile_step(lambda: choose_tokens(model_step(), rows))
    bytes_s, flops_s = work["bytes"] / limits["bandwidth"], work["flops"] / limits["matmul_fp32"]
    bound = max(bytes_s, flops_s)
    print(
        f"\none decode step, {args.model}, batch {args.batch}, {args.context}-token contexts: reads "
        f"{work['bytes'] / 1e6:.1f} MB ({work['kv_bytes'] / 1e6:.1f} MB of keys and values, "
        f"{work['weight_bytes'] / 1e6:.1f} MB of weights), {work['flops'] / 1e6:.0f} MFLOP"
    )
    print(f"  bound by bytes: {bytes_s * 1e3:.2f} ms at the measured bandwidth")
    print(f"  bound by FLOPs: {flops_s * 1e3:.2f} ms at the fp32 matmul peak")
    print(
        f"  measured: {step_s * 1e3:.2f} ms a step (model {model_s * 1e3:.2f} ms, token draw "
        f"{sampling_s * 1e3:.2f} ms) = {args.batch / step_s:.0f} tokens/s"
    )
    print(f"  achieved: {work['bytes'] / step_s / 1e9:.1f} GB/s, {work['flops'] / step_s / 1e9:.1f} GFLOP/s")
    profiled = sum(parts.values())
    print("  where a step's time goes (torch.profiler, self CPU time):")
    for name, seconds in parts.items():
        print(f"    {name:<10} {seconds * 1e3:6.2f} ms  {seconds / profiled:5.0%}")
    layer_bytes = 2 * args.batch * decoder.weights.num_kv_heads * decoder.weights.head_dim * args.context * 4
    print(
        f"  one layer's attention ({layer_bytes / 1e6:.1f} MB of keys and values: "
        f"{layer_bytes / limits['bandwidth'] * 1e3:.2f} ms at the bandwidth), variants side by side:"
    )
    for name, seconds in attention_variants(decoder.weights, args.batch, args.context, args.repeats).items():
        print(f"    {name:<46} {seconds * 1e3:6.2f} ms")
    fraction = bound / step_s
    verdict = "PASS" if fraction >= 0.5 else "MISS"
    print(f"\nfraction of the tighter bound: {fraction:.0%} (target >= 50%): {verdict}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def _row() -> Any:
    """An engine row at the main job's sampling settings (temperature 1, no top-k or top-p)."""
    import random

    from debate_core.backends.local.sampling.engine import _Row
    from debate_core.backends.local.sampling.stops import StopMatcher, StopSpec

    return _Row(
        request=None,  # type: ignore[arg-type]
        index=0,
        generator=random.Random(0),
        matcher=StopMatcher(StopSpec.from_param(None, None), None, lambda t: ""),
        stop_ids=frozenset(),
        max_tokens=448,
        temperature=1.0,
        top_k=-1,
        top_p=1.0,
    )


if __name__ == "__main__":
    main()
