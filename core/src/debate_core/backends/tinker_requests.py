"""The Tinker SDK's failed requests, which it sends again by itself: read from its HTTP client's
log, named in one line each, logged and handed to listeners (``SupportsFailedRequests``).

The SDK (0.38) retries a request that got a server error (5xx), a rate limit (429, waiting
``Retry-After`` when the service gives one of up to 60 s), a conflict (409), a request timeout
(408) or no answer at all (a dropped connection, a timeout) inside its own calls, and says so
only in its ``tinker._base_client`` log at DEBUG level: a caller sees a slow call. Watching that
log is how a run counts the retries (``backend/retries``) and names the service's last answer
when it gives up (``training.backend_timeout_s``).

It also keeps, per request (``POST /api/v1/asample``), how long every answer to it has been a
server error (5xx) with no other answer between (:meth:`SdkRequestWatch.server_errors_for`): a
server that answers a request so past
``backend.options.server_error_limit_s`` ends the run (``SupportsServerFailure``), while one that is
slow (no answer, or "not yet") keeps the configured wait.

The watch lowers that one logger to DEBUG and lets through to the handlers only what they would
have got before (``TINKER_LOG=debug`` still shows everything).
"""

from __future__ import annotations

import contextlib
import http
import logging
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

SDK_LOGGER = "tinker._base_client"
RESPONSE_MESSAGE = 'HTTP Response: %s %s "%i %s" %s'
"""The SDK's log line of every HTTP answer: method, URL, status, reason and headers."""
FAILURE_MESSAGES = ("Encountered httpx.TimeoutException", "Encountered Exception")
"""The SDK's log lines of a request that got no answer (with the exception)."""
RETRIED_STATUS = frozenset({408, 409, 429})
"""Statuses below 500 that the SDK sends again (``is_retryable_status_code``)."""
LOG_EVERY_S = 10.0
"""The same failure of the same request is logged at most once in this many seconds."""

logger = logging.getLogger("debate_core.backends.tinker_backend")


def describe_answer(status: int, reason: str, retry_after: str | None) -> str:
    """``HTTP 503 Service Unavailable``, with the ``Retry-After`` the service asked for."""
    with contextlib.suppress(ValueError):  # a status the standard does not name
        reason = reason or http.HTTPStatus(status).phrase
    waited = f" (Retry-After: {retry_after})" if retry_after else ""
    return f"HTTP {status} {reason}".rstrip() + waited


def describe_exception(error: BaseException) -> str:
    """What a request that got no answer met, in words, with the exception's type and message."""
    name = type(error).__name__
    message = str(error) or "no message"
    if "Timeout" in name:
        return f"no answer in time ({name}: {message})"
    if "Connect" in name:
        return f"could not connect ({name}: {message})"
    return f"the connection ended without an answer ({name}: {message})"


def _request_of(error: BaseException) -> tuple[str, str] | None:
    """(method, path) of the httpx request an exception carries, if it carries one."""
    try:
        request = error.request  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError when no request is set
        return None
    return str(request.method), urlsplit(str(request.url)).path


class SdkRequestWatch(logging.Filter):
    """A filter on the SDK's HTTP client logger that turns its failed attempts into lines."""

    def __init__(self, passes_from: int) -> None:
        super().__init__()
        self.passes_from = passes_from
        self.listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        self._logged: dict[str, float] = {}
        self._server_errors: dict[tuple[str, str], tuple[float, str]] = {}
        """Per server (``host:port``) and request: when its current run of server errors began, and the last."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            failure = self._failure(record)
        except Exception:  # a log line of another form: never let the watch break a request
            failure = None
        if failure is not None:
            self._tell(failure)
        return record.levelno >= self.passes_from

    def _failure(self, record: logging.LogRecord) -> str | None:
        if record.msg == RESPONSE_MESSAGE and isinstance(record.args, tuple) and len(record.args) == 5:
            method, url, status, reason, headers = record.args
            status = int(status)  # type: ignore[call-overload]
            where = urlsplit(str(url))
            asked = f"{method} {where.path}"
            self._answered(where.netloc, asked, status, f"{asked}: {describe_answer(status, str(reason), None)}")
            if (status < 500 and status not in RETRIED_STATUS) or status == 408:  # 408: the service's "not yet"
                return None
            retry_after = headers.get("retry-after") if hasattr(headers, "get") else None
            return f"{method} {urlsplit(str(url)).path}: {describe_answer(status, str(reason), retry_after)}"
        if record.msg in FAILURE_MESSAGES and record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            request = _request_of(error)
            if request is None:
                return None
            return f"{request[0]} {request[1]}: {describe_exception(error)}"
        return None

    def _answered(self, server: str, request: str, status: int, answer: str) -> None:
        """Keep when ``server``'s answers to ``request`` (``POST /api/v1/asample``) began to be server
        errors and the last of them; any other answer to that request ends the run."""
        key = (server, request)
        with self._lock:
            if status < 500:
                self._server_errors.pop(key, None)
                return
            since = self._server_errors.get(key, (time.monotonic(), answer))[0]
            self._server_errors[key] = (since, answer)

    def server_errors_for(self, server: str) -> tuple[float, str] | None:
        """The longest current run of server errors of one request to ``server`` (``host:port``):
        its seconds and last answer; ``None`` when no request's last answer was one."""
        now = time.monotonic()
        with self._lock:
            runs = [(now - since, last) for (where, _), (since, last) in self._server_errors.items() if where == server]
        return max(runs, default=None)

    def _tell(self, failure: str) -> None:
        with self._lock:
            listeners = list(self.listeners)
            now = time.monotonic()
            quiet = now - self._logged.get(failure, -LOG_EVERY_S) < LOG_EVERY_S
            if not quiet:
                self._logged[failure] = now
        if not quiet:
            logger.warning("backend 'tinker': %s; the Tinker SDK sends the request again", failure)
        for listener in listeners:
            listener(failure)

    def listen(self, listener: Callable[[str], None]) -> Callable[[], None]:
        with self._lock:
            self.listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self.listeners:
                    self.listeners.remove(listener)

        return stop


_watch: SdkRequestWatch | None = None
_install_lock = threading.Lock()


def sdk_request_watch() -> SdkRequestWatch:
    """The process's watch on the SDK's HTTP client log (installed on first use)."""
    global _watch
    with _install_lock:
        if _watch is None:
            sdk_logger = logging.getLogger(SDK_LOGGER)
            _watch = SdkRequestWatch(passes_from=sdk_logger.getEffectiveLevel())
            sdk_logger.addFilter(_watch)
            sdk_logger.setLevel(logging.DEBUG)
        return _watch
