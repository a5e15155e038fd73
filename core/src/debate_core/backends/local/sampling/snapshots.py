"""Freezing a model's current weights into a ``SamplerSnapshot`` for sampling clients."""

from __future__ import annotations

from typing import Any

import torch

from debate_core.backends.local.models.decoder_weights import extract_weights, supports
from debate_core.backends.local.sampling.engine import Decoder, SamplerSnapshot
from debate_core.backends.local.sampling.fast_decoder import FastDecoder
from debate_core.backends.local.sampling.generic_decoder import GenericDecoder, snapshot_model
from debate_core.backends.local.sampling.prefix_cache import PrefixCache
from debate_core.backends.local.threads import ThreadPlan


def core_module(module: torch.nn.Module) -> torch.nn.Module:
    """The ``*ForCausalLM`` module, under any peft wrappers."""
    get_base = getattr(module, "get_base_model", None)
    return get_base() if callable(get_base) else module


def make_snapshot(
    module: torch.nn.Module,
    tokenizer: Any,  # Any: a Hugging Face tokenizer (untyped)
    *,
    byte_table: list[bytes] | None,
    prefix_cache_mb: int,
    seed: int,
    base_model: str,
    frozen: bool = False,
    threads: ThreadPlan | None = None,
    dtype: torch.dtype | None = None,
) -> SamplerSnapshot:
    """A snapshot of ``module``'s weights: the fast decoder for Llama-family models, the generic
    one otherwise. ``frozen`` says nothing will train ``module`` later (no copy needed then);
    ``threads`` chooses the fast decoder's threads per call (``None``: the thread's own count);
    ``dtype`` is what the sampler computes in, its weights and KV cache (``None``: the module's)."""
    decoder: Decoder
    with torch.no_grad():
        if supports(core_module(module).config):
            decoder = FastDecoder(extract_weights(module, dtype), threads=threads)
        else:
            pad = getattr(tokenizer, "pad_token_id", None)
            if pad is None:
                pad = getattr(tokenizer, "eos_token_id", None)
            decoder = GenericDecoder(module if frozen else snapshot_model(module, dtype), int(pad or 0))
    return SamplerSnapshot(
        decoder=decoder,
        tokenizer=tokenizer,
        byte_table=byte_table,
        prefix_cache=PrefixCache(prefix_cache_mb << 20 if decoder.supports_join else 0),
        seed=seed,
        base_model=base_model,
    )
