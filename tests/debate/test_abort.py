"""Failures end the whole debate at once: no agent is left waiting, no task hangs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from debate_core.debate.episode import DebateEpisode, run_debate
from debate_core.debate.history_policies import AllRounds
from debate_core.errors import ComponentFailure
from debate_core.records import HistoryEntry, Problem, Turn
from debate_core.testing.scripted_debate import scripted_setup

from .helpers import RecordingPolicy, response

SLOW = 30.0
ABORTED_WITHIN = SLOW / 3
"""A debate that stops at once ends far sooner than an agent still sampling for ``SLOW`` seconds;
the margin holds on a loaded machine (well under 1 s on a quiet one)."""


async def timed(coroutine: object) -> tuple[DebateEpisode, float]:
    start = time.perf_counter()
    episode = await asyncio.wait_for(coroutine, timeout=SLOW / 2)  # type: ignore[arg-type]
    return episode, time.perf_counter() - start


def leftover_tasks() -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_an_agent_raising_mid_debate_ends_the_debate_within_a_second(protocol: str) -> None:
    async def main() -> tuple[DebateEpisode, float, set[asyncio.Task[object]]]:
        setup = scripted_setup(3, 3, protocol=protocol)  # type: ignore[arg-type]
        # under parallel rounds agents 0 and 2 are still sampling (for 30 s) when agent 1 raises;
        # under sequential turns they are waiting for their turn
        later = (lambda k: SLOW if k >= 1 else 0.0) if protocol == "parallel" else 0.0
        policies = [
            RecordingPolicy(lambda k: response(), delay=later),
            RecordingPolicy(lambda k: response(), raise_on=1),  # agent 1 raises in round 2
            RecordingPolicy(lambda k: response(), delay=later),
        ]
        episode, seconds = await timed(run_debate(Problem("p", "q"), setup, policies, seed=0))
        return episode, seconds, leftover_tasks()

    episode, seconds, left = asyncio.run(main())
    assert seconds < ABORTED_WITHIN
    assert not left
    record = episode.record
    assert record.aborted
    failed = record.turns[-1]
    assert (failed.round, failed.agent) == (2, 1) and failed.failed
    assert failed.response.error is not None and failed.response.error.code == "turn_failed"
    assert "sampler exploded" in failed.response.error.message
    assert record.abort_reason is not None and "round 2, agent 1" in record.abort_reason
    # the failed turn still has its transition (the prompt, no action) so steps line up with turns
    transitions = episode.trajectories[1].transitions
    assert len(transitions) == 2 and transitions[-1].action == () and transitions[-1].observation
    if protocol == "sequential":
        assert len(record.turns) == 5
    else:
        assert [(t.round, t.agent) for t in record.turns] == [(1, 0), (1, 1), (1, 2), (2, 1)]
        assert failed.visible_turns == 3


class ExplodingHistory(AllRounds):
    def select(self, visible: Sequence[Turn], current_round: int) -> Sequence[HistoryEntry]:
        if current_round == 2:
            raise KeyError("boom")
        return super().select(visible, current_round)


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_a_component_raising_stops_the_debate_and_names_the_component(protocol: str) -> None:
    async def main() -> tuple[float, set[asyncio.Task[object]]]:
        setup = scripted_setup(3, 3, protocol=protocol, history=ExplodingHistory())  # type: ignore[arg-type]
        policies = [RecordingPolicy(lambda k: response()) for _ in range(3)]
        start = time.perf_counter()
        with pytest.raises(ComponentFailure, match="history policy plugin raised KeyError"):
            await asyncio.wait_for(run_debate(Problem("p", "q"), setup, policies, seed=0), timeout=SLOW / 2)
        return time.perf_counter() - start, leftover_tasks()

    seconds, left = asyncio.run(main())
    assert seconds < ABORTED_WITHIN and not left


def test_cancelling_a_debate_cancels_every_agent() -> None:
    async def main() -> set[asyncio.Task[object]]:
        setup = scripted_setup(3, 3, protocol="parallel")
        policies = [RecordingPolicy(lambda k: response(), delay=SLOW) for _ in range(3)]
        task = asyncio.create_task(run_debate(Problem("p", "q"), setup, policies, seed=0))
        await asyncio.sleep(0.05)
        assert all(p.in_flight == 1 for p in policies)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)
        return leftover_tasks()

    assert not asyncio.run(main())


def test_a_policy_breaking_its_contract_is_a_component_failure() -> None:
    from debate_core.records import SampledAction

    class Mismatched(RecordingPolicy):
        async def sample(self, prompt, **kw):  # type: ignore[no-untyped-def]
            action = await super().sample(prompt, **kw)
            return SampledAction(action.tokens, action.logprobs[:-1], action.text)

    async def main() -> None:
        setup = scripted_setup(2, 1)
        policies = [Mismatched(lambda k: response()) for _ in range(2)]
        with pytest.raises(ComponentFailure, match=r"returned \d+ tokens but \d+ logprobs"):
            await asyncio.wait_for(run_debate(Problem("p", "q"), setup, policies, seed=0), timeout=SLOW / 2)
        assert not leftover_tasks()

    asyncio.run(main())
