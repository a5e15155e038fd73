"""A deterministic backend for tests: the Tinker client contract over a tiny numpy model.

The "model" is a bigram table ``W[previous token, next token]`` over a byte-level vocabulary.
Sampling is scripted: a *responder* proposes candidate completions for the decoded prompt and
the sampler picks one with probability ``softmax(mean token logprob / temperature)`` from a
generator seeded by ``SamplingParams.seed``, so training really changes what is sampled.
The logprobs it reports are the model's own token logprobs, so on-policy data has zero
sample/train KL. ``forward_backward`` computes every Tinker loss exactly on this model and
``optim_step`` is AdamW with ``AdamParams``' meaning, so loop, checkpoint and resume tests
run the trainer's real code paths with real (if tiny) learning, in milliseconds.

Every call is appended to ``ScriptedServiceClient.log``, and ``fail_next`` makes chosen calls
raise, for the pipelining, retry and fault tests.
"""

from __future__ import annotations

import asyncio
import tempfile
import zlib
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt
from tinker import types

from debate_core.files import atomic_file
from debate_core.testing.tokenizer import EOS_TOKEN_ID, VOCAB_SIZE, ByteTokenizer

T = TypeVar("T")

Responder = Callable[[str], Sequence[str]]
"""Decoded prompt text -> candidate completions (deterministic)."""

FloatArray = npt.NDArray[np.float64]


class ScriptedFuture(Generic[T]):
    """A finished result that records when the caller collects it."""

    def __init__(
        self, log: list[tuple[str, str]], label: str, value: T | None = None, error: BaseException | None = None
    ) -> None:
        self._log = log
        self._label = label
        self._value = value
        self._error = error

    def result(self, timeout: float | None = None) -> T:
        self._log.append(("result", self._label))
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    async def _wait(self) -> T:
        await asyncio.sleep(0)
        return self.result()

    def __await__(self) -> Generator[Any, Any, T]:
        return self._wait().__await__()


def _log_softmax(rows: FloatArray) -> FloatArray:
    shifted = rows - rows.max(axis=-1, keepdims=True)
    out: FloatArray = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return out


def base_weights(base_model: str) -> FloatArray:
    """The base model's table: small noise from a stable hash of its name."""
    rng = np.random.default_rng(zlib.crc32(base_model.encode("utf-8")))
    weights: FloatArray = rng.normal(0.0, 0.01, size=(VOCAB_SIZE, VOCAB_SIZE))
    return weights


def token_logprobs(weights: FloatArray, context: Sequence[int], targets: Sequence[int]) -> FloatArray:
    """Logprob of each target given the token before it (``context[i]`` predicts ``targets[i]``)."""
    if not len(targets):
        return np.zeros(0)
    rows = _log_softmax(weights[np.asarray(context, dtype=np.int64)])
    out: FloatArray = rows[np.arange(len(targets)), np.asarray(targets, dtype=np.int64)]
    return out


class ScriptedSamplingClient:
    """A frozen copy of the weights that samples scripted candidates."""

    def __init__(self, service: ScriptedServiceClient, weights: FloatArray) -> None:
        self._service = service
        self._weights = weights.copy()
        self._rng = np.random.default_rng(service.seed)

    def sample(
        self,
        prompt: types.ModelInput,
        num_samples: int,
        sampling_params: types.SamplingParams,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
    ) -> ScriptedFuture[types.SampleResponse]:
        label = self._service.record("sample")
        self._service.sent_sampling.append(sampling_params)
        self._service.sent_prompt_lengths.append(prompt.length)
        error = self._service.take_failure("sample")
        if error is not None:
            return ScriptedFuture(self._service.log, label, error=error)
        tokens = prompt.to_ints()
        text = self._service.tokenizer.decode(tokens, skip_special_tokens=True)
        candidates = [c for c in self._service.responder(text)] or [""]
        sequences = []
        for i in range(num_samples):
            rng = np.random.default_rng([sampling_params.seed, i]) if sampling_params.seed is not None else self._rng
            sequences.append(self._sample_one(tokens, candidates, sampling_params, rng, f"{label}-{i}"))
        prompt_logprobs = None
        if include_prompt_logprobs:
            prompt_logprobs = [None, *token_logprobs(self._weights, tokens[:-1], tokens[1:]).tolist()]
        return ScriptedFuture(
            self._service.log, label, types.SampleResponse(sequences=sequences, _prompt_logprobs_list=prompt_logprobs)
        )

    def _sample_one(
        self,
        prompt: list[int],
        candidates: Sequence[str],
        params: types.SamplingParams,
        rng: np.random.Generator,
        sequence_id: str,
    ) -> types.SampledSequence:
        encoded = [self._encode_with_stop(c, params.stop) for c in candidates]
        last = prompt[-1] if prompt else EOS_TOKEN_ID
        scores = np.array(
            [
                float(token_logprobs(self._weights, [last, *toks[:-1]], toks).mean()) if toks else 0.0
                for toks, _ in encoded
            ]
        )
        if params.temperature <= 0:
            choice = int(np.argmax(scores))
        else:
            probs = np.exp((scores - scores.max()) / params.temperature)
            choice = int(rng.choice(len(candidates), p=probs / probs.sum()))
        tokens, stop_reason = encoded[choice]
        if params.max_tokens is not None and len(tokens) > params.max_tokens:
            tokens, stop_reason = tokens[: params.max_tokens], "length"
        logprobs = token_logprobs(self._weights, [last, *tokens[:-1]], tokens).tolist()
        return types.SampledSequence(
            stop_reason=stop_reason, sequence_id=sequence_id, _tokens_list=tokens, _logprobs_list=logprobs
        )

    def _encode_with_stop(self, text: str, stop: str | Sequence[str] | Sequence[int] | None) -> tuple[list[int], Any]:
        tokenizer = self._service.tokenizer
        if isinstance(stop, str):
            stop = [stop]
        if stop is not None and len(stop) == 0:
            return tokenizer.encode(text), "length"
        if stop and isinstance(stop[0], str):
            cuts = [text.find(s) + len(s) for s in stop if isinstance(s, str) and s in text]
            if cuts:
                return tokenizer.encode(text[: min(cuts)]), "stop"
            return [*tokenizer.encode(text), EOS_TOKEN_ID], "stop"
        stop_id = int(stop[0]) if stop else EOS_TOKEN_ID
        return [*tokenizer.encode(text), stop_id], "stop"

    def compute_logprobs(self, prompt: types.ModelInput) -> ScriptedFuture[Sequence[float | None]]:
        label = self._service.record("compute_logprobs")
        tokens = prompt.to_ints()
        values: list[float | None] = [None, *token_logprobs(self._weights, tokens[:-1], tokens[1:]).tolist()]
        return ScriptedFuture(self._service.log, label, values[: len(tokens)])

    def get_tokenizer(self) -> ByteTokenizer:
        return self._service.tokenizer


class _Adam:
    """AdamW state with ``AdamParams``' meaning (decoupled weight decay, global-norm clipping)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.m: FloatArray = np.zeros(shape)
        self.v: FloatArray = np.zeros(shape)
        self.step = 0

    def apply(self, weights: FloatArray, grad: FloatArray, params: types.AdamParams) -> None:
        if params.grad_clip_norm > 0:
            norm = float(np.sqrt((grad**2).sum()))
            if norm > params.grad_clip_norm:
                grad = grad * (params.grad_clip_norm / norm)
        self.step += 1
        self.m = params.beta1 * self.m + (1 - params.beta1) * grad
        self.v = params.beta2 * self.v + (1 - params.beta2) * grad**2
        m_hat = self.m / (1 - params.beta1**self.step)
        v_hat = self.v / (1 - params.beta2**self.step)
        weights *= 1 - params.learning_rate * params.weight_decay
        weights -= params.learning_rate * m_hat / (np.sqrt(v_hat) + params.eps)


def _loss_coefficients(
    loss_fn: str, logprobs: FloatArray, inputs: Mapping[str, FloatArray], config: Mapping[str, float | str]
) -> tuple[FloatArray, float]:
    """d loss / d logprob per token, and the loss itself, for each Tinker loss (sums over tokens)."""
    if loss_fn == "cross_entropy":
        weights = inputs["weights"]
        return -weights, float(-(logprobs * weights).sum())
    sampler = inputs["logprobs"]
    advantages = inputs["advantages"]
    ratio = np.exp(logprobs - sampler)
    if loss_fn == "importance_sampling":
        return -ratio * advantages, float(-(ratio * advantages).sum())
    low = float(config.get("clip_low_threshold", 0.8))
    high = float(config.get("clip_high_threshold", 1.2))
    clipped = np.clip(ratio, low, high)
    if loss_fn == "ppo":
        unclipped_wins = ratio * advantages <= clipped * advantages
        coef = np.where(unclipped_wins, -ratio * advantages, 0.0)
        return coef, float(-np.minimum(ratio * advantages, clipped * advantages).sum())
    if loss_fn == "cispo":
        return -clipped * advantages, float(-(clipped * logprobs * advantages).sum())
    raise ValueError(f"scripted backend: unsupported loss_fn {loss_fn!r}")


_REQUIRED_INPUTS = {
    "cross_entropy": ("target_tokens", "weights"),
    "importance_sampling": ("target_tokens", "logprobs", "advantages"),
    "ppo": ("target_tokens", "logprobs", "advantages"),
    "cispo": ("target_tokens", "logprobs", "advantages"),
}


class ScriptedTrainingClient:
    """The trainable bigram table with its optimizer and gradient accumulator."""

    def __init__(self, service: ScriptedServiceClient, base_model: str, weights: FloatArray) -> None:
        self._service = service
        self.base_model = base_model
        self.weights = weights.copy()
        self.grad: FloatArray = np.zeros_like(self.weights)
        self.adam = _Adam(self.weights.shape)

    def forward_backward(
        self,
        data: list[types.Datum],
        loss_fn: types.LossFnType,
        loss_fn_config: Mapping[str, float | str] | None = None,
    ) -> ScriptedFuture[types.ForwardBackwardOutput]:
        label = self._service.record("forward_backward", f"{len(data)}:{loss_fn}")
        self._service.sent_batches.append((list(data), str(loss_fn), dict(loss_fn_config or {})))
        error = self._service.take_failure("forward_backward")
        if error is not None:
            return ScriptedFuture(self._service.log, label, error=error)
        if loss_fn not in _REQUIRED_INPUTS:
            return ScriptedFuture(self._service.log, label, error=ValueError(f"unsupported loss_fn {loss_fn!r}"))
        outputs: list[dict[str, types.TensorData]] = []
        total = 0.0
        for index, datum in enumerate(data):
            if not isinstance(datum, types.Datum):
                raise TypeError(f"datum {index} is {type(datum).__name__}, not tinker.types.Datum")
            missing = [k for k in _REQUIRED_INPUTS[loss_fn] if k not in datum.loss_fn_inputs]
            if missing:
                raise ValueError(f"datum {index}: loss {loss_fn} needs loss_fn_inputs {missing}")
            inputs = datum.model_input.to_ints()
            arrays = {k: np.asarray(v.data, dtype=np.float64) for k, v in datum.loss_fn_inputs.items()}
            targets = [int(t) for t in datum.loss_fn_inputs["target_tokens"].data]
            if any(len(a) != len(inputs) for a in arrays.values()):
                raise ValueError(f"datum {index}: loss_fn_inputs and model_input differ in length")
            logprobs = token_logprobs(self.weights, inputs, targets)
            coef, loss = _loss_coefficients(loss_fn, logprobs, arrays, loss_fn_config or {})
            total += loss
            probs = np.exp(_log_softmax(self.weights[np.asarray(inputs, dtype=np.int64)]))
            onehot = np.zeros_like(probs)
            onehot[np.arange(len(targets)), targets] = 1.0
            np.add.at(self.grad, np.asarray(inputs, dtype=np.int64), coef[:, None] * (onehot - probs))
            outputs.append({"logprobs": types.TensorData(data=logprobs.astype(np.float32), dtype="float32")})
        result = types.ForwardBackwardOutput(
            loss_fn_output_type="ArrayRecord", loss_fn_outputs=outputs, metrics={"loss:sum": total}
        )
        return ScriptedFuture(self._service.log, label, result)

    def optim_step(
        self,
        optim_params: types.AdamParams | None = None,
        *,
        adam_params: types.AdamParams | None = None,
    ) -> ScriptedFuture[types.OptimStepResponse]:
        params = optim_params or adam_params or types.AdamParams()
        label = self._service.record("optim_step", params.learning_rate)
        self._service.sent_adam.append(params)
        error = self._service.take_failure("optim_step")
        if error is not None:
            return ScriptedFuture(self._service.log, label, error=error)
        self.adam.apply(self.weights, self.grad, params)
        self.grad = np.zeros_like(self.weights)
        return ScriptedFuture(self._service.log, label, types.OptimStepResponse(metrics={}))

    def save_state(self, name: str, ttl_seconds: int | None = None) -> ScriptedFuture[types.SaveWeightsResponse]:
        label = self._service.record("save_state", name)
        self._service.sent_saves.append(("save_state", name, ttl_seconds))
        error = self._service.take_failure("save_state")
        if error is not None:
            return ScriptedFuture(self._service.log, label, error=error)
        path = self._write(name, with_optimizer=True)
        return ScriptedFuture(self._service.log, label, types.SaveWeightsResponse(path=str(path)))

    def save_weights_for_sampler(
        self, name: str, ttl_seconds: int | None = None
    ) -> ScriptedFuture[types.SaveWeightsForSamplerResponse]:
        label = self._service.record("save_weights_for_sampler", name)
        self._service.sent_saves.append(("save_weights_for_sampler", name, ttl_seconds))
        error = self._service.take_failure("save_weights_for_sampler")
        if error is not None:
            return ScriptedFuture(self._service.log, label, error=error)
        path = self._write(name, with_optimizer=False)
        return ScriptedFuture(self._service.log, label, types.SaveWeightsForSamplerResponse(path=str(path)))

    def _write(self, name: str, *, with_optimizer: bool) -> Path:
        """``<state directory>/<name>.npz``: the weights, and the optimizer state when asked."""
        path = self._service.state_directory / f"{name}.npz"
        arrays: dict[str, Any] = {"weights": self.weights, "base_model": np.array(self.base_model)}
        if with_optimizer:
            arrays.update(m=self.adam.m, v=self.adam.v, step=np.array(self.adam.step))
        with atomic_file(path, "wb") as handle:
            np.savez(handle, **arrays)
        return path

    def _load(self, path: str, with_optimizer: bool) -> None:
        with np.load(path, allow_pickle=False) as state:
            self.weights = state["weights"].copy()
            self.grad = np.zeros_like(self.weights)
            self.adam = _Adam(self.weights.shape)
            if with_optimizer:
                if "m" not in state:
                    raise ValueError(f"{path} holds sampler weights only, not a training state")
                self.adam.m, self.adam.v = state["m"].copy(), state["v"].copy()
                self.adam.step = int(state["step"])

    def load_state(self, path: str) -> ScriptedFuture[types.LoadWeightsResponse]:
        label = self._service.record("load_state", path)
        self._load(path, with_optimizer=False)
        return ScriptedFuture(self._service.log, label, types.LoadWeightsResponse(path=path))

    def load_state_with_optimizer(self, path: str) -> ScriptedFuture[types.LoadWeightsResponse]:
        label = self._service.record("load_state_with_optimizer", path)
        self._load(path, with_optimizer=True)
        return ScriptedFuture(self._service.log, label, types.LoadWeightsResponse(path=path))

    def save_weights_and_get_sampling_client(self, name: str | None = None) -> ScriptedFuture[ScriptedSamplingClient]:
        label = self._service.record("save_weights_and_get_sampling_client")
        error = self._service.take_failure("save_weights_and_get_sampling_client")
        if error is not None:
            return ScriptedFuture(self._service.log, label, error=error)
        return ScriptedFuture(self._service.log, label, ScriptedSamplingClient(self._service, self.weights))

    def get_tokenizer(self) -> ByteTokenizer:
        return self._service.tokenizer


class ScriptedServiceClient:
    """The entry point: creates training and sampling clients over the bigram model."""

    def __init__(self, responder: Responder, seed: int = 0, state_directory: Path | None = None) -> None:
        self.responder = responder
        self.seed = seed
        self.tokenizer = ByteTokenizer()
        self.log: list[tuple[str, str]] = []
        self.fail_next: dict[str, list[BaseException]] = {}
        self._counter = 0
        self._state_directory = state_directory
        self.training_clients: list[ScriptedTrainingClient] = []
        self.sent_batches: list[tuple[list[types.Datum], str, dict[str, float | str]]] = []
        """Every ``forward_backward`` request: the Datums, the loss and its config."""
        self.sent_adam: list[types.AdamParams] = []
        self.sent_sampling: list[types.SamplingParams] = []
        self.sent_prompt_lengths: list[int] = []
        self.sent_saves: list[tuple[str, str, int | None]] = []
        """Every ``save_state`` and ``save_weights_for_sampler``: the method, the name and the TTL."""
        self.on_call: Callable[[str], None] | None = None
        """Called with the method name of every submitted call (tests raise signals from it)."""

    # ------------------------------------------------------------ test hooks
    def record(self, method: str, detail: object = "") -> str:
        """Log a submitted call and return its label (``method#n``)."""
        label = f"{method}#{self._counter}"
        self._counter += 1
        self.log.append(("submit", f"{label}:{detail}" if detail != "" else label))
        if self.on_call is not None:
            self.on_call(method)
        return label

    def take_failure(self, method: str) -> BaseException | None:
        """The next injected error for ``method``, if any."""
        queue = self.fail_next.get(method)
        return queue.pop(0) if queue else None

    @property
    def state_directory(self) -> Path:
        """Where saved states go: the one given, or a temporary folder made when first needed (a
        client made at every test's start and never saving leaves nothing behind in the temp dir)."""
        if self._state_directory is None:
            self._state_directory = Path(tempfile.mkdtemp(prefix="scripted-backend-"))
        return self._state_directory

    @state_directory.setter
    def state_directory(self, path: Path) -> None:
        self._state_directory = Path(path)

    def use_state_directory(self, path: Path) -> None:
        self.state_directory = Path(path)

    # ------------------------------------------------------------ the contract
    def create_lora_training_client(
        self,
        base_model: str,
        rank: int = 32,
        seed: int | None = None,
        train_mlp: bool = True,
        train_attn: bool = True,
        train_unembed: bool = True,
    ) -> ScriptedFuture[ScriptedTrainingClient]:
        label = self.record("create_lora_training_client", base_model)
        error = self.take_failure("create_lora_training_client")
        if error is not None:
            return ScriptedFuture(self.log, label, error=error)
        client = ScriptedTrainingClient(self, base_model, base_weights(base_model))
        self.training_clients.append(client)
        return ScriptedFuture(self.log, label, client)

    def _from_state(self, path: str, base_model: str | None, with_optimizer: bool) -> ScriptedTrainingClient:
        with np.load(path, allow_pickle=False) as state:
            model = base_model or str(state["base_model"])
        client = ScriptedTrainingClient(self, model, base_weights(model))
        client._load(path, with_optimizer)
        self.training_clients.append(client)
        return client

    def create_training_client_from_state(
        self, path: str, base_model: str | None = None
    ) -> ScriptedFuture[ScriptedTrainingClient]:
        label = self.record("create_training_client_from_state", path)
        return ScriptedFuture(self.log, label, self._from_state(path, base_model, with_optimizer=False))

    def create_training_client_from_state_with_optimizer(
        self, path: str, base_model: str | None = None
    ) -> ScriptedFuture[ScriptedTrainingClient]:
        label = self.record("create_training_client_from_state_with_optimizer", path)
        return ScriptedFuture(self.log, label, self._from_state(path, base_model, with_optimizer=True))

    def create_sampling_client(
        self, model_path: str | None = None, base_model: str | None = None
    ) -> ScriptedFuture[ScriptedSamplingClient]:
        label = self.record("create_sampling_client", model_path or base_model or "")
        if model_path is not None:
            with np.load(model_path, allow_pickle=False) as state:
                weights = state["weights"].copy()
        elif base_model is not None:
            weights = base_weights(base_model)
        else:
            return ScriptedFuture(self.log, label, error=ValueError("give model_path or base_model"))
        return ScriptedFuture(self.log, label, ScriptedSamplingClient(self, weights))
