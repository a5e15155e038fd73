"""The weights of a Llama-family ``transformers`` model (Llama, Mistral, Qwen2, Qwen3, and the
embedded models, which are Qwen3-style) read once into plain tensors for the fast decoder.

Any LoRA adapter is merged (in float32), q/k/v and gate/up projections are fused, every tensor is
held in the dtype the sampler computes in, and every tensor that training could still change is
copied, so a snapshot is independent of later training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from debate_core.backends.local.torch_settings import no_grad

SUPPORTED_MODEL_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3"})


@dataclass(frozen=True)
class LayerWeights:
    """One decoder layer, with q/k/v fused into one matrix and gate/up into another.

    ``qk_norm`` (Qwen3's per-head q and k norms) holds the q norm's weight once per query head,
    then the k norm's once per kv head, ``[heads + kv_heads, head_dim]``: queries and keys are
    normalised and rotated together, as one tensor."""

    input_norm: torch.Tensor
    qkv: torch.Tensor
    qkv_bias: torch.Tensor | None
    qk_norm: torch.Tensor | None
    out: torch.Tensor
    out_bias: torch.Tensor | None
    post_norm: torch.Tensor
    gate_up: torch.Tensor
    down: torch.Tensor


@dataclass(frozen=True)
class DecoderWeights:
    """Every weight the decoder needs, detached from the training model."""

    embed: torch.Tensor
    layers: tuple[LayerWeights, ...]
    final_norm: torch.Tensor
    lm_head: torch.Tensor
    num_heads: int
    num_kv_heads: int
    head_dim: int
    norm_eps: float
    rope_cos: torch.Tensor
    rope_sin: torch.Tensor
    max_positions: int

    @property
    def vocab_size(self) -> int:
        return int(self.lm_head.shape[0])

    @property
    def num_layers(self) -> int:
        return len(self.layers)


def supports(model_config: Any) -> bool:  # Any: a transformers PretrainedConfig (untyped)
    """Whether a ``transformers`` config can run on this decoder (else the generic one runs)."""
    if getattr(model_config, "model_type", None) not in SUPPORTED_MODEL_TYPES:
        return False
    if getattr(model_config, "use_sliding_window", False) and getattr(model_config, "sliding_window", None):
        return False
    if getattr(model_config, "hidden_act", "silu") != "silu":
        return False
    return not getattr(model_config, "mlp_bias", False)


def _linear(
    module: torch.nn.Module, dtype: torch.dtype, *, owned: bool = True
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """A linear layer's weight and bias in ``dtype``, with any active peft LoRA delta merged in
    (added in float32, then rounded once). With ``owned``, the weight never shares storage with a
    trainable parameter; without, the caller copies it (into a fused matrix)."""
    base = getattr(module, "base_layer", module)
    weight: torch.Tensor = base.weight.detach()
    adapted = base is not module and not getattr(module, "merged", False)
    if adapted and not getattr(module, "disable_adapters", False):
        for adapter in getattr(module, "active_adapters", []):
            if adapter in getattr(module, "lora_A", {}):
                weight = weight.float() + module.get_delta_weight(adapter).detach().float()
    bias = getattr(base, "bias", None)
    held = _held(weight, base.weight, dtype) if owned else weight.to(dtype)
    return held, None if bias is None else _held(bias.detach(), bias, dtype)


def _held(tensor: torch.Tensor, source: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``tensor`` in ``dtype``: a copy where it would still share storage with a trainable ``source``."""
    held = tensor.to(dtype)
    if source.requires_grad and held.data_ptr() == source.data_ptr():
        held = held.clone()
    return held


def _owned(parameter: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A snapshot of a parameter in ``dtype``: a copy when training can still change it."""
    return _held(parameter.detach(), parameter, dtype)


def _kv_heads(model_config: Any) -> int:  # Any: a transformers PretrainedConfig (untyped)
    return int(getattr(model_config, "num_key_value_heads", None) or model_config.num_attention_heads)


def _stacked_norms(
    q_norm: torch.nn.Module | None, k_norm: torch.nn.Module | None, heads: int, kv_heads: int, dtype: torch.dtype
) -> torch.Tensor | None:
    """The q norm's weight once per query head, then the k norm's once per kv head (a copy)."""
    if q_norm is None or k_norm is None:
        return None
    q_weight, k_weight = q_norm.weight.detach(), k_norm.weight.detach()
    return torch.cat([q_weight.expand(heads, -1), k_weight.expand(kv_heads, -1)]).to(dtype).contiguous()


def _core(model: torch.nn.Module) -> torch.nn.Module:
    """The ``*ForCausalLM`` module, under any peft wrappers."""
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model


@no_grad
def extract_weights(model: torch.nn.Module, dtype: torch.dtype | None = None) -> DecoderWeights:
    """Copy (or share, where frozen and already in ``dtype``) a Llama-family model's weights into a
    ``DecoderWeights`` held in ``dtype`` (``None``: the dtype of the model's embedding)."""
    core = _core(model)
    config = core.config
    inner = core.model
    embed_param = inner.embed_tokens.weight
    dtype = dtype or embed_param.dtype
    heads, kv_heads = int(config.num_attention_heads), _kv_heads(config)
    layers = [_layer_weights(layer, heads, kv_heads, dtype) for layer in inner.layers]
    embed = _owned(embed_param, dtype)
    head_module = core.lm_head
    head_base = getattr(head_module, "base_layer", head_module)
    if head_base is head_module and head_module.weight.data_ptr() == embed_param.data_ptr():
        lm_head = embed  # tied, no adapter: one tensor
    else:
        lm_head, _ = _linear(head_module, dtype)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    max_positions = int(config.max_position_embeddings)
    rope_cos, rope_sin = _rope_tables(inner.rotary_emb, max_positions, embed)
    return DecoderWeights(
        embed=embed,
        layers=tuple(layers),
        final_norm=_owned(inner.norm.weight, dtype),
        lm_head=lm_head,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=int(head_dim),
        norm_eps=float(config.rms_norm_eps),
        rope_cos=rope_cos,
        rope_sin=rope_sin,
        max_positions=max_positions,
    )


def _layer_weights(layer: torch.nn.Module, heads: int, kv_heads: int, dtype: torch.dtype) -> LayerWeights:
    """One decoder layer's weights in ``dtype``, LoRA merged, with q/k/v and gate/up fused."""
    attn, mlp = layer.self_attn, layer.mlp
    # q/k/v and gate/up are copied into their fused matrices below: no copy of their own
    wq, bq = _linear(attn.q_proj, dtype, owned=False)
    wk, bk = _linear(attn.k_proj, dtype, owned=False)
    wv, bv = _linear(attn.v_proj, dtype, owned=False)
    wo, bo = _linear(attn.o_proj, dtype)
    wg, _ = _linear(mlp.gate_proj, dtype, owned=False)
    wu, _ = _linear(mlp.up_proj, dtype, owned=False)
    wd, _ = _linear(mlp.down_proj, dtype)
    qkv_bias = torch.cat([bq, bk, bv]) if bq is not None and bk is not None and bv is not None else None
    q_norm = getattr(attn, "q_norm", None)
    k_norm = getattr(attn, "k_norm", None)
    return LayerWeights(
        input_norm=_owned(layer.input_layernorm.weight, dtype),
        qkv=torch.cat([wq, wk, wv]).contiguous(),
        qkv_bias=qkv_bias,
        qk_norm=_stacked_norms(q_norm, k_norm, heads, kv_heads, dtype),
        out=wo,
        out_bias=bo,
        post_norm=_owned(layer.post_attention_layernorm.weight, dtype),
        gate_up=torch.cat([wg, wu]).contiguous(),
        down=wd,
    )


def _rope_tables(rotary: torch.nn.Module, max_positions: int, embed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotary embedding's cosines and sines for every position, ``[max_positions, head_dim]``,
    computed in float32 from the model's frequencies and scaling, stored in the weights' dtype."""
    positions = torch.arange(max_positions, dtype=torch.float32, device=embed.device)
    freqs = positions[:, None] * rotary.inv_freq.to(device=embed.device, dtype=torch.float32)[None, :]
    angles = torch.cat([freqs, freqs], dim=-1)
    scaling = float(getattr(rotary, "attention_scaling", 1.0))
    return (angles.cos() * scaling).to(embed.dtype), (angles.sin() * scaling).to(embed.dtype)
