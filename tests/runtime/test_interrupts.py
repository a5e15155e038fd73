"""Ctrl-C (and SIGTERM) during a command's event loop acts within a second, whichever thread the
kernel hands the signal to (docs/training.md, "A backend that is down": Ctrl-C stops a command that
waits on the backend within a second; "SIGINT / SIGTERM")."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from debate_core.runtime.interrupts import (
    Terminated,
    release_signals,
    run_interruptibly,
    signals_to,
    terminate_like_interrupt,
)


@pytest.fixture(autouse=True)
def python_default_handlers() -> Iterator[None]:
    """Python's own handlers for the stop signals, whatever the process running pytest inherited
    (a background job of a shell script starts with SIGINT ignored)."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


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


def _signal_on_another_thread(signum: signal.Signals, after_s: float) -> None:
    def deliver() -> None:
        time.sleep(after_s)
        signal.pthread_kill(threading.main_thread().ident or 0, signum)

    threading.Thread(target=deliver, daemon=True).start()


def test_a_sigterm_stops_the_command_as_ctrl_c_does_and_says_it_was_sigterm() -> None:
    """docs/training.md, "SIGINT / SIGTERM": a job scheduler's SIGTERM acts as Ctrl-C does."""

    async def waits_long() -> None:
        await asyncio.sleep(20)

    with terminate_like_interrupt():
        _signal_on_another_thread(signal.SIGTERM, 0.3)
        with pytest.raises(Terminated):
            run_interruptibly(waits_long())
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # the command's handler again
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert isinstance(Terminated(), KeyboardInterrupt)  # whatever cleans up after Ctrl-C cleans up after it


def test_outside_a_command_sigterm_raises_terminated_in_the_debate_command() -> None:
    with terminate_like_interrupt(), pytest.raises(Terminated):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at the next bytecode


def test_an_inner_route_takes_the_signals_and_gives_them_back() -> None:
    """A training run routes the signals to its stop request inside the command's routing; after
    the run's block a signal cancels the command again."""
    seen: list[str] = []

    async def main() -> None:
        with signals_to(lambda signum: seen.append(signum.name)):
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(0.5)  # a loop turn delivers it to the inner callback
        assert seen == ["SIGTERM"]
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(20)  # cancelled by the outer route

    with pytest.raises(KeyboardInterrupt) as stopped:
        run_interruptibly(main())
    assert not isinstance(stopped.value, Terminated)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_signal_after_the_first_stops_at_once() -> None:
    """The first signal asks for a stop and releases the signals; the second, even one that already
    waited in the event loop, stops at once (docs/training.md: "A second signal stops at once")."""
    asked: list[str] = []

    async def main() -> None:
        def on_signal(signum: signal.Signals) -> None:
            asked.append(signum.name)
            release_signals()

        with signals_to(on_signal):
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(20)  # never slept through: the second signal stops

    with terminate_like_interrupt(), pytest.raises(Terminated):
        asyncio.run(main())
    assert asked == ["SIGTERM"]
