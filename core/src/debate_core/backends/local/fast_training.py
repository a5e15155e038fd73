"""Target logprobs for training, with savings that leave every number (and gradient) unchanged:

* **Shared prefixes.** Datums that start with the same tokens (in a debate batch: every
  prompt of one persona starts with the same system prompt) run that prefix through the
  model once; each datum's remaining tokens attend to the shared keys and values. Autograd
  sums the gradient that reaches the prefix from every datum, which is exactly the gradient
  of running each datum in full.
* **Fused matrices.** Llama-family models under full fine-tuning run a functional forward with
  fused q/k/v and gate/up matrices (fewer, larger matmuls than the ``transformers`` modules);
  with LoRA the same forward calls the adapted projection modules, so the adapters train with
  shared prefixes too.
* **Mixed precision.** Under ``torch.autocast``, the residual stream, rotary tables and masks are
  in the compute dtype (the sampler's), norms read their weights in it, and the unembedding's
  logits are widened to float32 before the softmax.
* **Gradient only where it can be non-zero.** The unembedding and softmax build a graph only
  at positions whose loss coefficient is non-zero; the other positions (prompt tokens with
  weight or advantage 0) get their logprobs without one.

Other architectures go through their ``transformers`` forward.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import torch
import torch.nn.functional as F

from debate_core.backends.local.models.decoder_weights import supports
from debate_core.backends.local.prefix_groups import PrefixGroup


@attrs.frozen
class _Shape:
    heads: int
    kv_heads: int
    dim: int
    eps: float
    hidden: int

    @classmethod
    def of(cls, model_config: Any) -> _Shape:  # Any: a transformers PretrainedConfig (untyped)
        heads = int(model_config.num_attention_heads)
        return cls(
            heads=heads,
            kv_heads=int(getattr(model_config, "num_key_value_heads", None) or heads),
            dim=int(getattr(model_config, "head_dim", None) or model_config.hidden_size // heads),
            eps=float(model_config.rms_norm_eps),
            hidden=int(model_config.hidden_size),
        )


def _rope(core: torch.nn.Module, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and signed sin ``[B, S, 1, D]`` for integer positions ``[B, S]``: ``x * cos +
    x.roll(D / 2) * sin`` rotates ``x`` (the sine's first half negated stands for rotate-half's
    negated second half: the same products, without the copies of a concatenation)."""
    rotary = core.model.rotary_emb
    freqs = positions.unsqueeze(-1).float() * rotary.inv_freq.float()
    scaling = float(getattr(rotary, "attention_scaling", 1.0))
    cos, sin = freqs.cos() * scaling, freqs.sin() * scaling
    cos, sin = torch.cat([cos, cos], dim=-1), torch.cat([-sin, sin], dim=-1)
    return cos.to(dtype).unsqueeze(2), sin.to(dtype).unsqueeze(2)


def _rotated(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return x * cos + x.roll(x.shape[-1] // 2, dims=-1) * sin


def _layer_qkv(
    layer: torch.nn.Module, x: torch.Tensor, shape: _Shape, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Queries ``[B, H, S, D]`` and keys, values ``[B, Hkv, S, D]`` of one layer (rotated)."""
    attn = layer.self_attn
    batch, steps = x.shape[:2]
    h = F.rms_norm(x, (shape.hidden,), layer.input_layernorm.weight.to(x.dtype), shape.eps)
    if _adapted(attn.q_proj, attn.k_proj, attn.v_proj):
        qkv = torch.cat([attn.q_proj(h), attn.k_proj(h), attn.v_proj(h)], dim=-1)
    else:
        weight = torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight])
        bias = None
        if attn.q_proj.bias is not None:
            bias = torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias])
        qkv = F.linear(h, weight, bias)
    q_size, kv_size = shape.heads * shape.dim, shape.kv_heads * shape.dim
    q, k, v = (part.view(batch, steps, -1, shape.dim) for part in qkv.split([q_size, kv_size, kv_size], dim=-1))
    q_norm, k_norm = getattr(attn, "q_norm", None), getattr(attn, "k_norm", None)
    if q_norm is not None and k_norm is not None:
        q = F.rms_norm(q, (shape.dim,), q_norm.weight.to(q.dtype), shape.eps)
        k = F.rms_norm(k, (shape.dim,), k_norm.weight.to(k.dtype), shape.eps)
    return _rotated(q, cos, sin).transpose(1, 2), _rotated(k, cos, sin).transpose(1, 2), v.transpose(1, 2)


def _layer_rest(layer: torch.nn.Module, x: torch.Tensor, attended: torch.Tensor, shape: _Shape) -> torch.Tensor:
    """Output projection, residual, and the MLP block of one layer."""
    attn, mlp = layer.self_attn, layer.mlp
    batch, steps = x.shape[:2]
    attended = attended.transpose(1, 2).reshape(batch, steps, -1)
    if _adapted(attn.o_proj):
        x = x + attn.o_proj(attended)
    else:
        x = x + F.linear(attended, attn.o_proj.weight, attn.o_proj.bias)
    h = F.rms_norm(x, (shape.hidden,), layer.post_attention_layernorm.weight.to(x.dtype), shape.eps)
    if _adapted(mlp.gate_proj, mlp.up_proj):
        gate, up = mlp.gate_proj(h), mlp.up_proj(h)
    else:
        gate, up = F.linear(h, torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight])).chunk(2, dim=-1)
    activated = F.silu(gate) * up
    return x + (mlp.down_proj(activated) if _adapted(mlp.down_proj) else F.linear(activated, mlp.down_proj.weight))


def _adapted(*modules: torch.nn.Module) -> bool:
    """Whether any of these projections is wrapped (a peft LoRA layer): it is then called as a
    module, which adds its adapter's update, instead of read as a plain weight."""
    return any(type(m) is not torch.nn.Linear for m in modules)


def _expand_kv(t: torch.Tensor, shape: _Shape) -> torch.Tensor:
    return t if shape.kv_heads == shape.heads else t.repeat_interleave(shape.heads // shape.kv_heads, dim=1)


def _suffix_mask(starts: torch.Tensor, width: int, steps: int, dtype: torch.dtype) -> torch.Tensor:
    """The additive attention mask ``[N, 1, S, width + S]`` of suffix queries: each sees its own
    prefix's first ``starts[n]`` keys and its suffix causally (0), nothing else (-inf). Built once
    per forward pass for every layer (attention would convert a boolean mask in every call)."""
    rows, device = starts.shape[0], starts.device
    prefix_visible = torch.arange(width, device=device).view(1, 1, width) < starts.view(rows, 1, 1)
    causal = torch.ones(steps, steps, dtype=torch.bool, device=device).tril()
    visible = torch.cat([prefix_visible.expand(rows, steps, width), causal.expand(rows, steps, steps)], dim=2)
    blocked = torch.full((), float("-inf"), dtype=dtype, device=device)
    return torch.where(visible, torch.zeros((), dtype=dtype, device=device), blocked).unsqueeze(1)


def shared_prefix_hidden(
    core: torch.nn.Module,
    prefixes: torch.Tensor,
    prefix_lengths: torch.Tensor,
    suffixes: torch.Tensor,
    suffix_group: torch.Tensor,
    dtype: torch.dtype | None = None,
) -> tuple[torch.Tensor | None, torch.Tensor]:
    """Final hidden states of prefixes ``[G, L]`` and of suffixes ``[N, S]`` (row ``n`` continues
    prefix ``suffix_group[n]``, which is ``prefix_lengths[g]`` tokens long; padding after it is
    never attended), computed in ``dtype`` (``None``: the embedding's). ``prefixes`` may have
    width 0 (no sharing)."""
    shape = _Shape.of(core.config)
    inner = core.model
    embed = inner.embed_tokens.weight
    dtype = dtype or embed.dtype
    device = suffixes.device
    groups, width = prefixes.shape
    steps = suffixes.shape[1]
    starts = prefix_lengths.index_select(0, suffix_group)  # [N]
    suffix_positions = starts.unsqueeze(1) + torch.arange(steps, device=device)
    cos_s, sin_s = _rope(core, suffix_positions, dtype)
    xs = F.embedding(suffixes, embed).to(dtype)
    xp = None
    if width > 0:
        prefix_positions = torch.arange(width, device=device).expand(groups, width)
        cos_p, sin_p = _rope(core, prefix_positions, dtype)
        xp = F.embedding(prefixes, embed).to(dtype)
    mask = _suffix_mask(starts, width, steps, dtype) if width > 0 else None
    for layer in inner.layers:
        qs, ks, vs = _layer_qkv(layer, xs, shape, cos_s, sin_s)
        if xp is not None:
            qp, kp, vp = _layer_qkv(layer, xp, shape, cos_p, sin_p)
            attended_p = F.scaled_dot_product_attention(
                qp, _expand_kv(kp, shape), _expand_kv(vp, shape), is_causal=True
            )
            keys = torch.cat([kp.index_select(0, suffix_group), ks], dim=2)
            values = torch.cat([vp.index_select(0, suffix_group), vs], dim=2)
            xp = _layer_rest(layer, xp, attended_p, shape)
        else:
            keys, values = ks, vs
        attended_s = F.scaled_dot_product_attention(
            qs, _expand_kv(keys, shape), _expand_kv(values, shape), attn_mask=mask, is_causal=mask is None
        )
        xs = _layer_rest(layer, xs, attended_s, shape)
    final = inner.norm.weight.to(dtype)
    hidden_s = F.rms_norm(xs, (shape.hidden,), final, shape.eps)
    hidden_p = F.rms_norm(xp, (shape.hidden,), final, shape.eps) if xp is not None else None
    return hidden_p, hidden_s


def logprobs_at(
    head: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor, needs_grad: torch.Tensor
) -> torch.Tensor:
    """``log softmax(head(hidden))[targets]`` for rows ``[M, H]``; a graph only where ``needs_grad``."""
    out = torch.zeros(targets.shape, dtype=torch.float32, device=targets.device)
    training = torch.is_grad_enabled()
    rest = ~needs_grad if training else torch.ones_like(needs_grad)

    def picked(rows: torch.Tensor) -> torch.Tensor:
        logits = head(hidden[rows]).float()
        return logits.gather(1, targets[rows].unsqueeze(1)).squeeze(1) - torch.logsumexp(logits, dim=1)

    if bool(rest.any()):
        with torch.no_grad():
            out[rest] = picked(rest)
    if training and bool(needs_grad.any()):
        out = out.index_put(needs_grad.nonzero(as_tuple=True), picked(needs_grad))
    return out


def batch_logprobs(
    module: torch.nn.Module,
    core: torch.nn.Module,
    groups: Sequence[PrefixGroup],
    sequences: Sequence[Sequence[int]],
    targets: Sequence[torch.Tensor],
    needs_grad: Sequence[torch.Tensor],
    device: torch.device,
    dtype: torch.dtype | None = None,
) -> dict[int, torch.Tensor]:
    """Per-position target logprobs of the datums in ``groups``, by datum index, the model computing
    in ``dtype`` (``None``: its embedding's)."""
    if not supports(core.config):
        return _plain_logprobs(module, groups, sequences, targets, device)
    return _shared_logprobs(core, groups, sequences, targets, needs_grad, device, dtype)


def _padded(rows: Sequence[Sequence[int]], device: torch.device) -> torch.Tensor:
    width = max((len(r) for r in rows), default=0)
    out = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(list(row), dtype=torch.long)
    return out.to(device)


def _members(groups: Sequence[PrefixGroup]) -> list[int]:
    return [m for g in groups for m in g.members]


def _plain_logprobs(
    module: torch.nn.Module,
    groups: Sequence[PrefixGroup],
    sequences: Sequence[Sequence[int]],
    targets: Sequence[torch.Tensor],
    device: torch.device,
) -> dict[int, torch.Tensor]:
    members = _members(groups)
    ids = _padded([sequences[m] for m in members], device)
    target_ids = _padded([targets[m].tolist() for m in members], device)
    logits = module(input_ids=ids, use_cache=False).logits.float()
    picked = logits.gather(2, target_ids.unsqueeze(2)).squeeze(2) - torch.logsumexp(logits, dim=2)
    return {m: picked[row, : len(sequences[m])] for row, m in enumerate(members)}


def _shared_logprobs(
    core: torch.nn.Module,
    groups: Sequence[PrefixGroup],
    sequences: Sequence[Sequence[int]],
    targets: Sequence[torch.Tensor],
    needs_grad: Sequence[torch.Tensor],
    device: torch.device,
    dtype: torch.dtype | None,
) -> dict[int, torch.Tensor]:
    out: dict[int, torch.Tensor] = {}
    shared = [g for g in groups if g.shared > 0]
    alone = [g for g in groups if g.shared == 0]
    if shared:
        out.update(_run_groups(core, shared, sequences, targets, needs_grad, device, dtype))
    if alone:
        out.update(_run_groups(core, alone, sequences, targets, needs_grad, device, dtype))
    return out


def _run_groups(
    core: torch.nn.Module,
    groups: Sequence[PrefixGroup],
    sequences: Sequence[Sequence[int]],
    targets: Sequence[torch.Tensor],
    needs_grad: Sequence[torch.Tensor],
    device: torch.device,
    dtype: torch.dtype | None,
) -> dict[int, torch.Tensor]:
    """Groups that all share a prefix (``shared > 0``), or that all have none."""
    with_prefix = groups[0].shared > 0
    if with_prefix:
        prefixes = _padded([sequences[g.members[0]][: g.shared] for g in groups], device)
    else:
        prefixes = torch.zeros((len(groups), 0), dtype=torch.long, device=device)
    prefix_lengths = torch.tensor([g.shared for g in groups], dtype=torch.long, device=device)
    owner = torch.tensor([i for i, g in enumerate(groups) for _ in g.members], dtype=torch.long, device=device)
    suffixes = _padded([sequences[m][g.shared :] for g in groups for m in g.members], device)
    hidden_p, hidden_s = shared_prefix_hidden(core, prefixes, prefix_lengths, suffixes, owner, dtype)
    positions = _Positions.of(groups, sequences, suffixes.shape[1], prefixes.shape[1])
    rows = [hidden_s.reshape(-1, hidden_s.shape[-1])]
    if hidden_p is not None:
        rows.insert(0, hidden_p.reshape(-1, hidden_p.shape[-1]))
    hidden = torch.cat(rows).index_select(0, torch.tensor(positions.rows, dtype=torch.long, device=device))
    wanted = torch.cat([targets[m][start:end] for m, start, end in positions.spans])
    grad = torch.zeros(len(positions.rows), dtype=torch.bool, device=device)
    for (_, start, end), first, sharers in zip(positions.spans, positions.firsts, positions.sharers, strict=True):
        for member in sharers:
            grad[first : first + end - start] |= needs_grad[member][start:end]
    computed = logprobs_at(core.lm_head, hidden, wanted, grad)
    picked = computed.index_select(0, torch.tensor(positions.order, dtype=torch.long, device=device))
    members = [m for g in groups for m in g.members]
    return dict(zip(members, picked.split([len(sequences[m]) for m in members]), strict=True))


@attrs.frozen
class _Positions:
    """Where the logprobs of a batch's positions come from, each computed once.

    ``rows`` index the final hidden states (prefixes' rows first, then suffixes', flattened), one
    per distinct position: a group's positions before its last shared one once for the group (they
    predict shared tokens), every other position once per datum. ``spans`` say which datum's
    targets, ``[start, end)``, each run of ``rows`` predicts (``firsts``: where the run begins;
    ``sharers``: the datums whose ``needs_grad`` the run takes, all the group's members for its
    shared run); ``order`` lists, datum after datum, the computed position of each of its positions."""

    rows: list[int]
    spans: list[tuple[int, int, int]]
    firsts: list[int]
    sharers: list[tuple[int, ...]]
    order: list[int]

    @classmethod
    def of(
        cls, groups: Sequence[PrefixGroup], sequences: Sequence[Sequence[int]], steps: int, width: int
    ) -> _Positions:
        rows: list[int] = []
        spans: list[tuple[int, int, int]] = []
        firsts: list[int] = []
        sharers: list[tuple[int, ...]] = []
        order: list[int] = []
        suffix_base = len(groups) * width
        row = 0

        def run(member: int, start: int, end: int, first_row: int, by: tuple[int, ...] = ()) -> list[int]:
            firsts.append(len(rows))
            spans.append((member, start, end))
            sharers.append(by or (member,))
            computed = list(range(len(rows), len(rows) + end - start))
            rows.extend(range(first_row, first_row + end - start))
            return computed

        for slot, g in enumerate(groups):
            inside = max(g.shared - 1, 0)
            shared = run(g.members[0], 0, inside, slot * width, tuple(g.members)) if inside else []
            for m in g.members:
                mine = list(shared)
                if g.shared:
                    mine += run(m, inside, g.shared, slot * width + inside)
                mine += run(m, g.shared, len(sequences[m]), suffix_base + row * steps)
                order.extend(mine)
                row += 1
        return cls(rows, spans, firsts, sharers, order)
