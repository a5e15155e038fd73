"""Retrying backend calls: transient errors (the network, timeouts, rate limits, server
errors) are retried with exponential backoff; anything else, or a call that keeps failing,
becomes one ``BackendError`` naming the backend and the operation. Every call is watched
(:func:`watched`): a wait is announced once it lasts, and a call that has not answered within
``training.backend_timeout_s`` (retries included) becomes a :class:`BackendTimeout`.

An address where nothing can answer (``backends.reachability.ServiceUnreachable``: a refused
port, a host name that does not resolve) fails at once, unretried.

Every backend call the trainer makes goes through :func:`with_retries`, the sampling calls of
the debates through :class:`RetryingSamplingClient` (which uses it).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, Generic, TypeVar

import attrs
from tinker import types

from debate_core.backends.contract import APIFutureLike, SamplingClientLike
from debate_core.backends.reachability import ServiceUnreachable
from debate_core.config.sections import TrainingSettings
from debate_core.errors import DebateError
from debate_core.records import Tokenizer
from debate_core.runtime.token_meter import TokenMeter

T = TypeVar("T")
logger = logging.getLogger(__name__)


class BackendError(DebateError):
    """A backend call failed for good (after retries, or with a non-transient error)."""


class BackendTimeout(BackendError):
    """A backend call did not answer within ``training.backend_timeout_s``: the backend is down or
    unreachable, so nothing more is asked of it (no checkpoint is attempted)."""


NOTICE_AFTER_S = 10.0
"""A backend wait is announced once it has lasted this long, ..."""
NOTICE_EVERY_S = 60.0
"""... and again every this many seconds."""
SERVER_CHECK_EVERY_S = 1.0
"""How often a wait asks the backend whether its server is failing (``RetryLedger.server_failure``)."""


class ServerFailing(BackendTimeout):
    """The backend's server answers nothing but errors (``SupportsServerFailure``): waiting for the
    rest of ``training.backend_timeout_s`` would not help."""


@attrs.define
class RetryLedger:
    """The backend requests of one session that failed and were sent again: by
    :func:`with_retries`, or by the backend's own client (the Tinker SDK retries its HTTP requests
    itself; the ``tinker`` backend reports each failed attempt, ``SupportsFailedRequests``).

    The trainer writes the count of each step into its metrics record (``backend/retries``), and a
    give-up names the last failure (the service's answer) seen while it waited.
    """

    count: int = 0
    last: str | None = None
    server_failure: Callable[[], str | None] | None = None
    """The backend's reason to give up at once (``SupportsServerFailure``), asked every
    :data:`SERVER_CHECK_EVERY_S` while a call is waited on; ``None``: nothing asked."""
    _taken: int = 0
    _lock: threading.Lock = attrs.field(factory=threading.Lock, repr=False)

    def note(self, failure: str) -> None:
        """One failed attempt that is sent again; ``failure`` names the request and the answer."""
        with self._lock:
            self.count += 1
            self.last = failure

    def take(self) -> int:
        """The failed attempts noted since the last ``take``."""
        with self._lock:
            new, self._taken = self.count - self._taken, self.count
            return new

    def since(self, count: int) -> str | None:
        """The last failure, when any was noted after the ledger stood at ``count``."""
        with self._lock:
            return self.last if self.count > count else None


@attrs.frozen
class RetryPolicy:
    """How often and how patiently a failed backend call is retried."""

    max_attempts: int = 4
    initial_delay_s: float = 1.0
    backoff_factor: float = 2.0
    max_delay_s: float = 30.0
    timeout_s: float | None = None
    """Give up on a call (retries included) after this many seconds; ``None``: never."""
    watched: bool = True
    """Announce long waits and apply ``timeout_s`` (``False`` for backends that run in process)."""
    ledger: RetryLedger | None = attrs.field(default=None, eq=False)
    """Where retries are counted (a session's); ``None``: nowhere."""

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        return float(min(self.max_delay_s, self.initial_delay_s * self.backoff_factor ** (attempt - 1)))


def retry_policy(training: TrainingSettings) -> RetryPolicy:
    """The retry policy a run file sets (``training.backend_retries``, ``training.backend_retry_delay_s``,
    ``training.backend_timeout_s``)."""
    return RetryPolicy(
        max_attempts=training.backend_retries,
        initial_delay_s=training.backend_retry_delay_s,
        timeout_s=training.backend_timeout_s or None,
    )


async def watched(
    what: str,
    call: Awaitable[T],
    timeout_s: float | None,
    backend_name: str = "backend",
    ledger: RetryLedger | None = None,
) -> T:
    """Await ``call``, saying what is waited for once the wait lasts (a log line on stderr after
    :data:`NOTICE_AFTER_S`, then every :data:`NOTICE_EVERY_S`) and giving up after ``timeout_s``.
    A give-up names the last failed attempt ``ledger`` noted during the wait (the service's answer).

    Raises:
        BackendTimeout: no answer within ``timeout_s``; the call is cancelled.
        ServerFailing: the ledger's ``server_failure`` gave a reason to stop; the call is cancelled.
    """
    task = asyncio.ensure_future(call)
    failing = ledger.server_failure if ledger is not None else None
    started = time.monotonic()
    noted = ledger.count if ledger is not None else 0
    notice = NOTICE_AFTER_S
    limit = f"gives up after {timeout_s:g} s" if timeout_s else "no time limit"
    try:
        while True:
            elapsed = time.monotonic() - started
            until = notice if timeout_s is None else min(notice, timeout_s)
            if failing is not None:
                until = min(until, elapsed + SERVER_CHECK_EVERY_S)
            done, _ = await asyncio.wait({task}, timeout=max(until - elapsed, 0.0))
            if done:
                return task.result()
            reason = failing() if failing is not None else None
            if reason is not None:
                raise ServerFailing(f"backend '{backend_name}': {what}: {reason}")
            elapsed = time.monotonic() - started
            if timeout_s is not None and elapsed >= timeout_s:
                raise BackendTimeout(_gave_up(what, elapsed, timeout_s, backend_name, ledger, noted))
            if elapsed >= notice:
                logger.warning(
                    "debate: waiting for backend '%s': %s (%.0f s; %s, training.backend_timeout_s; Ctrl-C stops)",
                    backend_name,
                    what,
                    elapsed,
                    limit,
                )
                notice += NOTICE_EVERY_S
    finally:
        if not task.done():
            task.cancel()


def _gave_up(
    what: str, elapsed: float, timeout_s: float, backend_name: str, ledger: RetryLedger | None, noted: int
) -> str:
    """The give-up line: the call, the time waited, and the service's last answer when a failed
    attempt was noted during the wait (else the question whether the backend is up at all)."""
    last = ledger.since(noted) if ledger is not None else None
    if last is None:
        why = "is the backend reachable and up?"
    else:
        assert ledger is not None
        tries = ledger.count - noted
        why = f"the service's last answer: {last} ({tries} failed attempt{'s' if tries != 1 else ''})"
    return (
        f"backend '{backend_name}': {what}: no answer after {elapsed:.0f} s; gave up "
        f"(training.backend_timeout_s = {timeout_s:g}); {why}"
    )


def is_transient(error: BaseException) -> bool:
    """Errors worth retrying: the network, timeouts, rate limits and server-side failures
    (including a Tinker request that completed as failed in the ``server`` or ``unknown``
    category; ``user`` failures are the request's own fault and are not retried)."""
    if isinstance(error, ConnectionError | TimeoutError | asyncio.TimeoutError):
        return True
    try:
        import tinker
        from tinker.types import RequestErrorCategory
    except ImportError:  # pragma: no cover - tinker is a dependency
        return False
    if isinstance(error, tinker.RequestFailedError):
        return error.category is not RequestErrorCategory.User
    return isinstance(
        error, tinker.APIConnectionError | tinker.RateLimitError | tinker.InternalServerError | tinker.ConflictError
    )


async def with_retries(
    what: str, call: Callable[[], Awaitable[T]], policy: RetryPolicy, backend_name: str = "backend"
) -> T:
    """Run ``call`` until it succeeds, retrying transient errors with backoff, the whole watched
    (:func:`watched`, ``policy.timeout_s``).

    Raises:
        BackendError: naming the backend and the operation, once retries are spent or on a
            non-transient error.
        BackendTimeout: no answer within ``policy.timeout_s``.
    """
    if not policy.watched:
        return await _retried(what, call, policy, backend_name)
    return await watched(
        what, _retried(what, call, policy, backend_name), policy.timeout_s, backend_name, policy.ledger
    )


async def _retried(what: str, call: Callable[[], Awaitable[T]], policy: RetryPolicy, backend_name: str) -> T:
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except asyncio.CancelledError:
            raise
        except ServiceUnreachable as exc:  # nothing can answer there: waiting would not help
            raise BackendError(f"backend '{backend_name}': {what}: {exc}") from exc
        except Exception as exc:
            if not is_transient(exc) or attempt >= policy.max_attempts:
                tries = f" after {attempt} attempts" if attempt > 1 else ""
                raise BackendError(
                    f"backend '{backend_name}': {what} failed{tries}: {type(exc).__name__}: {exc}"
                ) from exc
            delay = policy.delay(attempt)
            if policy.ledger is not None:
                policy.ledger.note(f"{what}: {type(exc).__name__}: {exc}")
            logger.warning("backend '%s': %s failed (%s); retrying in %.1fs", backend_name, what, exc, delay)
            await asyncio.sleep(delay)


class RetryingFuture(Generic[T]):
    """Wraps a sampling call so that awaiting it retries transient backend errors."""

    def __init__(
        self,
        what: str,
        submit: Callable[[], APIFutureLike[T]],
        policy: RetryPolicy,
        backend: str,
        failures: list[DebateError],
        on_result: Callable[[T], None] | None = None,
    ) -> None:
        self._what = what
        self._submit = submit
        self._policy = policy
        self._backend = backend
        self._failures = failures
        self._on_result = on_result
        """Told the call's result once it has one (the token meter counts what it computed)."""

    def _answered(self, result: T) -> T:
        if self._on_result is not None:
            self._on_result(result)
        return result

    async def _run(self) -> T:
        async def attempt() -> T:
            from debate_core.debate.sampling_policy import resolve_future

            result: T = await resolve_future(self._submit())  # Any: the SDK's futures and ours
            return result

        try:
            return self._answered(await with_retries(self._what, attempt, self._policy, self._backend))
        except BackendError as exc:
            self._failures.append(exc)
            raise

    def result(self, timeout: float | None = None) -> T:
        return self._answered(self._submit().result(timeout))

    def __await__(self) -> Generator[object, None, T]:
        return self._run().__await__()


class RetryingSamplingClient:
    """A sampling client whose ``sample`` and ``compute_logprobs`` retry transient errors, and whose
    ``sample`` refuses a prompt plus ``max_tokens`` beyond ``context_length`` before sending it.

    A debate turns a policy's exception into a failed turn; ``failures`` keeps the backend
    errors that outlasted their retries and the context overflows (``runtime.context_guard``),
    so the trainer can stop instead of training on them. Clients that share one ``failures``
    list (a policy and its evaluation opponent) stop together.
    """

    def __init__(
        self,
        client: SamplingClientLike,
        policy: RetryPolicy,
        backend: str,
        *,
        context_length: int | None = None,
        failures: list[DebateError] | None = None,
        meter: TokenMeter | None = None,
    ) -> None:
        self.client = client
        self._policy = policy
        self._backend = backend
        self.context_length = context_length
        self.failures: list[DebateError] = failures if failures is not None else []
        self.meter = meter
        """Counts the prompt and sampled tokens of every answered request (``None``: nothing counts)."""

    def sample(
        self,
        prompt: types.ModelInput,
        num_samples: int,
        sampling_params: types.SamplingParams,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
    ) -> RetryingFuture[types.SampleResponse]:
        self._guard_context(prompt.length, sampling_params.max_tokens)
        return RetryingFuture(
            "sample",
            lambda: self.client.sample(
                prompt, num_samples, sampling_params, include_prompt_logprobs, topk_prompt_logprobs
            ),
            self._policy,
            self._backend,
            self.failures,
            self._counter(prompt.length),
        )

    def _counter(
        self, prompt_tokens: int
    ) -> Callable[[Any], None] | None:  # Any: a sample or logprobs, counted as found
        meter = self.meter
        return None if meter is None else lambda response: meter.sampling_result(prompt_tokens, response)

    def sibling(self, client: SamplingClientLike) -> RetryingSamplingClient:
        """``client`` with this client's retries and context guard, sharing its ``failures`` and meter."""
        twin = copy.copy(self)  # the same policy, backend, context length, failures list and meter
        twin.client = client
        return twin

    def _guard_context(self, prompt_tokens: int, max_tokens: int | None) -> None:
        from debate_core.runtime.context_guard import ContextGuardStop, ContextLengthError, check_prompt_fits

        if any(isinstance(f, ContextLengthError) for f in self.failures):
            raise ContextGuardStop("sampling stopped: another prompt of this batch did not fit the model's context")
        try:
            check_prompt_fits(prompt_tokens, max_tokens, self.context_length)
        except ContextLengthError as exc:
            self.failures.append(exc)
            raise

    def compute_logprobs(self, prompt: types.ModelInput) -> RetryingFuture[Sequence[float | None]]:
        return RetryingFuture(
            "compute_logprobs",
            lambda: self.client.compute_logprobs(prompt),
            self._policy,
            self._backend,
            self.failures,
            self._counter(prompt.length),
        )

    def get_tokenizer(self) -> Tokenizer:
        return self.client.get_tokenizer()
