"""Stop signals: Ctrl-C (SIGINT) and SIGTERM (a job scheduler's or ``docker stop``'s stop) act
alike and at once, whichever thread the kernel hands them to.

``asyncio.run`` turns SIGINT into a cancellation with a plain signal handler, which runs only when
the main thread next runs Python code. The kernel may deliver the signal to any thread that does
not block it; a backend call hanging on another thread (the Tinker SDK's network calls) can take
it, and the event loop then notices nothing until its next timer, up to a minute later in a
backend wait (``runtime/retries.watched``). :func:`signals_to` routes both signals through the
loop's own signal handling instead, which writes every signal to the loop's wake-up pipe: the
first one reaches its callback within a loop turn. The callback releases the signals
(:func:`release_signals`), so a second one, with the handlers of before back, stops at once:
``KeyboardInterrupt`` for SIGINT, :class:`Terminated` for SIGTERM once :func:`terminate_like_interrupt`
made it raise (the ``debate`` command does), wherever it lands.

Routes nest: a training run routes the signals to its stop request (``training/signals.py``)
inside the command's :func:`run_interruptibly`, which gets them back when the run's block ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Iterator
from types import FrameType
from typing import NoReturn, TypeVar

T = TypeVar("T")
_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None
"""A signal's handler as ``signal.getsignal`` returns it: a function, ``SIG_DFL``, ``SIG_IGN`` or ``None``."""

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command: Ctrl-C and a polite kill."""

SignalCallback = Callable[[signal.Signals], None]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises ``KeyboardInterrupt``: whatever cleans up after a Ctrl-C
    (a new run's directory, the run's lock, the backend's session) cleans up after it too."""


def interruption(signum: int) -> KeyboardInterrupt:
    """The exception a stop signal becomes: :class:`Terminated` for SIGTERM, else ``KeyboardInterrupt``."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _raise_terminated(signum: int, frame: FrameType | None) -> NoReturn:
    raise Terminated


@contextlib.contextmanager
def terminate_like_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread as SIGINT raises
    ``KeyboardInterrupt`` (Python's default for SIGTERM is to die without a word). Outside the main
    thread nothing changes."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Routes:
    """Where the stop signals go: the callbacks of the open :func:`signals_to` blocks, innermost
    last (the one called), and the handlers the loop's took over from."""

    def __init__(self) -> None:
        self.callbacks: list[SignalCallback] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.previous: dict[signal.Signals, _Handler] = {}

    def dispatch(self, signum: signal.Signals) -> None:
        if self.loop is None:  # released while this signal waited in the loop: it is a second one
            signal.raise_signal(signum)
        elif self.callbacks:
            self.callbacks[-1](signum)

    def install(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Route the stop signals through ``loop``; False where it cannot (not the main thread)."""
        self.previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        self.loop = loop
        try:
            for sig in STOP_SIGNALS:
                loop.add_signal_handler(sig, self.dispatch, sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            self.release()
            return False
        return True

    def release(self) -> None:
        """Give the stop signals back to the handlers of before (idempotent)."""
        loop, self.loop = self.loop, None
        if loop is None:
            return
        for sig in STOP_SIGNALS:
            with contextlib.suppress(RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
            previous = self.previous.get(sig)
            if previous is not None:
                with contextlib.suppress(ValueError, TypeError):
                    signal.signal(sig, previous)


_ROUTES = _Routes()


@contextlib.contextmanager
def signals_to(callback: SignalCallback) -> Iterator[None]:
    """While the block runs, SIGINT and SIGTERM call ``callback(signal)`` on the running event loop,
    at once whichever thread takes them; after it, an enclosing block's callback gets them again,
    or, outermost, the handlers of before. Outside the main thread nothing changes."""
    if not _ROUTES.callbacks and not _ROUTES.install(asyncio.get_running_loop()):
        yield
        return
    _ROUTES.callbacks.append(callback)
    try:
        yield
    finally:
        _ROUTES.callbacks.remove(callback)
        if not _ROUTES.callbacks:
            _ROUTES.release()


def release_signals() -> None:
    """Give SIGINT and SIGTERM back to the handlers they had before any :func:`signals_to` block, so
    the next one stops the process at once (the callbacks call this on the first signal)."""
    _ROUTES.release()


def run_interruptibly(main: Coroutine[object, None, T]) -> T:
    """``asyncio.run(main)``, its first SIGINT or SIGTERM cancelling ``main`` at once; raises
    ``KeyboardInterrupt`` (SIGINT) or :class:`Terminated` (SIGTERM) then."""
    return asyncio.run(_cancelled_by_signals(main))


async def _cancelled_by_signals(main: Coroutine[object, None, T]) -> T:
    task = asyncio.current_task()
    received: list[signal.Signals] = []

    def on_signal(signum: signal.Signals) -> None:
        received.append(signum)
        release_signals()  # the handlers of before again: a second signal stops at once
        if task is not None:
            task.cancel()

    with signals_to(on_signal):
        try:
            return await main
        except asyncio.CancelledError:
            if received:
                raise interruption(received[0]) from None
            raise
