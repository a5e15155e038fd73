"""``LocalTrainingClient``: the Tinker ``TrainingClient`` surface on a torch model.

Every operation runs on the client's own worker thread, in submission order, so the
trainer can submit ``optim_step`` before awaiting ``forward_backward`` exactly as with the
service. Gradients from successive ``forward_backward`` calls add up until ``optim_step``,
which is ``torch.optim.AdamW`` with the step's ``AdamParams`` (and global-norm clipping when
``grad_clip_norm > 0``), then clears them.

In mixed precision (``LoadedModel.precision``), the forward pass runs under ``torch.autocast`` in
the compute dtype, with frozen weights held in it; the trainable weights, their gradients, the
optimizer's state and checkpoints are float32, and logprobs and losses are computed in float32.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import torch
from tinker import types
from tinker.lib.retry_handler import RetryConfig

from debate_core.backends.local import losses, saved_states
from debate_core.backends.local.fast_training import batch_logprobs
from debate_core.backends.local.futures import AwaitableConcurrentFuture, OrderedWorker
from debate_core.backends.local.models.decoder_weights import supports
from debate_core.backends.local.models.loading import LoadedModel, trainable_parameters
from debate_core.backends.local.models.tokenizer import token_byte_table
from debate_core.backends.local.options import LocalBackendOptions
from debate_core.backends.local.prefix_groups import PrefixGroup, group_by_prefix
from debate_core.backends.local.sampling.client import LocalSamplingClient
from debate_core.backends.local.sampling.engine import SamplerEngine, SamplerSnapshot
from debate_core.backends.local.sampling.snapshots import core_module, make_snapshot
from debate_core.backends.local.threads import ThreadPlan

CustomLoss = Callable[[list[types.Datum], list[torch.Tensor]], tuple[torch.Tensor, dict[str, float]]]

_client_ids = itertools.count()


class TrainingHost(Protocol):
    """What a training client needs of the service that made it (``LocalServiceClient``): its
    options, its shared sampling engine, where named states go, and sampling clients on saved states."""

    @property
    def settings(self) -> LocalBackendOptions: ...

    @property
    def engine(self) -> SamplerEngine: ...

    @property
    def thread_plan(self) -> ThreadPlan: ...

    def state_path(self, name: str) -> Path: ...

    def create_sampling_client(
        self, model_path: str | None = None, base_model: str | None = None
    ) -> AwaitableConcurrentFuture[LocalSamplingClient]: ...


class LocalTrainingClient:
    """A trainable policy: full fine-tuning or LoRA, AdamW, checkpoints, snapshots for sampling."""

    def __init__(self, service: TrainingHost, loaded: LoadedModel, seed: int) -> None:
        self._service = service
        self._loaded = loaded
        self._seed = seed
        self._parameters = trainable_parameters(loaded.module)
        self._optimizer = torch.optim.AdamW(list(self._parameters.values()), lr=1e-4, foreach=True)
        self._steps = 0
        self._snapshots = 0
        self.model_id = f"local-{next(_client_ids)}"
        self._worker = OrderedWorker(f"debate-local-train-{self.model_id}")
        self._byte_table = token_byte_table(loaded.tokenizer)

    # ------------------------------------------------------------------ facts

    @property
    def module(self) -> torch.nn.Module:
        """The torch module being trained (for tests and tools; not part of the SDK surface)."""
        return self._loaded.module

    @property
    def optimizer_steps(self) -> int:
        return self._steps

    def get_tokenizer(self) -> Any:  # Any: the Hugging Face tokenizer itself (untyped), more than records.Tokenizer
        return self._loaded.tokenizer

    def get_info(self) -> types.GetInfoResponse:
        mode = self._loaded.mode
        return types.GetInfoResponse(
            model_data=types.ModelData(arch=type(self._core).__name__, model_name=self._loaded.base_model),
            model_id=self.model_id,
            is_lora=not mode.full,
            lora_rank=mode.lora_rank or None,
            model_name=self._loaded.base_model,
        )

    @property
    def _core(self) -> torch.nn.Module:
        return core_module(self._loaded.module)

    # ------------------------------------------------------------------ training

    def forward(
        self,
        data: list[types.Datum],
        loss_fn: types.LossFnType,
        loss_fn_config: Mapping[str, float | str] | None = None,
    ) -> AwaitableConcurrentFuture[types.ForwardBackwardOutput]:
        """The loss and per-token logprobs of ``data``, without gradients."""
        return self._worker.submit(lambda: self._run_loss(data, loss_fn, loss_fn_config, backward=False))

    def forward_backward(
        self,
        data: list[types.Datum],
        loss_fn: types.LossFnType,
        loss_fn_config: Mapping[str, float | str] | None = None,
    ) -> AwaitableConcurrentFuture[types.ForwardBackwardOutput]:
        """Add the gradient of ``loss_fn`` summed over ``data`` to the accumulated gradient."""
        return self._worker.submit(lambda: self._run_loss(data, loss_fn, loss_fn_config, backward=True))

    def forward_backward_custom(
        self,
        data: list[types.Datum],
        loss_fn: CustomLoss,
        *,
        loss_type_input: str | None = None,
    ) -> AwaitableConcurrentFuture[types.ForwardBackwardOutput]:
        """Backpropagate ``loss_fn(data, logprobs)``, where ``logprobs[i]`` are datum i's target logprobs."""
        return self._worker.submit(lambda: self._run_custom(data, loss_fn))

    def optim_step(
        self,
        optim_params: types.AdamParams | None = None,
        *,
        adam_params: types.AdamParams | None = None,
    ) -> AwaitableConcurrentFuture[types.OptimStepResponse]:
        """One AdamW step with the accumulated gradient, then clear it."""
        if optim_params is not None and adam_params is not None:
            raise ValueError("Specify optim_params or legacy adam_params, not both")
        params = optim_params if optim_params is not None else adam_params
        if not isinstance(params, types.AdamParams):
            raise TypeError("the local backend's optimizer is AdamW: pass tinker.types.AdamParams")
        return self._worker.submit(lambda: self._step(params))

    # ------------------------------------------------------------------ checkpoints

    def save_state(
        self,
        name: str,
        ttl_seconds: int | None = None,
        overwrite: bool = False,
        user_metadata: dict[str, str] | None = None,
    ) -> AwaitableConcurrentFuture[types.SaveWeightsResponse]:
        """Save weights and optimizer state; ``name`` is a directory under the state directory (or a path)."""
        path = self._service.state_path(name)
        return self._worker.submit(
            lambda: types.SaveWeightsResponse(path=str(self._save(path, True, overwrite, user_metadata)))
        )

    def save_weights_for_sampler(
        self,
        name: str,
        ttl_seconds: int | None = None,
        user_metadata: dict[str, str] | None = None,
    ) -> AwaitableConcurrentFuture[types.SaveWeightsForSamplerResponse]:
        """Save the weights only, for ``create_sampling_client(model_path=...)``."""
        path = self._service.state_path(name)
        return self._worker.submit(
            lambda: types.SaveWeightsForSamplerResponse(path=str(self._save(path, False, True, user_metadata)))
        )

    def load_state(
        self, path: str, weights_access_token: str | None = None
    ) -> AwaitableConcurrentFuture[types.LoadWeightsResponse]:
        """Replace the weights with a checkpoint's; the optimizer state is reset."""
        return self._worker.submit(lambda: self._load(path, with_optimizer=False))

    def load_state_with_optimizer(
        self, path: str, weights_access_token: str | None = None
    ) -> AwaitableConcurrentFuture[types.LoadWeightsResponse]:
        """Replace the weights and the optimizer state with a checkpoint's."""
        return self._worker.submit(lambda: self._load(path, with_optimizer=True))

    # ------------------------------------------------------------------ sampling

    def save_weights_and_get_sampling_client(
        self,
        name: str | None = None,
        retry_config: RetryConfig | None = None,
        record_stability_info: bool = False,
        kind: str = "snapshot",
    ) -> AwaitableConcurrentFuture[LocalSamplingClient]:
        """A sampling client over a snapshot of the current weights (later steps do not change it)."""
        return self._worker.submit(lambda: LocalSamplingClient(self._snapshot(), self._service.engine))

    def create_sampling_client(
        self, model_path: str, retry_config: RetryConfig | None = None, record_stability_info: bool = False
    ) -> AwaitableConcurrentFuture[LocalSamplingClient]:
        """A sampling client over weights saved at ``model_path``."""
        return self._service.create_sampling_client(model_path=model_path)

    def close(self) -> None:
        """Stop the worker thread once queued operations are done."""
        self._worker.close()

    # ------------------------------------------------------------------ on the worker thread

    def _run_loss(
        self,
        data: Sequence[types.Datum],
        loss_fn: str,
        loss_fn_config: Mapping[str, float | str] | None,
        *,
        backward: bool,
    ) -> types.ForwardBackwardOutput:
        clip = losses.check_loss(loss_fn, loss_fn_config)
        if not data:
            raise ValueError("No data provided")
        prepared = [self._prepare(datum, index, loss_fn) for index, datum in enumerate(data)]
        outputs: dict[int, torch.Tensor] = {}
        total = 0.0
        for batch in self._plan(prepared):
            with torch.set_grad_enabled(backward):
                logprobs = self._logprobs(batch, prepared, loss_fn)
                batch_loss = torch.zeros((), device=self.device)
                for i, lp in logprobs.items():
                    batch_loss = batch_loss + losses.datum_loss(loss_fn, lp, prepared[i][1], clip)
                    outputs[i] = lp.detach()
            if backward and batch_loss.requires_grad:
                batch_loss.backward()
            total += float(batch_loss.detach())
        return types.ForwardBackwardOutput(
            loss_fn_output_type="ArrayRecord",
            loss_fn_outputs=[{"logprobs": _tensor_data(outputs[i])} for i in range(len(prepared))],
            metrics={"loss:sum": total},
        )

    def _run_custom(self, data: Sequence[types.Datum], loss_fn: CustomLoss) -> types.ForwardBackwardOutput:
        if not data:
            raise ValueError("No data provided")
        prepared = [self._prepare(datum, index, "cross_entropy") for index, datum in enumerate(data)]
        logprobs: dict[int, torch.Tensor] = {}
        for batch in self._plan(prepared):
            logprobs.update(self._logprobs(batch, prepared, None))
        ordered = [logprobs[i] for i in range(len(prepared))]
        loss, metrics = loss_fn(list(data), ordered)
        loss.backward()
        return types.ForwardBackwardOutput(
            loss_fn_output_type="ArrayRecord",
            loss_fn_outputs=[{"logprobs": _tensor_data(lp.detach())} for lp in ordered],
            metrics={"loss:sum": float(loss.detach()), **{k: float(v) for k, v in metrics.items()}},
        )

    @property
    def device(self) -> torch.device:
        return next(iter(self._parameters.values())).device

    def _prepare(self, datum: types.Datum, index: int, loss_fn: str) -> tuple[list[int], dict[str, torch.Tensor]]:
        """The datum's input tokens and its loss inputs as tensors, checked against each other."""
        try:
            tokens = datum.model_input.to_ints()
        except ValueError as exc:
            raise ValueError(f"datum {index}: the local backend trains on token inputs only: {exc}") from None
        accepted = losses.accepted_inputs(loss_fn)
        unknown = sorted(set(datum.loss_fn_inputs) - set(accepted))
        if unknown:
            raise ValueError(f"datum {index}: loss_fn_inputs {unknown} are not inputs of {loss_fn!r} ({accepted})")
        missing = [key for key in losses.required_inputs(loss_fn) if key not in datum.loss_fn_inputs]
        if missing:
            raise ValueError(f"datum {index}: {loss_fn!r} needs loss_fn_inputs {missing}")
        inputs: dict[str, torch.Tensor] = {}
        for key, data in datum.loss_fn_inputs.items():
            tensor = data.to_torch()
            if tensor.dim() != 1 or tensor.shape[0] != len(tokens):
                raise ValueError(
                    f"datum {index}: loss_fn_inputs[{key!r}] has shape {list(tensor.shape)}; the local backend "
                    f"needs one value per input token, shape [{len(tokens)}]"
                )
            inputs[key] = tensor.to(self.device, torch.long if key == "target_tokens" else torch.float32)
        if not tokens:
            raise ValueError(f"datum {index}: model_input is empty")
        vocab = self._vocab_size
        for name, ids in (("model_input", torch.tensor(tokens)), ("target_tokens", inputs["target_tokens"])):
            if int(ids.min()) < 0 or int(ids.max()) >= vocab:
                raise ValueError(f"datum {index}: {name} holds token ids outside the vocabulary [0, {vocab})")
        return tokens, inputs

    @property
    def _vocab_size(self) -> int:
        embeddings = self._core.get_input_embeddings()
        return int(embeddings.weight.shape[0])

    def _plan(self, prepared: Sequence[tuple[list[int], dict[str, torch.Tensor]]]) -> list[list[PrefixGroup]]:
        """Micro-batches of prefix groups, each under the token budget of one forward pass.

        A group costs its shared prefix once plus each member's own tokens; a group too large
        for one pass is split (each part recomputes the prefix).
        """
        sequences = [tokens for tokens, _ in prepared]
        settings = self._service.settings
        if settings.share_training_prefixes and supports(self._core.config):
            groups = group_by_prefix(sequences, min_shared=32)
        else:
            groups = [PrefixGroup(0, (i,)) for i in range(len(sequences))]
        budget = max(settings.train_tokens_per_batch, 1)
        if not supports(self._core.config):
            budget = min(budget, max(1, (1 << 27) // max(self._vocab_size, 1)))
        batches: list[list[PrefixGroup]] = []
        current: list[PrefixGroup] = []
        used = 0
        for group in sorted(groups, key=lambda g: -max(len(sequences[m]) for m in g.members)):
            members: list[int] = []
            for member in group.members:
                cost = len(sequences[member]) - group.shared + (0 if members else group.shared)
                if used + cost > budget and (current or members):
                    if members:
                        current.append(PrefixGroup(group.shared if len(members) > 1 else 0, tuple(members)))
                    batches.append(current)
                    current, members, used = [], [], 0
                    cost = len(sequences[member])
                members.append(member)
                used += cost
            if members:
                current.append(PrefixGroup(group.shared if len(members) > 1 else 0, tuple(members)))
        if current:
            batches.append(current)
        return batches

    def _logprobs(
        self,
        batch: Sequence[PrefixGroup],
        prepared: Sequence[tuple[list[int], dict[str, torch.Tensor]]],
        loss_fn: str | None,
    ) -> dict[int, torch.Tensor]:
        """Per-position target logprobs of the datums in ``batch`` (a graph only where a loss
        coefficient is non-zero; every position when ``loss_fn`` is ``None``)."""
        sequences = [tokens for tokens, _ in prepared]
        targets = [inputs["target_tokens"] for _, inputs in prepared]
        needs_grad = [
            torch.ones(len(tokens), dtype=torch.bool, device=self.device)
            if loss_fn is None
            else losses.gradient_positions(loss_fn, inputs)
            for tokens, inputs in prepared
        ]
        precision = self._loaded.precision
        with torch.autocast(self.device.type, dtype=precision.compute, enabled=precision.mixed):
            return batch_logprobs(
                self._loaded.module, self._core, batch, sequences, targets, needs_grad, self.device, precision.compute
            )

    def _step(self, params: types.AdamParams) -> types.OptimStepResponse:
        parameters = list(self._parameters.values())
        limit = params.grad_clip_norm if params.grad_clip_norm > 0 else math.inf
        with_grad = [p for p in parameters if p.grad is not None]
        norm = float(torch.nn.utils.clip_grad_norm_(with_grad, limit)) if with_grad else 0.0
        if not math.isfinite(norm):
            # clipping cannot rescue a NaN or infinite gradient: refuse the step, weights unchanged
            self._optimizer.zero_grad(set_to_none=True)
            raise ValueError(f"the gradient norm is {norm}; the optimizer step was not applied")
        for group in self._optimizer.param_groups:
            group["lr"] = params.learning_rate
            group["betas"] = (params.beta1, params.beta2)
            group["eps"] = params.eps
            group["weight_decay"] = params.weight_decay
        self._optimizer.step()
        self._optimizer.zero_grad(set_to_none=True)
        self._steps += 1
        if not all(bool(torch.isfinite(p).all()) for p in parameters):
            raise ValueError(f"optimizer step {self._steps} left non-finite weights")
        return types.OptimStepResponse(
            metrics={"grad_norm:mean": norm, "learning_rate:mean": params.learning_rate, "step:max": self._steps}
        )

    def _snapshot(self) -> SamplerSnapshot:
        self._snapshots += 1
        return make_snapshot(
            self._loaded.module,
            self._loaded.tokenizer,
            byte_table=self._byte_table,
            prefix_cache_mb=self._service.settings.prefix_cache_mb,
            seed=(self._seed * 1_000_003 + self._snapshots) % (1 << 63),
            base_model=self._loaded.base_model,
            threads=self._service.thread_plan,
            dtype=self._loaded.precision.compute,
        )

    def _save(self, path: Path, with_optimizer: bool, overwrite: bool, user_metadata: dict[str, str] | None) -> Path:
        weights = {name: p.detach() for name, p in self._parameters.items()}
        optimizer = self._optimizer_tensors() if with_optimizer else None
        meta = {
            "kind": "state" if with_optimizer else "sampler",
            "base_model": self._loaded.base_model,
            "finetune": self._loaded.mode.to_json(),
            "seed": self._seed,
            "optimizer_steps": self._steps,
            "parameters": sorted(weights),
            "user_metadata": dict(user_metadata or {}),
            "saved_at": time.time(),
        }
        return saved_states.write_state(
            path,
            meta=meta,
            weights=weights,
            optimizer=optimizer,
            tokenizer_json=self._loaded.tokenizer_json,
            overwrite=overwrite,
        )

    def _optimizer_tensors(self) -> dict[str, torch.Tensor]:
        tensors: dict[str, torch.Tensor] = {}
        for name, parameter in self._parameters.items():
            state = self._optimizer.state.get(parameter)
            if not state:
                continue
            tensors[f"exp_avg/{name}"] = state["exp_avg"]
            tensors[f"exp_avg_sq/{name}"] = state["exp_avg_sq"]
            tensors[f"step/{name}"] = torch.as_tensor(state["step"], dtype=torch.float64).reshape(1)
        return tensors

    def _load(self, path: str, *, with_optimizer: bool) -> types.LoadWeightsResponse:
        checkpoint = saved_states.read_state(path, with_optimizer=with_optimizer)
        self.restore(checkpoint, with_optimizer=with_optimizer)
        return types.LoadWeightsResponse(path=str(checkpoint.path), model_id=self.model_id)

    def restore(self, checkpoint: saved_states.SavedState, *, with_optimizer: bool) -> None:
        """Copy a checkpoint's weights (and optimizer state) into this client; checked name by name."""
        expected, saved = set(self._parameters), set(checkpoint.weights)
        if expected != saved:
            missing, extra = sorted(expected - saved)[:5], sorted(saved - expected)[:5]
            raise saved_states.SavedStateError(
                f"{checkpoint.path} does not fit this model: missing {missing}, unexpected {extra} "
                f"(saved for {checkpoint.meta.get('base_model')!r} with {checkpoint.meta.get('finetune')})"
            )
        with torch.no_grad():
            for name, parameter in self._parameters.items():
                value = checkpoint.weights[name]
                if value.shape != parameter.shape:
                    raise saved_states.SavedStateError(
                        f"{checkpoint.path}: {name} has shape {list(value.shape)}, the model {list(parameter.shape)}"
                    )
                parameter.copy_(value.to(parameter.dtype))
        self._optimizer = torch.optim.AdamW(list(self._parameters.values()), lr=1e-4, foreach=True)
        self._optimizer.zero_grad(set_to_none=True)
        self._steps = int(checkpoint.meta.get("optimizer_steps", 0))
        if with_optimizer and checkpoint.optimizer is not None:
            for name, parameter in self._parameters.items():
                if f"exp_avg/{name}" not in checkpoint.optimizer:
                    continue
                self._optimizer.state[parameter] = {
                    "step": checkpoint.optimizer[f"step/{name}"].reshape(()).to(torch.float32),
                    "exp_avg": checkpoint.optimizer[f"exp_avg/{name}"].to(parameter.device, parameter.dtype),
                    "exp_avg_sq": checkpoint.optimizer[f"exp_avg_sq/{name}"].to(parameter.device, parameter.dtype),
                }


def _tensor_data(tensor: torch.Tensor) -> types.TensorData:
    return types.TensorData.from_torch(tensor.to("cpu", torch.float32))
