"""The rollout queue against docs/training.md#asynchronous-rollouts: batch ``j`` is sampled by the
weights after ``max(j - k, b)`` RL iterations, ``b`` the last barrier (checkpoint, evaluation,
start) at or before ``j``; a batch more than ``k`` updates stale is never handed to the trainer."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debate_core.records import DebateEpisode
from debate_core.runtime.token_meter import TokenCount
from debate_core.training.kernel.rollouts import SamplingAbandoned
from debate_core.training.rl.rollout_queue import RolloutQueue, Sampled


def schedule(bound: int, barriers: frozenset[int], start: int, total: int) -> dict[int, int]:
    """Which weights sample each batch when the trainer drives the queue as ``rl_iteration`` does:
    at each iteration its own batch starts (when not started ahead), then those ``ahead_of`` allows."""
    queue = RolloutQueue(bound, lambda c: c in barriers or c >= total, asyncio.Semaphore(1))
    sampler: dict[int, int] = {}
    for iteration in range(start, total):
        if iteration not in sampler:
            sampler[iteration] = iteration
        for later in queue.ahead_of(iteration, total):
            assert later not in sampler
            sampler[later] = iteration
            queue._pending[later] = None  # type: ignore[assignment]  # started, as far as ahead_of can tell
    return sampler


@settings(max_examples=200, deadline=None)
@given(
    bound=st.integers(0, 4),
    barriers=st.frozensets(st.integers(1, 12)),
    start=st.integers(0, 6),
    total=st.integers(0, 12),
)
def test_each_batch_is_sampled_by_the_newest_weights_the_bound_and_barriers_allow(
    bound: int, barriers: frozenset[int], start: int, total: int
) -> None:
    sampler = schedule(bound, barriers, start, total)
    assert sorted(sampler) == list(range(start, total))
    for batch, weights in sampler.items():
        last_barrier = max([start, *(c for c in barriers if start < c <= batch)])
        assert weights == max(batch - bound, last_barrier)
        assert 0 <= batch - weights <= bound


def test_a_resume_at_a_barrier_samples_what_the_uninterrupted_run_sampled() -> None:
    barriers = frozenset({4, 8})
    straight = schedule(2, barriers, 0, 12)
    resumed = schedule(2, barriers, 4, 12)
    assert {j: w for j, w in straight.items() if j >= 4} == resumed


def episodes(tag: str) -> list[DebateEpisode]:
    return [tag]  # type: ignore[list-item]  # the queue never looks inside


async def finished(value: list[DebateEpisode]) -> Sampled:
    await asyncio.sleep(0)
    return value, TokenCount(sampled=len(value))


async def never_stops() -> None:
    await asyncio.Event().wait()


def test_a_batch_beyond_the_bound_is_dropped_and_counted_never_returned() -> None:
    async def scenario() -> None:
        queue = RolloutQueue(1, lambda c: False, asyncio.Semaphore(1))
        queue.start(5, 3, finished(episodes("sampled by the weights after 3 iterations")))
        assert await queue.take(5, never_stops) is None
        assert queue.stale_dropped == 1
        queue.start(5, 4, finished(episodes("one update old")))
        taken = await queue.take(5, never_stops)
        assert taken is not None and taken.staleness == 1 and taken.episodes == episodes("one update old")
        assert taken.tokens == TokenCount(sampled=1)
        assert queue.stale_dropped == 1

    asyncio.run(scenario())


def test_a_stop_while_waiting_cancels_every_batch_in_flight() -> None:
    async def scenario() -> None:
        queue = RolloutQueue(2, lambda c: False, asyncio.Semaphore(1))
        hanging = [asyncio.ensure_future(asyncio.Event().wait()) for _ in range(2)]

        async def waits(task: asyncio.Future[object]) -> Sampled:
            await task
            return [], TokenCount()

        queue.start(0, 0, waits(hanging[0]))
        queue.start(1, 0, waits(hanging[1]))
        with pytest.raises(SamplingAbandoned):
            await queue.take(0, lambda: asyncio.sleep(0))
        assert not queue.started(1)
        await asyncio.sleep(0)
        assert all(task.cancelled() for task in hanging)

    asyncio.run(scenario())


def test_a_failure_of_a_batch_sampled_ahead_reaches_the_trainer_when_it_takes_the_batch() -> None:
    async def scenario() -> None:
        queue = RolloutQueue(1, lambda c: False, asyncio.Semaphore(1))

        async def fails() -> Sampled:
            raise RuntimeError("the backend went away")

        queue.start(1, 0, fails())
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="went away"):
            await queue.take(1, never_stops)

    asyncio.run(scenario())


def test_progress_counts_debates_of_a_batch_sampled_ahead_until_its_line_is_shown() -> None:
    progress = RolloutQueue(1, lambda c: False, asyncio.Semaphore(1)).progress
    assert progress.show(0) == (0, 0)
    assert progress.counted(0, 10) is True  # drawn on the line at once
    assert progress.counted(1, 7) is False and progress.counted(1, 5) is False
    assert progress.show(1) == (2, 12)
    assert progress.counted(1, 3) is True
