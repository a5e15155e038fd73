"""Futures with the Tinker SDK's surface, and the one-thread worker that keeps a client's
operations in submission order.

Every client method returns a ``tinker`` ``APIFuture`` (``AwaitableConcurrentFuture``):
``await future`` in async code, ``future.result()`` elsewhere, exactly as with the service.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, ClassVar, Protocol, TypeVar

from tinker.lib.public_interfaces.api_future import AwaitableConcurrentFuture

T = TypeVar("T")

__all__ = ["AwaitableConcurrentFuture", "OrderedWorker", "completed", "failed"]


def completed(value: T) -> AwaitableConcurrentFuture[T]:
    """A future that already holds ``value``."""
    future: Future[T] = Future()
    future.set_result(value)
    return AwaitableConcurrentFuture(future)


def failed(error: BaseException) -> AwaitableConcurrentFuture[T]:
    """A future that already holds ``error``."""
    future: Future[T] = Future()
    future.set_exception(error)
    return AwaitableConcurrentFuture(future)


class _Stoppable(Protocol):
    def close(self) -> None: ...

    def join(self, timeout: float) -> None: ...


_running: weakref.WeakSet[_Stoppable] = weakref.WeakSet()


def stop_at_exit(thread_owner: _Stoppable) -> None:
    """Close and join ``thread_owner`` when the interpreter exits, so that no thread is inside
    torch while the interpreter tears down (that aborts the process)."""
    _running.add(thread_owner)


@atexit.register
def _stop_all() -> None:
    owners = list(_running)
    for owner in owners:
        owner.close()
    for owner in owners:
        owner.join(5.0)


def _prepare_thread() -> None:
    """Flush-to-zero is a per-thread CPU flag: set it on the threads that run the model. So is the
    thread count: a new thread would otherwise take the count some other thread set last (the
    sampler sets its own per call, see ``threads.py``)."""
    import torch

    from debate_core.backends.local.torch_settings import configured_threads

    torch.set_flush_denormal(True)
    torch.set_num_threads(configured_threads())


class OrderedWorker:
    """One daemon thread that runs submitted calls one at a time, in submission order.

    This is the ordering guarantee of a Tinker training client: ``forward_backward`` then
    ``optim_step`` submitted back to back run in that order, so the caller can submit the
    next request before awaiting the current one (pipelining).
    """

    def __init__(self, name: str) -> None:
        # Any: jobs of every result type, each with its own future
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._closed = False
        stop_at_exit(self)
        OrderedWorker._all.add(self)
        self.busy_intervals: deque[tuple[float, float]] = deque(maxlen=1 << 16)
        """``(start, end)`` of the latest calls, ``time.perf_counter`` clock (benchmarks: the model's share)."""
        self._thread.start()

    _all: ClassVar[weakref.WeakSet[OrderedWorker]] = weakref.WeakSet()

    @classmethod
    def instances(cls) -> list[OrderedWorker]:
        """Every worker still alive in this process (benchmarks read their busy intervals)."""
        return list(cls._all)

    @property
    def name(self) -> str:
        return self._thread.name

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

    def join(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the thread to finish after ``close``."""
        self._thread.join(timeout)

    def _run(self) -> None:
        _prepare_thread()
        while True:
            item = self._queue.get()
            if item is None:
                return
            call, future = item
            if not future.set_running_or_notify_cancel():
                continue
            started = time.perf_counter()
            try:
                result = call()
            except BaseException as exc:
                self.busy_intervals.append((started, time.perf_counter()))
                future.set_exception(exc)
            else:
                self.busy_intervals.append((started, time.perf_counter()))
                future.set_result(result)
