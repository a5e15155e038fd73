"""Futures with the Tinker SDK's surface, and the one-thread worker that keeps a client's
operations in submission order.

Every client method returns a ``tinker`` ``APIFuture`` (``AwaitableConcurrentFuture``):
``await future`` in async code, ``future.result()`` elsewhere, exactly as with the service.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from tinker.lib.public_interfaces.api_future import AwaitableConcurrentFuture

T = TypeVar("T")

__all__ = ["AwaitableConcurrentFuture", "OrderedWorker", "completed", "failed"]


def completed(value: T) -> AwaitableConcurrentFuture[T]:
    """A future that already holds ``value``."""
    future: Future[T] = Future()
    future.set_result(value)
    return AwaitableConcurrentFuture(future)


def failed(error: BaseException) -> AwaitableConcurrentFuture[Any]:
    """A future that already holds ``error``."""
    future: Future[Any] = Future()
    future.set_exception(error)
    return AwaitableConcurrentFuture(future)


class OrderedWorker:
    """One daemon thread that runs submitted calls one at a time, in submission order.

    This is the ordering guarantee of a Tinker training client: ``forward_backward`` then
    ``optim_step`` submitted back to back run in that order, so the caller can submit the
    next request before awaiting the current one (pipelining).
    """

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._closed = False
        self._thread.start()

    def submit(self, call: Callable[[], T]) -> AwaitableConcurrentFuture[T]:
        """Queue ``call``; its result or exception lands in the returned future."""
        future: Future[T] = Future()
        if self._closed:
            future.set_exception(RuntimeError(f"{self._thread.name} is closed"))
        else:
            self._queue.put((call, future))
        return AwaitableConcurrentFuture(future)

    def close(self) -> None:
        """Finish the queued calls, then stop the thread."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            call, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as exc:  # noqa: BLE001 - delivered to the caller through the future
                future.set_exception(exc)
            else:
                future.set_result(result)
