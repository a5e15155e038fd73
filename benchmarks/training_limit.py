"""The ``train`` part of ``benchmarks/local_backend.py``: the local backend's updates against what
torch can do with the same model on the same tokens.

For each model and batch, the backend's ``forward_backward`` + ``optim_step`` (its
``LocalTrainingClient``) is timed against

* **the bare loop** (the practical limit): one functional forward of the same weights over the
  batch padded to its longest datum (cut into micro-batches of at most the backend's
  ``train_tokens_per_batch`` padded tokens), fused q/k/v and gate/up matrices, fused causal
  attention (``scaled_dot_product_attention``, grouped-query heads without copies), logits only
  at the positions the loss reads, the same summed loss, global-norm clipping and ``AdamW``;
* **transformers**: the model's own forward (``transformers``, or peft's wrapper for LoRA) on
  the same padded micro-batches with an attention mask, log-softmax over every position, the
  same loss, clipping and ``AdamW``;

and a plain fp32 matrix product of the model's own shapes measured in the same run gives the
ceiling: the matrix products of one step (forward, the input gradient, and the weight gradient
of trained weights) at the batch's token count, timed alone. Targets: the backend at least 0.9x
the bare loop's tokens per second, at least 1.3x transformers', and its model arithmetic at
least 70% of the ceiling's FLOP/s.

**Batches** are built from the run file's own components, as the addition job builds them: the
warm-start batch is the reference debates of warm-start step 0 (``warmstart.batch_size``
debates, cross-entropy with the warm-start's weights), the RL batch the reference debates of
``training.batch_size`` problems as ``importance_sampling`` Datums (advantages +-1 on the turns'
tokens, alternating by datum; sampler logprobs -1), so its lengths and trained positions are
an RL iteration's after the warm-start. ``embedded:debate-tiny`` runs ``examples/addition.toml``
(full fine-tuning, as that file; and LoRA rank 16 on the warm-start batch), SmolLM2-135M
``examples/smollm2.toml`` (LoRA rank 16, as that file; full fine-tuning of 135M parameters
would hold four copies of them, weights, gradients and AdamW's two moments, beside the
baselines').

**Model FLOPs** of a step (what "model arithmetic" counts, whatever work a path skips): for
each datum of ``n`` tokens, ``2 n`` per weight of every linear layer forward, as much again for
the input gradient, and again for the weight gradient of trained weights (full fine-tuning;
LoRA adapters are counted the same way, the frozen weights get no weight gradient), the
unembedding at every position, and attention's two products over the causal pairs
``n (n + 1) / 2`` (forward, and twice that backward). The backend's share of the ceiling is
those FLOPs over its step time against the ceiling's FLOP/s.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LR = 1e-4
"""The learning rate of every path: small, so that the paths, which share the weights where
they can, leave them usable for each other (the values do not change the time)."""


@dataclass(frozen=True)
class Case:
    """One measured update: a model, how it is fine-tuned, and the batch."""

    model: str
    run_file: str
    lora_rank: int
    batch: str  # "warm-start" | "RL"

    @property
    def label(self) -> str:
        how = "full" if self.lora_rank == 0 else f"LoRA {self.lora_rank}"
        return f"{self.batch} batch, {how}"


def cases(model: str, embedded: str) -> list[Case]:
    if model == embedded:
        run = "examples/addition.toml"
        return [Case(model, run, 0, "warm-start"), Case(model, run, 0, "RL"), Case(model, run, 16, "warm-start")]
    run = "examples/smollm2.toml"
    return [Case(model, run, 16, "warm-start"), Case(model, run, 16, "RL")]


# ------------------------------------------------------------------ batches


def main_job_datums(run_file: str, model: str, tokenizer: Any, batch: str) -> tuple[list[Any], str]:
    """The Datums and loss of the run file's warm-start batch, or of an RL-shaped batch."""
    import numpy as np
    from tinker import types

    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry
    from debate_core.training.kernel.rollouts import run_debates
    from debate_core.training.run_components import build_run_components
    from debate_core.training.warmstart.data import WarmstartData, warmstart_datums

    registry = get_registry()
    overrides = [f"model.base_model={model}"]
    config = load_run_config(ROOT / run_file, overrides, registry=registry)
    settings = config.warmstart
    if batch == "RL":
        import attrs

        settings = attrs.evolve(settings, batch_size=config.training.batch_size)
    components = build_run_components(config, registry, tokenizer)
    data = WarmstartData.prepare(
        components.stages[0].dataset,
        components.grader,
        settings,
        config.run.seed,
        config.debate.num_agents,
        tokenizer,
        components.contract,
    )
    jobs = data.jobs(0)
    episodes = asyncio.run(run_debates(components.runner(), jobs, 64))
    assembled = warmstart_datums(episodes, jobs)
    if batch != "RL":
        return [a.datum for a in assembled], "cross_entropy"
    datums = []
    for index, a in enumerate(assembled):
        mask = np.asarray(a.mask, dtype=np.float32)
        sign = 1.0 if index % 2 == 0 else -1.0
        datums.append(
            types.Datum(
                model_input=a.datum.model_input,
                loss_fn_inputs={
                    "target_tokens": a.datum.loss_fn_inputs["target_tokens"],
                    "logprobs": (-mask).astype(np.float32),
                    "advantages": (sign * mask).astype(np.float32),
                },
            )
        )
    return datums, "importance_sampling"


@dataclass(frozen=True)
class Tensors:
    """A batch as tensors: token rows, target rows, loss coefficients and sampler logprobs (0 past
    each row's end), and each datum's length."""

    tokens: Any
    targets: Any
    coefficients: Any
    sampled: Any
    lengths: list[int]

    @classmethod
    def of(cls, datums: Sequence[Any], loss_fn: str, device: Any) -> Tensors:
        import torch

        lengths = [len(d.model_input.to_ints()) for d in datums]
        rows, width = len(datums), max(lengths)
        tokens = torch.zeros((rows, width), dtype=torch.long)
        targets = torch.zeros((rows, width), dtype=torch.long)
        coefficients = torch.zeros((rows, width))
        sampled = torch.zeros((rows, width))
        key = "weights" if loss_fn == "cross_entropy" else "advantages"
        for i, d in enumerate(datums):
            n = lengths[i]
            tokens[i, :n] = torch.tensor(d.model_input.to_ints())
            targets[i, :n] = d.loss_fn_inputs["target_tokens"].to_torch()
            coefficients[i, :n] = d.loss_fn_inputs[key].to_torch()
            if "logprobs" in d.loss_fn_inputs:
                sampled[i, :n] = d.loss_fn_inputs["logprobs"].to_torch()
        return cls(tokens.to(device), targets.to(device), coefficients.to(device), sampled.to(device), lengths)

    def micro_batches(self, budget: int) -> list[Any]:
        """Row indices of micro-batches, longest rows first, each at most ``budget`` padded tokens."""
        import torch

        order = sorted(range(len(self.lengths)), key=lambda i: -self.lengths[i])
        out: list[list[int]] = []
        for i in order:
            if out and (len(out[-1]) + 1) * self.lengths[out[-1][0]] <= budget:
                out[-1].append(i)
            else:
                out.append([i])
        return [torch.tensor(rows, device=self.tokens.device) for rows in out]


def summed_loss(loss_fn: str, logprobs: Any, coefficients: Any, sampled: Any) -> Any:
    """The backend's losses (``losses.datum_loss``) summed over the given positions."""
    import torch

    if loss_fn == "cross_entropy":
        return -(logprobs * coefficients).sum()
    return -(torch.exp(logprobs - sampled) * coefficients).sum()


# ------------------------------------------------------------------ the bare loop


class BareLoop:
    """The practical limit: a functional Llama/Qwen3 forward with its own copies of the weights
    (fused, as leaves) or, for LoRA, the frozen base weights and copies of the adapters."""

    def __init__(self, module: Any, core: Any, lora_rank: int, loss_fn: str, budget: int) -> None:
        import torch

        self.loss_fn, self.budget, self.lora = loss_fn, budget, lora_rank > 0
        config = core.config
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(getattr(config, "num_key_value_heads", None) or self.heads)
        self.dim = int(getattr(config, "head_dim", None) or config.hidden_size // self.heads)
        self.hidden, self.eps = int(config.hidden_size), float(config.rms_norm_eps)
        self.inv_freq = core.model.rotary_emb.inv_freq.detach().float()
        trainable = not self.lora

        def leaf(t: Any) -> Any:
            return t.detach().clone().requires_grad_(trainable)

        inner = core.model
        embed = inner.embed_tokens.weight
        self.embed = leaf(embed)
        tied = core.lm_head.weight.data_ptr() == embed.data_ptr()
        self.head = self.embed if tied else leaf(core.lm_head.weight)
        self.final_norm = leaf(inner.norm.weight)
        self.layers: list[dict[str, Any]] = []
        self.adapters: list[Any] = []
        for layer in inner.layers:
            attn, mlp = layer.self_attn, layer.mlp
            weights = {
                "qkv": leaf(torch.cat([_base(attn.q_proj), _base(attn.k_proj), _base(attn.v_proj)])),
                "o": leaf(_base(attn.o_proj)),
                "gate_up": leaf(torch.cat([_base(mlp.gate_proj), _base(mlp.up_proj)])),
                "down": leaf(_base(mlp.down_proj)),
                "input_norm": leaf(layer.input_layernorm.weight),
                "post_norm": leaf(layer.post_attention_layernorm.weight),
            }
            q_norm = getattr(attn, "q_norm", None)
            if q_norm is not None:
                weights["q_norm"], weights["k_norm"] = leaf(q_norm.weight), leaf(attn.k_norm.weight)
            if self.lora:
                for name, projection in (
                    ("q", attn.q_proj),
                    ("k", attn.k_proj),
                    ("v", attn.v_proj),
                    ("o", attn.o_proj),
                    ("gate", mlp.gate_proj),
                    ("up", mlp.up_proj),
                    ("down", mlp.down_proj),
                ):
                    a, b = _adapter(projection)
                    weights[f"{name}_A"], weights[f"{name}_B"] = a, b
                    self.adapters += [a, b]
            self.layers.append(weights)
        if self.lora:
            self.parameters = self.adapters
        else:
            seen: dict[int, Any] = {}
            for t in [self.embed, self.head, self.final_norm, *(w for ws in self.layers for w in ws.values())]:
                seen.setdefault(id(t), t)
            self.parameters = list(seen.values())
        self.optimizer = torch.optim.AdamW(self.parameters, lr=LR, foreach=True)

    def _linear(self, weights: dict[str, Any], x: Any, fused: str, parts: Sequence[str]) -> Any:
        import torch
        import torch.nn.functional as F

        y = F.linear(x, weights[fused])
        if not self.lora:
            return y
        deltas = [F.linear(F.linear(x, weights[f"{p}_A"]), weights[f"{p}_B"]) for p in parts]
        return y + (torch.cat(deltas, dim=-1) if len(deltas) > 1 else deltas[0])

    def hidden_states(self, tokens: Any) -> Any:
        import torch
        import torch.nn.functional as F

        rows, steps = tokens.shape
        positions = torch.arange(steps, device=tokens.device).float()
        freqs = torch.outer(positions, self.inv_freq.to(tokens.device))
        cos, sin = freqs.cos(), freqs.sin()
        cos, sin = torch.cat([cos, cos], -1).view(1, steps, 1, -1), torch.cat([-sin, sin], -1).view(1, steps, 1, -1)
        x = F.embedding(tokens, self.embed)
        q_size, kv_size = self.heads * self.dim, self.kv_heads * self.dim
        half = self.dim // 2
        for w in self.layers:
            h = F.rms_norm(x, (self.hidden,), w["input_norm"], self.eps)
            qkv = self._linear(w, h, "qkv", ("q", "k", "v"))
            q, k, v = qkv.split([q_size, kv_size, kv_size], dim=-1)
            q = q.view(rows, steps, self.heads, self.dim)
            k = k.view(rows, steps, self.kv_heads, self.dim)
            if "q_norm" in w:
                q = F.rms_norm(q, (self.dim,), w["q_norm"], self.eps)
                k = F.rms_norm(k, (self.dim,), w["k_norm"], self.eps)
            q = q * cos + q.roll(half, dims=-1) * sin
            k = k * cos + k.roll(half, dims=-1) * sin
            attended = F.scaled_dot_product_attention(
                q.transpose(1, 2),
                k.transpose(1, 2),
                v.view(rows, steps, self.kv_heads, self.dim).transpose(1, 2),
                is_causal=True,
                enable_gqa=self.kv_heads != self.heads,
            )
            x = x + self._linear(w, attended.transpose(1, 2).reshape(rows, steps, -1), "o", ("o",))
            h = F.rms_norm(x, (self.hidden,), w["post_norm"], self.eps)
            gate, up = self._linear(w, h, "gate_up", ("gate", "up")).chunk(2, dim=-1)
            x = x + self._linear(w, F.silu(gate) * up, "down", ("down",))
        return F.rms_norm(x, (self.hidden,), self.final_norm, self.eps)

    def step(self, batch: Tensors) -> None:
        import torch

        for rows in batch.micro_batches(self.budget):
            width = batch.lengths[int(rows[0])]
            tokens = batch.tokens.index_select(0, rows)[:, :width]
            coefficients = batch.coefficients.index_select(0, rows)[:, :width]
            where = coefficients != 0
            hidden = self.hidden_states(tokens)[where]
            logits = torch.nn.functional.linear(hidden, self.head)
            targets = batch.targets.index_select(0, rows)[:, :width][where]
            logprobs = logits.gather(1, targets.unsqueeze(1)).squeeze(1) - torch.logsumexp(logits, dim=1)
            sampled = batch.sampled.index_select(0, rows)[:, :width][where]
            summed_loss(self.loss_fn, logprobs, coefficients[where], sampled).backward()
        torch.nn.utils.clip_grad_norm_(self.parameters, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


def _base(projection: Any) -> Any:
    """The frozen (or full) weight of a projection, under a peft LoRA wrapper or not."""
    base = getattr(projection, "base_layer", projection)
    return base.weight


def _adapter(projection: Any) -> tuple[Any, Any]:
    """Copies of a peft LoRA projection's A and B (scale 1: ``lora_alpha = rank``)."""
    a = projection.lora_A["default"].weight
    b = projection.lora_B["default"].weight
    return a.detach().clone().requires_grad_(True), b.detach().clone().requires_grad_(True)


# ------------------------------------------------------------------ transformers


class TransformersLoop:
    """The model's own forward (peft's wrapper for LoRA) on the backend's module, with its own
    AdamW over the module's trainable weights."""

    def __init__(self, module: Any, loss_fn: str, budget: int) -> None:
        import torch

        self.module, self.loss_fn, self.budget = module, loss_fn, budget
        self.parameters = [p for p in module.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(self.parameters, lr=LR, foreach=True)

    def step(self, batch: Tensors) -> None:
        import torch

        for rows in batch.micro_batches(self.budget):
            width = batch.lengths[int(rows[0])]
            tokens = batch.tokens.index_select(0, rows)[:, :width]
            lengths = torch.tensor([batch.lengths[int(r)] for r in rows], device=tokens.device)
            attention = (torch.arange(width, device=tokens.device).unsqueeze(0) < lengths.unsqueeze(1)).long()
            logits = self.module(input_ids=tokens, attention_mask=attention, use_cache=False).logits.float()
            targets = batch.targets.index_select(0, rows)[:, :width]
            logprobs = torch.log_softmax(logits, dim=-1).gather(2, targets.unsqueeze(2)).squeeze(2)
            coefficients = batch.coefficients.index_select(0, rows)[:, :width]
            sampled = batch.sampled.index_select(0, rows)[:, :width]
            summed_loss(self.loss_fn, logprobs, coefficients, sampled).backward()
        torch.nn.utils.clip_grad_norm_(self.parameters, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


# ------------------------------------------------------------------ FLOPs and the ceiling


def linear_shapes(core: Any, lora_rank: int) -> list[tuple[int, int, bool]]:
    """``(in, out, has weight gradient)`` of every matrix product per token of one forward: the
    layers' projections (and LoRA's two factors of each), then the unembedding."""
    config = core.config
    heads = int(config.num_attention_heads)
    kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
    dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
    hidden, mlp = int(config.hidden_size), int(config.intermediate_size)
    full = lora_rank == 0
    per_layer = [(hidden, (heads + 2 * kv_heads) * dim), (heads * dim, hidden), (hidden, 2 * mlp), (mlp, hidden)]
    shapes = []
    for _ in range(int(config.num_hidden_layers)):
        for n_in, n_out in per_layer:
            shapes.append((n_in, n_out, full))
            if not full:
                parts = 3 if n_out == (heads + 2 * kv_heads) * dim else 2 if n_out == 2 * mlp else 1
                shapes += [(n_in, parts * lora_rank, True), (parts * lora_rank, n_out, True)]
    shapes.append((hidden, int(config.vocab_size), full))
    return shapes


def model_flops(core: Any, lora_rank: int, lengths: Sequence[int]) -> float:
    """The model FLOPs of one training step over datums of these lengths (module docstring)."""
    config = core.config
    heads = int(config.num_attention_heads)
    dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
    per_token = sum(2 * n_in * n_out * (3 if grad else 2) for n_in, n_out, grad in linear_shapes(core, lora_rank))
    tokens = sum(lengths)
    pairs = sum(n * (n + 1) / 2 for n in lengths)
    attention = 3 * 2 * 2 * pairs * heads * dim * int(config.num_hidden_layers)
    return per_token * tokens + attention


def matmul_ceiling(core: Any, lora_rank: int, tokens: int, device: Any, repeats: int) -> tuple[float, float]:
    """FLOP/s of a step's matrix products alone: for each of the model's shapes, ``x W^T`` over
    ``tokens`` rows, the input gradient, and the weight gradient where there is one; by wall
    time and by the process's CPU time (best of ``repeats`` each)."""
    import torch

    shapes = linear_shapes(core, lora_rank)
    generator = torch.Generator().manual_seed(0)
    tensors = []
    for n_in, n_out, grad in dict.fromkeys(shapes):
        x = torch.randn(tokens, n_in, generator=generator).to(device)
        w = torch.randn(n_out, n_in, generator=generator).to(device)
        dy = torch.randn(tokens, n_out, generator=generator).to(device)
        tensors.append((x, w, dy, grad, shapes.count((n_in, n_out, grad))))
    flops = sum(2 * tokens * x.shape[1] * w.shape[0] * (3 if grad else 2) * count for x, w, _, grad, count in tensors)

    def once() -> tuple[float, float]:
        _sync(device)
        start, used = time.perf_counter(), time.process_time()
        for x, w, dy, grad, count in tensors:
            for _ in range(count):
                torch.mm(x, w.t())
                torch.mm(dy, w)
                if grad:
                    torch.mm(dy.t(), x)
        _sync(device)
        return time.perf_counter() - start, time.process_time() - used

    once()
    runs = [once() for _ in range(max(repeats, 1))]
    return flops / min(wall for wall, _ in runs), flops / min(cpu for _, cpu in runs)


def _sync(device: Any) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


# ------------------------------------------------------------------ the part


@dataclass(frozen=True)
class Timed:
    seconds: dict[str, list[float]]
    tokens: int


def time_paths(
    paths: dict[str, Callable[[], None]], repeats: int, device: Any
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each path once to warm up, then ``repeats`` rounds of every path back to back: the wall
    seconds and the process's CPU seconds of each run."""
    wall: dict[str, list[float]] = {name: [] for name in paths}
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    for r in range(repeats + 1):
        for name, step in paths.items():
            _sync(device)
            started, used = time.perf_counter(), time.process_time()
            step()
            _sync(device)
            if r:
                wall[name].append(time.perf_counter() - started)
                cpu[name].append(time.process_time() - used)
    return wall, cpu


def _paired(numerators: list[float], denominators: list[float]) -> float:
    return statistics.median(n / d for n, d in zip(numerators, denominators, strict=True))


def profile_step(trainer: Any, datums: Sequence[Any], loss_fn: str, rows: int) -> str:
    """torch.profiler's table of one backend step (on the training worker's thread), top ops by
    self CPU time."""
    from tinker import types
    from torch.profiler import ProfilerActivity, profile

    def run() -> str:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            trainer._run_loss(datums, loss_fn, None, backward=True)
            trainer._step(types.AdamParams(learning_rate=LR, grad_clip_norm=1.0))
        return str(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows))

    return str(trainer._worker.submit(run).result())


def bench_case(
    case: Case, service: Any, setting: Any, repeats: int, judge: Callable[..., str], profile_rows: int
) -> None:
    """One case in one setting: time the three paths and the ceiling, print and judge the ratios."""
    import torch
    from tinker import types

    from debate_core.backends.local.sampling.snapshots import core_module

    trainer = service.create_lora_training_client(
        case.model, rank=case.lora_rank, seed=0, train_unembed=case.lora_rank == 0
    ).result()
    datums, loss_fn = main_job_datums(case.run_file, case.model, trainer.get_tokenizer(), case.batch)
    device = trainer.device
    batch = Tensors.of(datums, loss_fn, device)
    budget = service.settings.train_tokens_per_batch
    module = trainer.module
    core = core_module(module)
    bare = BareLoop(module, core, case.lora_rank, loss_fn, budget)
    hf = TransformersLoop(module, loss_fn, budget)
    adam = types.AdamParams(learning_rate=LR, grad_clip_norm=1.0)

    def backend() -> None:
        trainer.forward_backward(datums, loss_fn)
        trainer.optim_step(adam).result()

    seconds, cpu = time_paths(
        {"backend": backend, "bare": lambda: bare.step(batch), "hf": lambda: hf.step(batch)}, repeats, device
    )
    tokens = sum(batch.lengths)
    trained = int((batch.coefficients != 0).sum())
    ceiling, ceiling_cpu = matmul_ceiling(core, case.lora_rank, tokens, device, repeats)
    flops = model_flops(core, case.lora_rank, batch.lengths)
    best = {name: min(values) for name, values in seconds.items()}
    vs_bare, vs_hf = _paired(seconds["bare"], seconds["backend"]), _paired(seconds["hf"], seconds["backend"])
    share = flops / best["backend"] / ceiling
    label = f"{case.label}: "
    verdicts = (
        judge("train", case.model, label + "backend / bare loop, tokens/s", setting, vs_bare, at_least=0.9),
        judge("train", case.model, label + "backend / transformers, tokens/s", setting, vs_hf, at_least=1.3),
        judge("train", case.model, label + "model FLOP/s / fp32 matmul", setting, share * 100, at_least=70, unit="%"),
    )
    print(
        f"\ntrain: {case.model}, {setting.label}, {case.label}: {len(datums)} datums, {tokens} tokens "
        f"({min(batch.lengths)} to {max(batch.lengths)} a datum), {trained} trained, loss {loss_fn}"
    )
    print(
        f"  tokens/s (best of {repeats}): backend {tokens / best['backend']:.0f}, bare loop "
        f"{tokens / best['bare']:.0f}, transformers {tokens / best['hf']:.0f}; step {best['backend']:.3f} s"
    )
    print(f"  backend / bare loop:    {vs_bare:.2f}x (target >= 0.9x) {verdicts[0]}")
    print(f"  backend / transformers: {vs_hf:.2f}x (target >= 1.3x) {verdicts[1]}")
    if setting.device == "cpu" and setting.threads == 1:
        # One thread: the process's CPU time is the work itself, far less disturbed by other load.
        print(
            f"  by CPU time (1 thread, less exposed to other load): backend / bare loop "
            f"{_paired(cpu['bare'], cpu['backend']):.2f}x, backend / transformers "
            f"{_paired(cpu['hf'], cpu['backend']):.2f}x, "
            f"backend step {min(cpu['backend']):.3f} CPU s, model FLOPs per CPU second / the fp32 matmul's "
            f"{flops / min(cpu['backend']) / ceiling_cpu:.0%}"
        )
    print(
        f"  model arithmetic {flops / 1e9:.1f} GFLOP a step: backend {flops / best['backend'] / 1e9:.1f} GFLOP/s, "
        f"bare loop {flops / best['bare'] / 1e9:.1f}, fp32 matmul of the model's shapes {ceiling / 1e9:.1f}: "
        f"{share:.0%} (target >= 70%) {verdicts[2]}"
    )
    if profile_rows:
        print(f"  one backend step, top {profile_rows} ops by self CPU time:")
        print("    " + profile_step(trainer, datums, loss_fn, profile_rows).replace("\n", "\n    "))

    trainer.close()
    torch.set_num_threads(setting.threads)
