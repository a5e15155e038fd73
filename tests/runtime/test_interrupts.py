"""Ctrl-C during a command's event loop acts within a second, whichever thread the kernel hands
the signal to (docs/training.md, "A backend that is down": Ctrl-C stops a command that waits on
the backend within a second)."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

from debate_core.runtime.interrupts import run_interruptibly


def _sigint_on_another_thread(after_s: float) -> None:
    """Deliver SIGINT to a thread other than the main one, as the kernel may do with a Ctrl-C
    while a backend call blocks on another thread."""

    def deliver() -> None:
        time.sleep(after_s)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    threading.Thread(target=deliver, daemon=True).start()


def test_a_sigint_taken_by_another_thread_cancels_the_command_at_once() -> None:
    async def waits_long() -> None:
        await asyncio.sleep(20)  # the event loop sleeps in select() all that time

    _sigint_on_another_thread(0.3)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(waits_long())
    assert time.monotonic() - started < 10  # not the 20 s sleep, with room for a loaded machine
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_a_sigint_the_result_comes_back_and_the_handler_is_restored() -> None:
    async def answers() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_interruptibly(answers()) == 42
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_cancellation_not_caused_by_sigint_stays_a_cancellation() -> None:
    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        run_interruptibly(cancelled())
