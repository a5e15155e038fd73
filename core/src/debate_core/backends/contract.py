"""The backend contract: the client surface of the Tinker SDK (0.38) that the trainer uses.

A backend plugin's ``build(options)`` returns a :class:`ServiceClientLike`. Every method
below has the name, parameter names, order and defaults of the SDK method it mirrors
(``tinker.ServiceClient``, ``tinker.TrainingClient``, ``tinker.SamplingClient``), and takes
and returns the SDK's own types (``tinker.types.Datum``, ``ModelInput``, ``SamplingParams``,
``SampleResponse``, ``AdamParams``, ``ForwardBackwardOutput``, ...). Methods return futures
at once: ``await future`` or ``future.result()``. Requests on one training client run in
submission order, which is what lets the trainer pipeline ``forward_backward`` and
``optim_step`` (submit the next before awaiting the current).

The contract lists the leading parameters the trainer passes; a backend may accept the
SDK's further parameters, with the SDK's defaults (``tests/backends`` checks both).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from debate_core.records.prompts import Tokenizer

if TYPE_CHECKING:  # ``tinker.types`` imports torch when it is installed: keep it off the start-up path
    from tinker import types

T_co = TypeVar("T_co", covariant=True)


@runtime_checkable
class APIFutureLike(Protocol[T_co]):
    """A result that is not there yet: ``await`` it in async code, ``result()`` elsewhere."""

    def result(self, timeout: float | None = None) -> T_co: ...

    def __await__(self) -> Generator[object, None, T_co]: ...


@runtime_checkable
class SamplingClientLike(Protocol):
    """A snapshot of the policy's weights that samples (``tinker.SamplingClient``)."""

    def sample(
        self,
        prompt: types.ModelInput,
        num_samples: int,
        sampling_params: types.SamplingParams,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
    ) -> APIFutureLike[types.SampleResponse]: ...

    def compute_logprobs(self, prompt: types.ModelInput) -> APIFutureLike[Sequence[float | None]]: ...

    def get_tokenizer(self) -> Tokenizer: ...


@runtime_checkable
class TrainingClientLike(Protocol):
    """The trainable policy (``tinker.TrainingClient``)."""

    def forward_backward(
        self,
        data: list[types.Datum],
        loss_fn: types.LossFnType,
        loss_fn_config: Mapping[str, float | str] | None = None,
    ) -> APIFutureLike[types.ForwardBackwardOutput]: ...

    def optim_step(
        self,
        optim_params: types.AdamParams | None = None,
        *,
        adam_params: types.AdamParams | None = None,
    ) -> APIFutureLike[types.OptimStepResponse]: ...

    def save_state(self, name: str, ttl_seconds: int | None = None) -> APIFutureLike[types.SaveWeightsResponse]: ...

    def save_weights_for_sampler(
        self, name: str, ttl_seconds: int | None = None
    ) -> APIFutureLike[types.SaveWeightsForSamplerResponse]: ...

    def load_state(self, path: str) -> APIFutureLike[types.LoadWeightsResponse]: ...

    def load_state_with_optimizer(self, path: str) -> APIFutureLike[types.LoadWeightsResponse]: ...

    def save_weights_and_get_sampling_client(self, name: str | None = None) -> APIFutureLike[SamplingClientLike]: ...

    def get_tokenizer(self) -> Tokenizer: ...


@runtime_checkable
class ServiceClientLike(Protocol):
    """The entry point of a backend (``tinker.ServiceClient``)."""

    def create_lora_training_client(
        self,
        base_model: str,
        rank: int = 32,
        seed: int | None = None,
        train_mlp: bool = True,
        train_attn: bool = True,
        train_unembed: bool = True,
    ) -> APIFutureLike[TrainingClientLike]: ...

    def create_training_client_from_state(
        self, path: str, base_model: str | None = None
    ) -> APIFutureLike[TrainingClientLike]: ...

    def create_training_client_from_state_with_optimizer(
        self, path: str, base_model: str | None = None
    ) -> APIFutureLike[TrainingClientLike]: ...

    def create_sampling_client(
        self, model_path: str | None = None, base_model: str | None = None
    ) -> APIFutureLike[SamplingClientLike]: ...


@runtime_checkable
class SupportsStateDirectory(Protocol):
    """Optional, for backends that keep checkpoints on this machine (not part of the SDK).

    The trainer calls ``use_state_directory(run_dir / "checkpoints" / "backend")`` right after
    building the service client, so that ``save_state(name)`` writes inside the run directory
    and a run directory is self-contained. The Tinker service keeps states server-side and does
    not implement this.
    """

    def use_state_directory(self, path: Path) -> None: ...


@runtime_checkable
class SupportsCheckpointTTL(Protocol):
    """Optional: how long the backend keeps periodic checkpoints (not part of the SDK).

    The trainer passes ``ttl_seconds=checkpoint_ttl_seconds`` to ``save_state`` and
    ``save_weights_for_sampler`` for periodic checkpoints, and ``None`` (keep) for the last
    checkpoint of a run and those written on a stop or before a failure exits. A backend without
    this attribute gets ``None`` everywhere.
    """

    @property
    def checkpoint_ttl_seconds(self) -> int | None: ...


@runtime_checkable
class SupportsEnvironment(Protocol):
    """Optional: where the backend computes, for the run directory's ``environment.json`` (not part
    of the SDK; docs/training.md#the-run-directory).

    ``environment()`` returns short facts as strings, e.g. ``{"torch": "2.13.0+cpu",
    "cpu_capability": "AVX512", "threads": "2"}``: what can make two runs of the same run file
    differ (another instruction set rounds differently, docs/local-backend.md#what-is-reproducible).
    """

    def environment(self) -> Mapping[str, str]: ...


@runtime_checkable
class SupportsContextLength(Protocol):
    """Optional: the model's context length, for the trainer's context guard (not part of the SDK).

    ``max_context_length(base_model)`` is the most tokens a prompt plus its sampled tokens may
    hold, or ``None`` when the backend cannot tell (then nothing is checked).
    """

    def max_context_length(self, base_model: str) -> int | None: ...


@runtime_checkable
class SupportsFailedRequests(Protocol):
    """Optional: a backend whose client retries failed requests by itself (not part of the SDK).

    The Tinker SDK sends a request again after a server error, a rate limit, a dropped connection
    or a timeout, without telling its caller. ``on_failed_request(listener)`` has the backend call
    ``listener(failure)`` for each such failed attempt, ``failure`` one line naming the request
    and the service's answer (``"POST /api/v1/optim_step: HTTP 503 Service Unavailable"``); it
    returns a function that stops the calls. The trainer counts them (``backend/retries``) and a
    give-up names the last one.
    """

    def on_failed_request(self, listener: Callable[[str], None]) -> Callable[[], None]: ...


@runtime_checkable
class SupportsServerFailure(Protocol):
    """Optional: a backend that can tell a failing server from a slow one (not part of the SDK).

    ``server_failure()`` returns one line saying why waiting longer will not help (the ``tinker``
    backend: every answer has been a server error for longer than ``server_error_limit_s``), or
    ``None``. A watched wait asks it every second and gives up with that line; a slow server, whose
    answers are not errors, keeps ``training.backend_timeout_s``.
    """

    def server_failure(self) -> str | None: ...


@runtime_checkable
class SupportsSavedLookup(Protocol):
    """Optional: find a save that may have happened (not part of the SDK).

    Before a ``save_state(name)`` or ``save_weights_for_sampler(name)`` is sent again after a
    failure, ``saved_path(training_client, name, kind)`` (``kind``: ``"state"`` or
    ``"sampler"``) returns the backend's path of a save of ``name`` that the training client's
    model already holds, or ``None``: a first attempt that was saved but whose answer was lost is
    taken as it is, never saved twice.
    """

    def saved_path(self, training_client: TrainingClientLike, name: str, kind: str) -> str | None: ...


@runtime_checkable
class RunsInProcess(Protocol):
    """Optional: a backend that computes in this process (not part of the SDK).

    ``runs_in_process = True`` means its calls are this machine's own work, not waits on a
    service: they are neither announced nor given up on (``training.backend_timeout_s`` is for
    services that may be down), since a large model's update on a CPU may rightly take longer.
    """

    runs_in_process: bool


CONTRACT_METHODS: Mapping[str, tuple[str, ...]] = {
    "ServiceClient": (
        "create_lora_training_client",
        "create_training_client_from_state",
        "create_training_client_from_state_with_optimizer",
        "create_sampling_client",
    ),
    "TrainingClient": (
        "forward_backward",
        "optim_step",
        "save_state",
        "load_state",
        "load_state_with_optimizer",
        "save_weights_for_sampler",
        "save_weights_and_get_sampling_client",
        "get_tokenizer",
    ),
    "SamplingClient": ("sample", "compute_logprobs", "get_tokenizer"),
}
"""SDK class name -> the methods of the contract, for the signature checks in the contract test."""

CONTRACT_PROTOCOLS: Mapping[str, type] = {
    "ServiceClient": ServiceClientLike,
    "TrainingClient": TrainingClientLike,
    "SamplingClient": SamplingClientLike,
}
"""SDK class name -> the typing protocol that mirrors it."""
