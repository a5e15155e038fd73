"""``LocalServiceClient``: the Tinker ``ServiceClient`` surface, on this machine.

It creates training clients (full fine-tuning or LoRA) and sampling clients, for embedded
models and Hugging Face directories, and owns the sampling engine every sampling client
of this service shares (so requests from different debates batch together).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import attrs
import torch
from tinker import types
from tinker.lib.retry_handler import RetryConfig

from debate_core.backends.local import saved_states
from debate_core.backends.local.futures import AwaitableConcurrentFuture, OrderedWorker, completed
from debate_core.backends.local.models.loading import (
    FinetuneMode,
    LoadedModel,
    hidden_size,
    hold_frozen_in,
    load_base,
    model_context_length,
    prepare_for_training,
)
from debate_core.backends.local.models.tokenizer import token_byte_table
from debate_core.backends.local.options import LocalBackendOptions
from debate_core.backends.local.sampling.client import LocalSamplingClient
from debate_core.backends.local.sampling.engine import SamplerEngine
from debate_core.backends.local.sampling.snapshots import make_snapshot
from debate_core.backends.local.threads import ThreadPlan
from debate_core.backends.local.torch_settings import Precision, configure_torch, resolve_device, resolve_precision
from debate_core.backends.local.training_client import LocalTrainingClient
from debate_core.errors import ConfigError


class LocalServiceClient:
    """Entry point of the local backend, with the ``tinker.ServiceClient`` methods the trainer uses."""

    runs_in_process = True
    """Its calls are this machine's work: no give-up time applies (``backends.contract.RunsInProcess``)."""

    # Any: fields of LocalBackendOptions, each of its own type, as attrs.evolve takes them
    def __init__(self, settings: LocalBackendOptions | None = None, **overrides: Any) -> None:
        self.settings = attrs.evolve(settings or LocalBackendOptions(), **overrides)
        self.threads = configure_torch(self.settings.num_threads)
        self.thread_plan = ThreadPlan(self.threads, self.settings.sampler_min_mflops_per_thread)
        """The sampler's threads per model call (``threads.py``)."""
        self.device = resolve_device(self.settings.device)
        self.precisions: dict[str, Precision] = {}
        """The precision each base model loaded here computes in (``resolve_precision``), by name."""
        default_directory = Path(os.environ.get("DEBATE_LOCAL_STATE_DIR", "~/.cache/debate-core/local-states"))
        self._state_directory = Path(self.settings.state_directory or default_directory).expanduser()
        self.engine = SamplerEngine(max_batch_rows=self.settings.max_batch_rows)
        self._worker = OrderedWorker("debate-local-service")
        self._closed = False

    def environment(self) -> dict[str, str]:
        """torch's version, the device, each loaded model's precision and, on the CPU, the instruction
        set torch's kernels use and the thread count (``backends.contract.SupportsEnvironment``): what
        decides how sums round."""
        facts = {"torch": torch.__version__, "device": str(self.device), "threads": str(self.threads)}
        if self.device.type == "cuda":
            facts["cuda_device"] = torch.cuda.get_device_name(self.device)
        else:
            facts["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        for base_model, precision in self.precisions.items():
            facts["precision" if len(self.precisions) == 1 else f"precision/{base_model}"] = precision.describe()
        return facts

    # ------------------------------------------------------------------ state directory

    def use_state_directory(self, path: Path) -> None:
        """Where ``save_state(name)`` writes when ``name`` is a plain name (the trainer's run directory)."""
        self._state_directory = Path(path).expanduser()

    def state_path(self, name: str) -> Path:
        """A checkpoint name to a directory: absolute paths and paths with a separator are kept as given."""
        if not name or name in (".", ".."):
            raise ValueError(f"checkpoint name {name!r} is not a usable name")
        candidate = Path(name).expanduser()
        if candidate.is_absolute() or os.sep in name:
            return candidate
        return self._state_directory / name

    # ------------------------------------------------------------------ creating clients

    def create_lora_training_client(
        self,
        base_model: str,
        rank: int = 32,
        seed: int | None = None,
        train_mlp: bool = True,
        train_attn: bool = True,
        train_unembed: bool = True,
        user_metadata: dict[str, str] | None = None,
        optimizer: types.OptimizerConfig | None = None,
    ) -> AwaitableConcurrentFuture[LocalTrainingClient]:
        """A training client on ``base_model``: LoRA of ``rank``, or full fine-tuning when ``rank`` is 0
        (or the backend option ``full_finetune`` is set)."""
        if rank < 0:
            raise ValueError(f"rank must be >= 0, got {rank}")
        mode = FinetuneMode(
            lora_rank=0 if self.settings.full_finetune else rank,
            train_mlp=train_mlp,
            train_attn=train_attn,
            train_unembed=train_unembed,
        )
        run_seed = seed if seed is not None else secrets.randbits(31)
        return self._worker.submit(lambda: self._training_client(base_model, mode, run_seed, None))

    def create_training_client_from_state(
        self,
        path: str,
        base_model: str | None = None,
        user_metadata: dict[str, str] | None = None,
        weights_access_token: str | None = None,
        optimizer: types.OptimizerConfig | None = None,
    ) -> AwaitableConcurrentFuture[LocalTrainingClient]:
        """A training client with a checkpoint's weights and a fresh optimizer."""
        return self._worker.submit(lambda: self._from_state(path, base_model, with_optimizer=False))

    def create_training_client_from_state_with_optimizer(
        self,
        path: str,
        base_model: str | None = None,
        user_metadata: dict[str, str] | None = None,
        weights_access_token: str | None = None,
    ) -> AwaitableConcurrentFuture[LocalTrainingClient]:
        """A training client with a checkpoint's weights and optimizer state (exact resume)."""
        return self._worker.submit(lambda: self._from_state(path, base_model, with_optimizer=True))

    def create_sampling_client(
        self,
        model_path: str | None = None,
        base_model: str | None = None,
        retry_config: RetryConfig | None = None,
        record_stability_info: bool = False,
    ) -> AwaitableConcurrentFuture[LocalSamplingClient]:
        """A sampling client on saved weights (``model_path``) or on the untrained ``base_model``."""
        if model_path is None and base_model is None:
            raise ValueError("Either model_path or base_model must be provided")
        return self._worker.submit(lambda: self._sampling_client(model_path, base_model))

    def max_context_length(self, base_model: str) -> int | None:
        """The positions the model reads: an embedded model's ``max_positions``, a directory's
        ``max_position_embeddings`` (or ``n_positions``) from its ``config.json``."""
        return model_context_length(base_model)

    def close(self, status: str = "success", detail: str | None = None) -> AwaitableConcurrentFuture[None]:
        """Stop the engine and worker threads; clients made here stop working."""
        if not self._closed:
            self._closed = True
            self.engine.close()
            self._worker.close()
        return completed(None)

    # ------------------------------------------------------------------ on the service worker

    def _load(self, base_model: str, mode: FinetuneMode, seed: int, tokenizer_json: str | None) -> LoadedModel:
        if not mode.full and self.settings.full_finetune:
            mode = attrs.evolve(mode, lora_rank=0)
        module, tokenizer, tokenizer_json = self._load_base(base_model, tokenizer_json)
        precision = self.precision_of(base_model, module)
        module = hold_frozen_in(prepare_for_training(module, mode, lora_seed=seed), precision.compute)
        return LoadedModel(
            module=module,
            tokenizer=tokenizer,
            tokenizer_json=tokenizer_json,
            base_model=base_model,
            mode=mode,
            precision=precision,
        )

    # Any: the model's Hugging Face tokenizer (untyped)
    def _load_base(self, base_model: str, tokenizer_json: str | None) -> tuple[torch.nn.Module, Any, str | None]:
        """The base model in float32 (the master weights of mixed precision) and its tokenizer."""
        return load_base(
            base_model,
            device=self.device,
            dtype=torch.float32,
            init_seed=self.settings.init_seed,
            tokenizer_json=tokenizer_json,
            base_weights=self.settings.base_weights,
        )

    def precision_of(self, base_model: str, module: torch.nn.Module) -> Precision:
        """The precision ``base_model`` computes in here, resolved once from ``backend.options.dtype``."""
        if base_model not in self.precisions:
            self.precisions[base_model] = resolve_precision(self.settings.dtype, self.device, hidden_size(module))
        return self.precisions[base_model]

    def _training_client(
        self, base_model: str, mode: FinetuneMode, seed: int, tokenizer_json: str | None
    ) -> LocalTrainingClient:
        return LocalTrainingClient(self, self._load(base_model, mode, seed, tokenizer_json), seed)

    def _from_state(self, path: str, base_model: str | None, *, with_optimizer: bool) -> LocalTrainingClient:
        checkpoint = saved_states.read_state(path, with_optimizer=with_optimizer)
        saved_base = str(checkpoint.meta["base_model"])
        if base_model is not None and base_model != saved_base:
            raise ConfigError(f"{checkpoint.path} was trained from {saved_base!r}, not {base_model!r}")
        mode = FinetuneMode(**checkpoint.meta["finetune"])
        client = self._training_client(saved_base, mode, int(checkpoint.meta.get("seed", 0)), checkpoint.tokenizer_json)
        client.restore(checkpoint, with_optimizer=with_optimizer)
        return client

    def _sampling_client(self, model_path: str | None, base_model: str | None) -> LocalSamplingClient:
        if model_path is not None:
            client = self._from_state(model_path, base_model, with_optimizer=False)
            try:
                return client.save_weights_and_get_sampling_client().result()
            finally:
                client.close()
        assert base_model is not None
        module, tokenizer, _ = self._load_base(base_model, None)
        module.eval()
        for parameter in module.parameters():
            parameter.requires_grad_(False)
        precision = self.precision_of(base_model, module)
        hold_frozen_in(module, precision.compute)
        snapshot = make_snapshot(
            module,
            tokenizer,
            byte_table=token_byte_table(tokenizer),
            prefix_cache_mb=self.settings.prefix_cache_mb,
            seed=self.settings.init_seed,
            base_model=base_model,
            frozen=True,
            threads=self.thread_plan,
            dtype=precision.compute,
        )
        return LocalSamplingClient(snapshot, self.engine)
