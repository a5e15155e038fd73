"""Running a command's coroutine so that Ctrl-C acts at once, whichever thread the signal lands on.

``asyncio.run`` turns SIGINT into a cancellation with a plain signal handler, which runs only when
the main thread next runs Python code. The kernel may deliver the signal to any thread that does
not block it; a backend call hanging on another thread (the Tinker SDK's network calls) can take
it, and the event loop then notices nothing until its next timer, up to a minute later in a
backend wait (``runtime/retries.watched``). The loop's own signal handling writes every signal to
the loop's wake-up pipe instead, so the first Ctrl-C cancels the command within a loop turn, and
a second one, with the default handler back, raises ``KeyboardInterrupt`` wherever it lands.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_interruptibly(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, its first SIGINT cancelling ``main`` at once; raises ``KeyboardInterrupt`` then."""
    return asyncio.run(_cancelled_by_sigint(main))


async def _cancelled_by_sigint(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        loop.remove_signal_handler(signal.SIGINT)  # the default handler again: a second Ctrl-C stops at once
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        installed = False
    try:
        return await main
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        if installed and not interrupted:
            with contextlib.suppress(RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)
