"""``[backend.options]`` of the local backend: one class, used by the plugin to validate a run
file and by ``LocalServiceClient`` to run (importing it never imports torch)."""

from __future__ import annotations

from typing import Literal

import attrs
from attrs import validators as v


@attrs.frozen(kw_only=True)
class LocalBackendOptions:
    """``[backend.options]`` of the ``local`` backend."""

    device: str = attrs.field(default="auto", validator=v.instance_of(str))
    """``auto`` (CUDA when present, else CPU), ``cpu``, ``cuda`` or ``cuda:N``."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """What the model computes in (docs/local-backend.md#precision): ``bfloat16`` and ``float16`` are
    mixed precision (float32 master weights, optimizer state and checkpoints; frozen weights, the
    sampler and its KV cache in the lower precision); ``auto`` is bfloat16 on a CPU with bfloat16
    units (AMX, AVX512-BF16) for a model at least 256 wide, float32 elsewhere."""
    num_threads: int = attrs.field(default=0, validator=v.ge(0))
    """torch CPU threads; 0 uses every core (at most 8)."""
    state_directory: str | None = None
    """Where ``save_state(name)`` writes plain names; the trainer points it into the run directory."""
    init_seed: int = 0
    """Seed of the embedded models' random initial weights (with ``base_weights = "random"``, or for a
    model the package ships no pretrained weights for)."""
    base_weights: Literal["auto", "pretrained", "random"] = "auto"
    """Embedded models' base weights: ``auto`` loads the pretrained weights the package ships for the
    model (``debate-tiny``: pre-trained offline to read and copy text) when there are any, else the seeded
    random initialisation; ``pretrained`` insists on them; ``random`` always starts from ``init_seed``."""
    full_finetune: bool = False
    """Train every weight even when ``model.lora_rank`` is above 0 (rank 0 always means full fine-tuning)."""
    sampler_min_mflops_per_thread: float = attrs.field(default=1.0, validator=v.ge(0.0))
    """The sampler runs a model call on one thread when its average matrix product is small, on up
    to ``num_threads`` when each thread gets at least this many million operations of it (0: always
    ``num_threads``); threads meeting at every small product cost more than they save."""
    max_batch_rows: int = attrs.field(default=64, validator=v.ge(1))
    """Sequences decoded together at most; further requests wait for room."""
    prefix_cache_mb: int = attrs.field(default=256, validator=v.ge(0))
    """Memory for keys and values reused across prompts that share a prefix (0 turns reuse off)."""
    train_tokens_per_batch: int = attrs.field(default=16384, validator=v.ge(1))
    """Tokens per forward pass when training; larger batches are split and their gradients summed."""
    share_training_prefixes: bool = True
    """Run a prefix shared by several Datums (the same system prompt) once per forward pass; same gradients."""
