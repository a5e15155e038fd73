"""Graceful stops: SIGINT or SIGTERM ask the trainer to stop at the next safe point.

The first signal sets a flag (and an asyncio event): the trainer finishes the update in
flight (or abandons the sampling in flight, which changes no weights), checkpoints and exits.
The signals are then released (``runtime/interrupts.py``), so a second one stops at once; the run
directory still resumes from its last checkpoint.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from debate_core.runtime.interrupts import release_signals, signals_to


class StopRequest:
    """Whether, and by which signal, a stop was asked for."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._event: asyncio.Event | None = None

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def request(self, signum: int) -> None:
        """Ask for a stop (signal handlers call this; tests may too)."""
        if self.signum is None:
            self.signum = signum
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        """Return once a stop is requested."""
        if self._event is None:
            self._event = asyncio.Event()
        if self.requested:
            self._event.set()
        await self._event.wait()


@contextmanager
def stop_on_signals(stop: StopRequest, announce: bool = True) -> Iterator[None]:
    """Route SIGINT and SIGTERM to ``stop`` while the block runs (main thread only; an enclosing
    ``run_interruptibly`` gets them back after it)."""

    def on_signal(signum: signal.Signals) -> None:
        if announce:
            print(
                f"\ndebate: {signum.name} received: finishing the update in flight, then checkpointing "
                "(send it again to stop at once)",
                file=sys.stderr,
                flush=True,
            )
        stop.request(int(signum))
        release_signals()

    with signals_to(on_signal):
        yield
