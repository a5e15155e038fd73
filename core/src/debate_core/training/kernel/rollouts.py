"""Running many debates at once, with a cap on how many are in flight (RL's self-play, the
warm-start's reference debates and evaluation's debates alike)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import attrs

from debate_core.errors import ComponentFailure, DebateError
from debate_core.records import AgentPolicy, DebateEpisode, Problem
from debate_core.training.run_components import DebateRunner


class SamplingAbandoned(Exception):
    """Sampling was abandoned because a stop was requested (no weights changed)."""


@attrs.frozen
class DebateJob:
    """One debate to run: the problem, one policy per agent, its seed and its id."""

    problem: Problem
    policies: tuple[AgentPolicy, ...]
    seed: int
    debate_id: str


def sampled_tokens(episode: DebateEpisode) -> int:
    """Action tokens sampled in a debate."""
    return sum(len(t.action) for traj in episode.trajectories for t in traj.transitions)


async def run_debates(
    runner: DebateRunner,
    jobs: Sequence[DebateJob],
    max_in_flight: int | asyncio.Semaphore,
    on_done: Callable[[DebateEpisode], None] | None = None,
) -> list[DebateEpisode]:
    """Run every job (at most ``max_in_flight`` at a time, or as many as a semaphore shared with
    other batches lets in, in the order they ask); results in job order.

    The first debate that fails cancels the others and raises a ``ComponentFailure`` that
    names the debate and its problem (and keeps the plugin's own message).
    """
    semaphore = max_in_flight if isinstance(max_in_flight, asyncio.Semaphore) else asyncio.Semaphore(max_in_flight)

    async def one(job: DebateJob) -> DebateEpisode:
        async with semaphore:
            try:
                episode = await runner(job.problem, job.policies, seed=job.seed, debate_id=job.debate_id)
            except asyncio.CancelledError:
                raise
            except DebateError as exc:
                raise ComponentFailure(f"debate '{job.debate_id}' (problem '{job.problem.id}'): {exc}") from exc
            except Exception as exc:
                raise ComponentFailure(
                    f"debate '{job.debate_id}' (problem '{job.problem.id}') failed: {type(exc).__name__}: {exc}"
                ) from exc
        if on_done is not None:
            on_done(episode)
        return episode

    tasks = [asyncio.ensure_future(one(job)) for job in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
