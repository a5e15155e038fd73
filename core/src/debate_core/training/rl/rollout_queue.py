"""Asynchronous off-policy rollouts (docs/training.md#asynchronous-rollouts): the batches that
are being sampled ahead of the trainer.

With ``training.max_steps_off_policy = k`` above 0, batch ``j`` starts sampling as soon as the
weights after ``j - k`` RL iterations exist, from that step's own sampling client, so the debates
of the next iterations run while the trainer scores and updates on the current one. Which weights
sample which batch depends only on the schedule, never on timing: a checkpoint or an evaluation is
a barrier (the batch after it samples from the weights it saved or measured), so a run resumed
from a checkpoint samples what the uninterrupted run sampled. The importance-sampling losses
weigh each token by the sampler's own logprob, which the Datums carry, so an older sampler is
corrected for; a batch more than ``k`` updates older than the weights it would train is never
trained on (:meth:`RolloutQueue.take` drops it and counts it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine

import attrs

from debate_core.records import DebateEpisode
from debate_core.runtime.token_meter import TokenCount
from debate_core.training.kernel.rollouts import SamplingAbandoned

Sampled = tuple[list[DebateEpisode], TokenCount]
"""What a batch's sampling returns: its debates, and the tokens it took."""


@attrs.frozen
class SampledBatch:
    """The debates of RL iteration ``iteration``, sampled by the weights after
    ``sampler_iteration`` RL iterations, and how long that took (``sampling_s``, from the start
    of its sampling to its last debate) and how long the trainer waited for it (``waited_s``)."""

    iteration: int
    sampler_iteration: int
    episodes: list[DebateEpisode]
    tokens: TokenCount
    """What its sampling cost; counted in the run's tokens when the trainer takes the batch, so
    that each step's record holds its own batch's tokens however far ahead it was sampled."""
    sampling_s: float
    waited_s: float

    @property
    def staleness(self) -> int:
        """Updates between the weights that sampled the batch and the weights it trains."""
        return self.iteration - self.sampler_iteration


@attrs.define
class _Pending:
    sampler_iteration: int
    task: asyncio.Task[Sampled]
    started: float
    finished: float | None = None


@attrs.define
class RolloutQueue:
    """The batches sampled ahead, by RL iteration, at most ``bound`` iterations ahead of the weights
    that sample them, never across a barrier (``barrier(c)``: the run checkpoints or evaluates
    after ``c`` iterations, or ends there)."""

    bound: int
    barrier: Callable[[int], bool]
    slots: asyncio.Semaphore
    """The run's ``training.max_debates_in_flight``, shared by every batch: an earlier batch's
    debates take their places first, so sampling ahead never slows the batch the trainer waits for."""
    _pending: dict[int, _Pending] = attrs.field(factory=dict)
    stale_dropped: int = 0
    """Batches dropped because they were older than ``bound`` (counted over the run)."""
    progress: BatchProgress = attrs.field(factory=lambda: BatchProgress())
    """The progress line's count of the batches' finished debates."""

    def ahead_of(self, iteration: int, total: int) -> list[int]:
        """The iterations whose batches may start sampling from the weights after ``iteration``
        RL iterations and have not started: the next ``bound`` ones up to the next barrier."""
        found = []
        for later in range(iteration + 1, min(iteration + self.bound, total - 1) + 1):
            if self.barrier(later):
                break
            if later not in self._pending:
                found.append(later)
        return found

    def start(self, iteration: int, sampler_iteration: int, sampling: Coroutine[object, None, Sampled]) -> None:
        """Begin sampling the batch of ``iteration`` with the weights after ``sampler_iteration``."""
        pending = _Pending(sampler_iteration, asyncio.ensure_future(sampling), time.perf_counter())

        def finished(_: asyncio.Task[Sampled]) -> None:
            pending.finished = time.perf_counter()

        pending.task.add_done_callback(finished)
        self._pending[iteration] = pending

    def started(self, iteration: int) -> bool:
        return iteration in self._pending

    async def take(self, iteration: int, stop: Callable[[], Awaitable[object]]) -> SampledBatch | None:
        """The batch of ``iteration`` once sampled; ``None`` when none was started, or when it is
        more than ``bound`` updates stale (dropped, counted in ``stale_dropped``).

        Raises:
            SamplingAbandoned: ``stop()`` finished first (every batch in flight is cancelled).
            Exception: what the batch's sampling raised.
        """
        pending = self._pending.pop(iteration, None)
        if pending is None:
            return None
        if iteration - pending.sampler_iteration > self.bound:
            self.stale_dropped += 1
            await _cancelled(pending.task)
            return None
        asked = time.perf_counter()
        stopper = asyncio.ensure_future(stop())
        try:
            await asyncio.wait({pending.task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
        if not pending.task.done():
            await _cancelled(pending.task)
            await self.cancel()
            raise SamplingAbandoned
        episodes, tokens = pending.task.result()
        finished = pending.finished if pending.finished is not None else time.perf_counter()
        return SampledBatch(
            iteration,
            pending.sampler_iteration,
            episodes,
            tokens,
            sampling_s=finished - pending.started,
            waited_s=time.perf_counter() - asked,
        )

    async def cancel(self) -> None:
        """Cancel every batch in flight (a stop, a failure, the end of RL) and wait until they are."""
        pending, self._pending = self._pending, {}
        for each in pending.values():
            await _cancelled(each.task)


@attrs.define
class BatchProgress:
    """Which batch's debates the progress line counts, and what the batches sampled ahead have
    finished meanwhile, so that a batch's line starts from its debates already done."""

    shown: int | None = None
    """The iteration whose debates the progress line counts."""
    _done: dict[int, tuple[int, int]] = attrs.field(factory=dict)
    """Debates finished and tokens they sampled, per iteration not yet shown."""

    def counted(self, iteration: int, tokens: int) -> bool:
        """Count a finished debate of ``iteration``: True when the progress line shows that
        iteration (the caller draws it), else kept for :meth:`show`."""
        if iteration == self.shown:
            return True
        debates, sampled = self._done.get(iteration, (0, 0))
        self._done[iteration] = (debates + 1, sampled + tokens)
        return False

    def show(self, iteration: int) -> tuple[int, int]:
        """The progress line now counts ``iteration``: its debates finished so far and their tokens."""
        self.shown = iteration
        return self._done.pop(iteration, (0, 0))


async def _cancelled(task: asyncio.Task[Sampled]) -> None:
    """Cancel ``task`` and wait for it, whatever it raised."""
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
