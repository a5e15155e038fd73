"""One open connection to a backend: the service client, the policy's training client,
its tokenizer, and the sampling client of the current weights.

Training, evaluation and ``debate run`` all open a backend this way, so every backend plugin
is used through the same calls, each retried as ``runtime.retries`` says.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import attrs

from debate_core.backends.contract import (
    RunsInProcess,
    SamplingClientLike,
    ServiceClientLike,
    SupportsCheckpointTTL,
    SupportsContextLength,
    SupportsFailedRequests,
    SupportsSavedLookup,
    SupportsServerFailure,
    SupportsStateDirectory,
    TrainingClientLike,
)
from debate_core.backends.off_thread import run_off_thread
from debate_core.config.choices import ComponentChoice
from debate_core.config.sections import RunConfig
from debate_core.errors import DebateError, PluginError
from debate_core.plugin import ComponentBuilder
from debate_core.records import Tokenizer
from debate_core.runtime.interrupts import run_interruptibly
from debate_core.runtime.manifests import resolve_state_path
from debate_core.runtime.retries import (
    BackendError,
    RetryingSamplingClient,
    RetryLedger,
    RetryPolicy,
    retry_policy,
    with_retries,
)
from debate_core.runtime.token_meter import TokenMeter

logger = logging.getLogger(__name__)

T = TypeVar("T")


@attrs.frozen
class SavedCheckpoint:
    """The backend's paths of one checkpoint: the training state and the weights for sampling."""

    state: str
    sampler: str


SAMPLER_SUFFIX = "_sampler"
"""Sampler weights are saved as ``<name>_sampler``: a backend that keeps both kinds in one
folder (the local one) never overwrites a training state with them."""


@attrs.define
class BackendSession:
    """An open backend with the policy on it.

    ``training_client`` is ``None`` for sampling-only sessions (``debate run``, ``debate eval``).
    """

    backend_name: str
    base_model: str
    service_client: ServiceClientLike
    training_client: TrainingClientLike | None
    tokenizer: Tokenizer
    retry: RetryPolicy
    _current: SamplingClientLike
    _base: SamplingClientLike | None = None
    checkpoint_ttl_seconds: int | None = None
    """How long the backend keeps periodic checkpoints (``SupportsCheckpointTTL``; ``None``: until deleted)."""
    context_length: int | None = None
    """The model's context in tokens (``SupportsContextLength``; ``None``: unknown, nothing is checked)."""
    _saved: dict[str, SamplingClientLike] = attrs.field(factory=dict)
    tokens: TokenMeter = attrs.field(factory=TokenMeter)
    """The tokens sampled through :meth:`sampler` and trained (``training.kernel.policy_update`` counts those)."""
    _stop_listening: Callable[[], None] | None = None
    """Stops the backend's reports of failed requests (``SupportsFailedRequests``) to ``retry.ledger``."""

    def sampling_client(self) -> SamplingClientLike:
        """The sampling client of the current weights (replaced by :meth:`refresh_sampling_client`)."""
        return self._current

    def sampler(self) -> RetryingSamplingClient:
        """The sampling client of the current weights, retrying transient errors with this session's
        policy; its ``failures`` keep the errors that outlasted their retries."""
        return RetryingSamplingClient(
            self.sampling_client(),
            self.retry,
            self.backend_name,
            context_length=self.context_length,
            meter=self.tokens,
        )

    def require_training_client(self) -> TrainingClientLike:
        """The training client; an error for sampling-only sessions."""
        if self.training_client is None:
            raise BackendError(f"backend '{self.backend_name}': this session was opened for sampling only")
        return self.training_client

    async def call(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """One backend operation with this session's retry policy."""
        return await with_retries(what, call, self.retry, self.backend_name)

    async def refresh_sampling_client(self) -> SamplingClientLike:
        """Snapshot the current weights into a fresh sampling client (after every update):
        sampling clients never pick up later weights by themselves."""
        client = self.require_training_client()

        async def snapshot() -> SamplingClientLike:
            return await client.save_weights_and_get_sampling_client()

        self._current = await self.call("save_weights_and_get_sampling_client", snapshot)
        return self._current

    async def base_sampling_client(self) -> SamplingClientLike:
        """A sampling client of the untrained base model (the fixed opponent in evaluation)."""
        if self._base is None:
            service = self.service_client

            async def create() -> SamplingClientLike:
                return await service.create_sampling_client(base_model=self.base_model)

            self._base = await self.call("create_sampling_client(base_model)", create)
        return self._base

    async def close(self, status: str = "success") -> None:
        """Finish the backend's session: the Tinker service marks it ``status`` (``success``,
        ``errored``, ``interrupted``) and the SDK closes its connections; the local backend stops
        its threads. Backends without ``close`` are left as they are; a failure to close is logged."""
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None
        close = getattr(self.service_client, "close", None)
        if not callable(close):
            return
        try:
            result = close(status)
            while inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            logger.info("backend '%s': closing the session failed: %s", self.backend_name, exc)

    async def saved_sampling_client(
        self, sampler_path: str | None, state_path: str | None = None
    ) -> SamplingClientLike:
        """A sampling client of saved weights (an evaluation opponent, say), opened once per path:
        from the weights saved for sampling, or else from a training state."""
        key = sampler_path or state_path or ""
        if key not in self._saved:
            service = self.service_client
            self._saved[key] = await self.call(
                f"open the saved weights {key}", lambda: open_saved_weights(service, sampler_path, state_path)
            )
        return self._saved[key]

    async def save_state(self, name: str, ttl_seconds: int | None = None) -> str:
        """Save weights and optimizer state; return the backend's path for them."""
        client = self.require_training_client()

        async def save() -> str:
            response = await client.save_state(name, ttl_seconds=ttl_seconds)
            return str(response.path)

        return await self.call(f"save_state({name!r})", self._saved_once(save, client, name, "state"))

    async def save_sampler_weights(self, name: str, ttl_seconds: int | None = None) -> str:
        """Save the weights for sampling (``create_sampling_client(model_path=...)``); return their path."""
        client = self.require_training_client()

        async def save() -> str:
            response = await client.save_weights_for_sampler(name, ttl_seconds=ttl_seconds)
            return str(response.path)

        return await self.call(f"save_weights_for_sampler({name!r})", self._saved_once(save, client, name, "sampler"))

    def _saved_once(
        self, save: Callable[[], Awaitable[str]], client: TrainingClientLike, name: str, kind: str
    ) -> Callable[[], Awaitable[str]]:
        """``save``, retried without saving twice: before an attempt after the first, a backend that
        can look its saves up (``SupportsSavedLookup``) is asked whether the failed attempt saved
        ``name`` after all (its answer lost); then that save is the result."""
        service = self.service_client
        attempts = 0

        async def attempt() -> str:
            nonlocal attempts
            attempts += 1
            if attempts > 1 and isinstance(service, SupportsSavedLookup):
                found = await run_off_thread(lambda: service.saved_path(client, name, kind))
                if found is not None:
                    logger.warning(
                        "backend '%s': %s: the failed attempt saved it after all (%s); not saved again",
                        self.backend_name,
                        name,
                        found,
                    )
                    return found
            return await save()

        return attempt

    async def save_checkpoint(self, name: str, ttl_seconds: int | None = None) -> SavedCheckpoint:
        """The training state as ``name`` and the weights for sampling as ``name + "_sampler"``."""
        state = await self.save_state(name, ttl_seconds)
        sampler = await self.save_sampler_weights(name + SAMPLER_SUFFIX, ttl_seconds)
        return SavedCheckpoint(state, sampler)


async def open_saved_weights(
    service: ServiceClientLike, sampler_path: str | None, state_path: str | None
) -> SamplingClientLike:
    """A sampling client of saved weights: ``create_sampling_client(model_path=sampler_path)``, or,
    for a training state only, a training client loaded from it and snapshotted."""
    if sampler_path is not None:
        return await service.create_sampling_client(model_path=sampler_path)
    if state_path is None:
        raise ValueError("give the weights saved for sampling or a training state")
    loaded = await service.create_training_client_from_state(state_path)
    return await loaded.save_weights_and_get_sampling_client()


def build_service_client(
    choice: ComponentChoice, registry: ComponentBuilder, state_directory: Path | None = None
) -> ServiceClientLike:
    """Build the backend plugin a run file chooses (``[backend]``); errors name the plugin."""
    try:
        service: ServiceClientLike = registry.build("backend", choice.name, choice.options, "backend.options")
    except DebateError:
        raise
    except Exception as exc:
        raise PluginError(f"backend '{choice.name}' could not be started: {type(exc).__name__}: {exc}") from exc
    if state_directory is not None and isinstance(service, SupportsStateDirectory):
        state_directory.mkdir(parents=True, exist_ok=True)
        service.use_state_directory(state_directory)
    return service


async def open_session_async(
    config: RunConfig,
    registry: ComponentBuilder,
    *,
    training: bool = True,
    state_path: str | None = None,
    sampler_path: str | None = None,
    with_optimizer: bool = True,
    state_directory: Path | None = None,
    retry: RetryPolicy | None = None,
) -> BackendSession:
    """Open the configured backend and put the policy on it.

    Args:
        config: the ``RunConfig`` (``backend``, ``model`` and ``run.seed`` are used).
        registry: the plugin registry that builds the backend.
        training: create a training client (a LoRA client, or one restored from ``state_path``);
            ``False`` opens a sampling-only session on the base model, ``sampler_path`` or ``state_path``.
        state_path: a path returned by ``save_state`` (or a trainer checkpoint manifest, or a run
            directory: its latest checkpoint) to restore (resume; sampling sessions on a training
            state saved without sampler weights).
        sampler_path: a path returned by ``save_weights_for_sampler``: a sampling-only session opens
            it with ``create_sampling_client`` (``debate eval --checkpoint``, ``debate run --checkpoint``).
        with_optimizer: restore the optimizer state too (resume); ``False`` for weights only (a new run
            from trained weights, ``model.init_from``: the backend is told ``model.base_model``).
        state_directory: where local backends keep saved states (see ``SupportsStateDirectory``).
        retry: retries and give-up time of backend calls; unset: the config's ``training.backend_*``.
    """
    policy = retry or retry_policy(config.training)
    ledger = policy.ledger or RetryLedger()
    policy = attrs.evolve(policy, ledger=ledger)
    if state_path is not None:
        state_path = resolve_state_path(state_path)
    service = build_service_client(config.backend, registry, state_directory)
    if isinstance(service, RunsInProcess) and service.runs_in_process:
        policy = attrs.evolve(policy, timeout_s=None, watched=False)  # its own work, not a wait
    stop_listening = service.on_failed_request(ledger.note) if isinstance(service, SupportsFailedRequests) else None
    if isinstance(service, SupportsServerFailure):
        ledger.server_failure = service.server_failure
    try:
        session = await _open_on(service, config, policy, training, state_path, sampler_path, with_optimizer)
    except BaseException:
        if stop_listening is not None:
            stop_listening()
        raise
    session._stop_listening = stop_listening
    return session


async def _open_on(
    service: ServiceClientLike,
    config: RunConfig,
    policy: RetryPolicy,
    training: bool,
    state_path: str | None,
    sampler_path: str | None,
    with_optimizer: bool,
) -> BackendSession:
    """The session of :func:`open_session_async` on the service client built for it."""
    training_client: TrainingClientLike | None = None
    if training:
        training_client, current = await _open_for_training(service, config, policy, state_path, with_optimizer)
        tokenizer = training_client.get_tokenizer()
    else:
        current = await _open_for_sampling(service, config, policy, state_path, sampler_path)
        tokenizer = current.get_tokenizer()
    ttl = service.checkpoint_ttl_seconds if isinstance(service, SupportsCheckpointTTL) else None
    context = await _read_context_length(service, config.model.base_model, policy, config.backend.name)
    return BackendSession(
        config.backend.name,
        config.model.base_model,
        service,
        training_client,
        tokenizer,
        policy,
        current,
        checkpoint_ttl_seconds=ttl,
        context_length=context,
    )


async def _create_training_client(
    service: ServiceClientLike, config: RunConfig, state_path: str | None, with_optimizer: bool
) -> TrainingClientLike:
    """The policy's training client: a fresh LoRA client of ``model``, or one restored from
    ``state_path`` (with the optimizer to resume, without it to start a new run from trained weights)."""
    model = config.model
    if state_path is None:
        return await service.create_lora_training_client(
            model.base_model,
            rank=model.lora_rank,
            seed=config.run.seed,
            train_mlp=model.train_mlp,
            train_attn=model.train_attn,
            train_unembed=model.train_unembed,
        )
    if with_optimizer:
        return await service.create_training_client_from_state_with_optimizer(state_path)
    # a new run from trained weights (model.init_from): the backend checks they fit the base model
    return await service.create_training_client_from_state(state_path, model.base_model)


async def _open_for_training(
    service: ServiceClientLike,
    config: RunConfig,
    policy: RetryPolicy,
    state_path: str | None,
    with_optimizer: bool,
) -> tuple[TrainingClientLike, SamplingClientLike]:
    """The training client and the sampling client of its first weights, each call retried."""
    name = config.backend.name

    async def create_training() -> TrainingClientLike:
        return await _create_training_client(service, config, state_path, with_optimizer)

    client = await with_retries("create the training client", create_training, policy, name)

    async def first_snapshot() -> SamplingClientLike:
        return await client.save_weights_and_get_sampling_client()

    current = await with_retries("save_weights_and_get_sampling_client", first_snapshot, policy, name)
    return client, current


async def _open_for_sampling(
    service: ServiceClientLike,
    config: RunConfig,
    policy: RetryPolicy,
    state_path: str | None,
    sampler_path: str | None,
) -> SamplingClientLike:
    """The sampling client of a sampling-only session: saved weights when a path is given, else the
    base model; retried."""
    base_model = config.model.base_model

    async def create_sampler() -> SamplingClientLike:
        if sampler_path is not None or state_path is not None:
            return await open_saved_weights(service, sampler_path, state_path)
        return await service.create_sampling_client(base_model=base_model)

    return await with_retries("create_sampling_client", create_sampler, policy, config.backend.name)


async def _read_context_length(
    service: ServiceClientLike, base_model: str, policy: RetryPolicy, name: str
) -> int | None:
    """The model's context length from a backend that tells it (``SupportsContextLength``), read off
    the event loop and retried; ``None`` from one that does not."""
    if not isinstance(service, SupportsContextLength):
        return None
    return await with_retries(
        "read the model's context length",
        lambda: run_off_thread(lambda: service.max_context_length(base_model)),
        policy,
        name,
    )


def open_session(
    config: RunConfig,
    registry: ComponentBuilder,
    *,
    training: bool = True,
    state_path: str | None = None,
    sampler_path: str | None = None,
    with_optimizer: bool = True,
    state_directory: Path | None = None,
    retry: RetryPolicy | None = None,
) -> BackendSession:
    """:func:`open_session_async` for synchronous callers (no event loop may be running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_interruptibly(
            open_session_async(
                config,
                registry,
                training=training,
                state_path=state_path,
                sampler_path=sampler_path,
                with_optimizer=with_optimizer,
                state_directory=state_directory,
                retry=retry,
            )
        )
    raise RuntimeError("open_session() was called inside an event loop; use `await open_session_async(...)`")
