"""A batched decoder with a preallocated KV cache for Llama-family models (Llama, Mistral,
Qwen2, Qwen3, and the embedded models, which are Qwen3-style).

It runs the weights of a ``transformers`` model read once into plain tensors
(``decoder_weights``: LoRA merged, fused q/k/v and gate/up projections), so a snapshot is
independent of later training. Each row of a batch has its own length in the cache: rows can start from a reused
prefix, join a running batch, and finish at different steps. ``transformers``' ``generate``
grows its cache by concatenation at every step; writing into a preallocated cache is what
makes this decoder faster (``benchmarks/local_backend.py`` measures it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from debate_core.backends.local.models.decoder_weights import DecoderWeights, LayerWeights
from debate_core.backends.local.prefix_groups import group_by_prefix
from debate_core.backends.local.sampling.prefix_cache import PrefixCache
from debate_core.backends.local.threads import ThreadPlan, use_threads
from debate_core.backends.local.torch_settings import no_grad

SHARED_PREFILL_MIN = 32
"""Prompts of one batch sharing at least this many tokens (not cached yet) prefill them once."""


class KVBatch:
    """A preallocated KV cache for a batch of rows; ``lengths[b]`` is where row ``b`` writes next."""

    def __init__(self, keys: list[torch.Tensor], values: list[torch.Tensor], lengths: torch.Tensor) -> None:
        self.keys = keys
        self.values = values
        self.lengths = lengths

    @classmethod
    def allocate(cls, weights: DecoderWeights, rows: int, capacity: int) -> KVBatch:
        shape = (rows, weights.num_kv_heads, capacity, weights.head_dim)
        device, dtype = weights.embed.device, weights.embed.dtype
        keys = [torch.zeros(shape, device=device, dtype=dtype) for _ in weights.layers]
        values = [torch.zeros(shape, device=device, dtype=dtype) for _ in weights.layers]
        return cls(keys, values, torch.zeros(rows, dtype=torch.long, device=device))

    @property
    def rows(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def capacity(self) -> int:
        return int(self.keys[0].shape[2]) if self.keys else 0

    def select(self, rows: torch.Tensor) -> KVBatch:
        """Keep only ``rows`` (an index tensor), in that order."""
        return KVBatch(
            [k.index_select(0, rows) for k in self.keys],
            [v.index_select(0, rows) for v in self.values],
            self.lengths.index_select(0, rows),
        )

    def with_capacity(self, capacity: int) -> KVBatch:
        """The same rows with room for ``capacity`` positions each."""
        if capacity <= self.capacity:
            return self
        extra = capacity - self.capacity

        def grow(t: torch.Tensor) -> torch.Tensor:
            return F.pad(t, (0, 0, 0, extra))

        return KVBatch([grow(k) for k in self.keys], [grow(v) for v in self.values], self.lengths)

    def extend(self, other: KVBatch) -> KVBatch:
        """This batch's rows followed by ``other``'s."""
        capacity = max(self.capacity, other.capacity)
        a, b = self.with_capacity(capacity), other.with_capacity(capacity)
        return KVBatch(
            [torch.cat([x, y]) for x, y in zip(a.keys, b.keys, strict=True)],
            [torch.cat([x, y]) for x, y in zip(a.values, b.values, strict=True)],
            torch.cat([a.lengths, b.lengths]),
        )

    def row_prefix(self, row: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Copies of one row's first ``length`` cached keys and values: ``[layers, kv_heads, length, dim]``."""
        return (
            torch.stack([k[row, :, :length] for k in self.keys]).clone(),
            torch.stack([v[row, :, :length] for v in self.values]).clone(),
        )

    def load_prefix(self, row: int, keys: torch.Tensor, values: torch.Tensor, length: int) -> None:
        """Fill one row's first ``length`` positions from a saved prefix."""
        for layer, (k, v) in enumerate(zip(self.keys, self.values, strict=True)):
            k[row, :, :length] = keys[layer, :, :length]
            v[row, :, :length] = values[layer, :, :length]


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


@dataclass(frozen=True)
class _Pass:
    """What every layer of one :func:`forward` call shares: the batch's shape, the rotary tables at
    the tokens' positions, the attention mask, and where the new keys and values go."""

    batch: int
    steps: int
    group: int
    span: int
    intermediate: int
    positions: torch.Tensor
    rows: torch.Tensor
    cos: torch.Tensor
    sin: torch.Tensor
    mask: torch.Tensor


def forward(
    weights: DecoderWeights,
    tokens: torch.Tensor,
    positions: torch.Tensor,
    cache: KVBatch,
    output_rows: torch.Tensor | None = None,
) -> torch.Tensor:
    """Run ``tokens`` ``[B, S]`` at cache positions ``positions`` ``[B, S]``; return hidden states.

    Keys and values are written into ``cache`` at those positions. A query at position ``p``
    attends to every cached position ``<= p`` of its row: the caller guarantees those are
    valid (prefix, earlier tokens of this call, or earlier steps). ``output_rows``, a boolean
    ``[B, S]``, selects the positions whose final hidden states are returned (all when
    ``None``), flattened in row-major order.
    """
    batch, steps = tokens.shape
    group = weights.num_heads // weights.num_kv_heads
    span = int(positions.max().item()) + 1
    hidden_size = weights.embed.shape[1]

    x = F.embedding(tokens, weights.embed)
    cos = weights.rope_cos[positions].unsqueeze(2)  # [B, S, 1, D]
    sin = weights.rope_sin[positions].unsqueeze(2)
    mask = _causal_mask(positions, span, group, x.dtype, x.device)
    rows = torch.arange(batch, device=tokens.device).unsqueeze(1)
    intermediate = weights.layers[0].down.shape[1] if weights.layers else 0
    shared = _Pass(batch, steps, group, span, intermediate, positions, rows, cos, sin, mask)

    for layer, keys, values in zip(weights.layers, cache.keys, cache.values, strict=True):
        h = F.rms_norm(x, (hidden_size,), layer.input_norm, weights.norm_eps)
        x = x + _attention(weights, layer, h, keys, values, shared)
        h = F.rms_norm(x, (hidden_size,), layer.post_norm, weights.norm_eps)
        gate = F.linear(h, layer.gate_up[:intermediate])
        up = F.linear(h, layer.gate_up[intermediate:])
        x = x + F.linear(F.silu(gate).mul_(up), layer.down)

    if output_rows is not None:
        x = x[output_rows]
    return F.rms_norm(x, (hidden_size,), weights.final_norm, weights.norm_eps)


def _causal_mask(
    positions: torch.Tensor, span: int, group: int, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """The additive attention mask ``[B, 1, S*G, span]``: 0 where a query at position ``p`` may see
    a cached position ``<= p`` of its row, ``-inf`` elsewhere, repeated for the ``G`` query heads
    of a kv head."""
    batch, steps = positions.shape
    key_positions = torch.arange(span, device=positions.device)
    allowed = key_positions.view(1, 1, span) <= positions.unsqueeze(-1)  # [B, S, span]
    if group > 1:
        # Queries of one kv group side by side: [B, 1, S*G, span] broadcast over kv heads.
        allowed = allowed.unsqueeze(2).expand(batch, steps, group, span).reshape(batch, steps * group, span)
    # An additive float mask, made once: SDPA would convert a boolean one in every layer.
    mask = torch.zeros(allowed.shape, dtype=dtype, device=device).masked_fill_(~allowed, float("-inf"))
    return mask.unsqueeze(1)


def _attention(
    weights: DecoderWeights,
    layer: LayerWeights,
    h: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    shared: _Pass,
) -> torch.Tensor:
    """One layer's attention on the normalised hidden states ``h``: this call's keys and values are
    written into the layer's cache, and the output projection of the attended values is returned."""
    batch, steps, group, span = shared.batch, shared.steps, shared.group, shared.span
    heads, kv_heads, dim = weights.num_heads, weights.num_kv_heads, weights.head_dim
    q_size, kv_size = heads * dim, kv_heads * dim
    # Row slices of the fused matrices are contiguous, and so are their outputs: elementwise work
    # (norms, rotary, SiLU) on strided column slices of one fused output is several times slower
    # on a CPU, which dominates a long prefill. Queries and keys come out of one product and are
    # normalised and rotated as one tensor (fewer operations per decoding step).
    qk_rows = q_size + kv_size
    qk = F.linear(h, layer.qkv[:qk_rows], _part(layer.qkv_bias, 0, qk_rows))
    qk = qk.view(batch, steps, heads + kv_heads, dim)
    v = F.linear(h, layer.qkv[qk_rows:], _part(layer.qkv_bias, qk_rows, None))
    v = v.view(batch, steps, kv_heads, dim)
    if layer.qk_norm is not None:
        qk = F.rms_norm(qk, (dim,), None, weights.norm_eps) * layer.qk_norm
    qk = qk * shared.cos + _rotate_half(qk) * shared.sin
    q, k = qk[:, :, :heads], qk[:, :, heads:]
    keys[shared.rows, :, shared.positions] = k
    values[shared.rows, :, shared.positions] = v
    # [B, kv_heads, S*G, D]: the G query heads that share a kv head, for every step.
    q = q.view(batch, steps, kv_heads, group, dim).permute(0, 2, 1, 3, 4)
    q = q.reshape(batch, kv_heads, steps * group, dim)
    attended = F.scaled_dot_product_attention(q, keys[:, :, :span], values[:, :, :span], attn_mask=shared.mask)
    attended = attended.view(batch, kv_heads, steps, group, dim).permute(0, 2, 1, 3, 4)
    attended = attended.reshape(batch, steps, q_size)
    return F.linear(attended, layer.out, layer.out_bias)


def _part(bias: torch.Tensor | None, start: int, end: int | None) -> torch.Tensor | None:
    return None if bias is None else bias[start:end]


def logits_of(weights: DecoderWeights, hidden: torch.Tensor) -> torch.Tensor:
    """Float32 next-token logits from final hidden states."""
    return F.linear(hidden, weights.lm_head).float()


def prefill_width_saved(
    prompts: Sequence[Sequence[int]], cached: Sequence[int], starts: Sequence[int], shared: Sequence[Sequence[int]]
) -> bool:
    """Whether prefilling the ``shared`` prefixes first, which lets each prompt start at
    ``starts`` instead of at its ``cached`` length, computes fewer padded token positions than
    prefilling the prompts alone (each prefill pads its rows to the longest of them)."""
    alone = len(prompts) * max(len(p) - c for p, c in zip(prompts, cached, strict=True))
    after = len(prompts) * max(len(p) - s for p, s in zip(prompts, starts, strict=True))
    return len(shared) * max(len(p) for p in shared) + after < alone


def pad_rows(sequences: Sequence[Sequence[int]], pad: int, device: torch.device) -> torch.Tensor:
    """Right-pad token lists into one ``[B, S]`` long tensor."""
    width = max(len(s) for s in sequences)
    out = torch.full((len(sequences), width), pad, dtype=torch.long)
    for i, seq in enumerate(sequences):
        out[i, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
    return out.to(device)


class FastDecoder:
    """The sampler's view of a Llama-family snapshot: prefill (reusing cached prefixes, and running
    a prefix that several prompts of the batch share once) and steps."""

    supports_join = True

    def __init__(
        self, weights: DecoderWeights, attention_budget: int = 1 << 26, threads: ThreadPlan | None = None
    ) -> None:
        self.weights = weights
        self._attention_budget = attention_budget
        self._threads = threads
        matrices = sum(t.numel() for layer in weights.layers for t in (layer.qkv, layer.out, layer.gate_up, layer.down))
        self._flops_per_token = 2.0 * matrices / max(4 * weights.num_layers, 1)
        """Floating-point operations of an average matrix product of one layer, per token."""

    def _use_threads(self, tokens: int) -> None:
        if self._threads is not None:
            use_threads(self._threads.threads_for(tokens, self._flops_per_token))

    @property
    def max_positions(self) -> int:
        return self.weights.max_positions

    @property
    def device(self) -> torch.device:
        return self.weights.embed.device

    @property
    def vocab_size(self) -> int:
        return int(self.weights.embed.shape[0])

    @no_grad
    def prefill(
        self, prompts: Sequence[Sequence[int]], capacity: int, prefix_cache: PrefixCache
    ) -> tuple[KVBatch, torch.Tensor]:
        """Cache ``prompts`` (each row from its longest cached prefix on); return next-token logits ``[B, V]``."""
        self._share_within_batch(prompts, prefix_cache)
        return self._prefill(prompts, capacity, prefix_cache)

    def _share_within_batch(self, prompts: Sequence[Sequence[int]], prefix_cache: PrefixCache) -> None:
        """Run each prefix that several prompts share (``SHARED_PREFILL_MIN`` tokens or more, and
        longer than what the cache holds of it) once, and keep it in the cache, so that the rows'
        lookups start after it: the N prompts of one persona at the start of an RL iteration
        share their system prompt, and nothing is cached yet for a fresh snapshot.

        A prefill pads every row to the longest part left to compute, so sharing pays only when
        it shortens that: when some rows share nothing, their full length sets the width and
        the shared prefill would be extra work (``prefill_width_saved``)."""
        if not prefix_cache.enabled or len(prompts) < 2:
            return
        groups = []
        for group in group_by_prefix(prompts, min_shared=SHARED_PREFILL_MIN):
            if len(group.members) < 2:
                continue
            _, held = prefix_cache.lookup([*prompts[group.members[0]][: group.shared], 0])  # leaves one to compute
            if held < group.shared:
                groups.append(group)
        if not groups:
            return
        cached = [prefix_cache.lookup(prompt)[1] for prompt in prompts]
        starts = list(cached)
        for group in groups:
            for member in group.members:
                starts[member] = max(starts[member], group.shared)
        shared = [list(prompts[group.members[0]][: group.shared]) for group in groups]
        if not prefill_width_saved(prompts, cached, starts, shared):
            return
        state, _ = self._prefill(shared, max(len(p) for p in shared), prefix_cache)
        for row, prefix in enumerate(shared):
            self.remember(state, row, prefix, prefix_cache)

    def _prefill(
        self, prompts: Sequence[Sequence[int]], capacity: int, prefix_cache: PrefixCache
    ) -> tuple[KVBatch, torch.Tensor]:
        weights = self.weights
        cache = KVBatch.allocate(weights, len(prompts), capacity)
        starts = []
        for row, prompt in enumerate(prompts):
            entry, shared = prefix_cache.lookup(prompt)
            if entry is not None:
                cache.load_prefix(row, entry.keys, entry.values, shared)
            starts.append(shared)
            prefix_cache.hit_tokens += shared
            prefix_cache.computed_tokens += len(prompt) - shared
        suffix_lengths = [len(p) - s for p, s in zip(prompts, starts, strict=True)]
        self._use_threads(sum(suffix_lengths))
        widest = max(suffix_lengths)
        per_row = weights.num_heads * widest * (max(len(p) for p in prompts) + 1)
        chunk = max(1, self._attention_budget // max(per_row, 1))
        logits = []
        for first in range(0, len(prompts), chunk):
            last = min(first + chunk, len(prompts))
            part = KVBatch(
                [k[first:last] for k in cache.keys], [v[first:last] for v in cache.values], cache.lengths[first:last]
            )
            suffixes = [prompts[r][starts[r] :] for r in range(first, last)]
            width = max(len(s) for s in suffixes)
            tokens = pad_rows(suffixes, 0, self.device)
            start = torch.tensor(starts[first:last], device=self.device).unsqueeze(1)
            positions = (start + torch.arange(width, device=self.device)).clamp(max=capacity - 1)
            lengths = torch.tensor([len(s) for s in suffixes], device=self.device)
            wanted = torch.arange(width, device=self.device).unsqueeze(0) == (lengths - 1).unsqueeze(1)
            hidden = forward(weights, tokens, positions, part, output_rows=wanted)
            logits.append(logits_of(weights, hidden))
        cache.lengths = torch.tensor([len(p) for p in prompts], dtype=torch.long, device=self.device)
        return cache, torch.cat(logits)

    @no_grad
    def step(self, state: KVBatch, tokens: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        """Feed one token per row; rows with ``active`` false do not advance. Returns logits ``[B, V]``."""
        self._use_threads(int(tokens.shape[0]))
        positions = state.lengths.clamp(max=state.capacity - 1).unsqueeze(1)
        hidden = forward(self.weights, tokens.view(-1, 1), positions, state)
        state.lengths = state.lengths + active.to(state.lengths.dtype)
        return logits_of(self.weights, hidden[:, 0])

    def select(self, state: KVBatch, rows: torch.Tensor) -> KVBatch:
        return state.select(rows)

    def extend(self, state: KVBatch, other: KVBatch) -> KVBatch:
        return state.extend(other)

    def remember(self, state: KVBatch, row: int, tokens: Sequence[int], prefix_cache: PrefixCache) -> None:
        """Save the keys and values of ``tokens`` (already in ``row``'s cache) for later prompts."""
        if prefix_cache.enabled and len(tokens) <= int(state.lengths[row]):
            keys, values = state.row_prefix(row, len(tokens))
            prefix_cache.store(tokens, keys, values)

    @no_grad
    def prompt_logprobs(self, prompt: Sequence[int]) -> list[float | None]:
        """Logprob of each prompt token given the ones before it (``None`` for the first)."""
        self._use_threads(len(prompt))
        cache = KVBatch.allocate(self.weights, 1, len(prompt))
        tokens = torch.tensor([list(prompt)], device=self.device)
        positions = torch.arange(len(prompt), device=self.device).unsqueeze(0)
        hidden = forward(self.weights, tokens, positions, cache)[0]
        logprobs = torch.log_softmax(logits_of(self.weights, hidden[:-1]), dim=-1)
        picked = logprobs.gather(1, tokens[0, 1:].unsqueeze(1)).squeeze(1)
        return [None, *picked.tolist()]
