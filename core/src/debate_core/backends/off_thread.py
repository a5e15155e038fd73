"""Backend calls whose synchronous part may block, run on a daemon thread when awaited.

The Tinker SDK opens its session with the service inside the first ``create_*`` call, before it
returns a future, and its REST calls block the same way: against a service that is down, that
part waits (and retries) indefinitely. Run on the event loop's thread, it would freeze the loop:
no progress line, no give-up time, no Ctrl-C. :class:`OffThread` runs it on a daemon thread
instead (daemon, so a call still hanging when the command gives up never keeps the process
alive), then awaits the future it returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


# Any: the call's value, or None when it raised (then the future gets the error)
def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():  # the awaiting side gave up (cancelled) meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


async def run_off_thread(call: Callable[[], T], name: str = "backend-call") -> T:
    """``call()`` on a daemon thread; cancelling the await leaves the thread to finish on its own."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        try:
            value, error = call(), None
        except BaseException as exc:  # handed to the awaiting side, whatever it is
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(_settle, done, value, error)

    threading.Thread(target=work, name=name, daemon=True).start()
    return await done


class OffThread(Generic[T]):
    """An SDK future-returning call, started on a daemon thread when awaited (``result()`` runs it
    where it is called, as the SDK's own futures do)."""

    # Any: the SDK call's future and its result, whose type only ``then`` knows
    def __init__(self, start: Callable[[], Any], then: Callable[[Any], T] = lambda value: value) -> None:
        self._start = start
        self._then = then
        """Applied to the call's value (the backend wraps the SDK's clients)."""

    def result(self, timeout: float | None = None) -> T:
        return self._then(self._start().result(timeout))

    async def _run(self) -> T:
        started = await run_off_thread(self._start, name="tinker-call")
        value = await started if inspect.isawaitable(started) else started
        return self._then(value)

    def __await__(self) -> Generator[object, None, T]:
        return self._run().__await__()
