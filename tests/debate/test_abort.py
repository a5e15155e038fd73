"""Failures end the whole debate at once: no agent is left waiting, no task hangs."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import pytest

from debate_core.debate.history_policies import AllRounds
from debate_core.debate.running import run_debate
from debate_core.errors import ComponentFailure
from debate_core.records import DebateEpisode, HistoryEntry, Problem, Turn
from debate_core.testing.scripted_debate import scripted_setup

from .helpers import RecordingPolicy, response

T = TypeVar("T")

SLOW = 3600.0
"""How long a slow agent samples: a debate that ends before ``HANG_S`` did not wait for it."""
HANG_S = 60.0
"""A debate still running after this long hangs (or waits for a ``SLOW`` agent). The debates here
end in milliseconds, so no time limit of the test decides between stopping at once and waiting."""


async def ended(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result; a debate that has not ended within ``HANG_S`` fails the test."""
    return await asyncio.wait_for(coroutine, timeout=HANG_S)


async def every_agent_sampling(policies: Sequence[RecordingPolicy]) -> None:
    while not all(p.in_flight == 1 for p in policies):
        await asyncio.sleep(0)


def leftover_tasks() -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_an_agent_raising_mid_debate_ends_the_debate_without_waiting_for_the_others(protocol: str) -> None:
    async def main() -> tuple[DebateEpisode, set[asyncio.Task[object]]]:
        setup = scripted_setup(3, 3, protocol=protocol)  # type: ignore[arg-type]
        # under parallel rounds agents 0 and 2 are still sampling (for an hour) when agent 1 raises;
        # under sequential turns they are waiting for their turn
        later = (lambda k: SLOW if k >= 1 else 0.0) if protocol == "parallel" else 0.0
        policies = [
            RecordingPolicy(lambda k: response(), delay=later),
            RecordingPolicy(lambda k: response(), raise_on=1),  # agent 1 raises in round 2
            RecordingPolicy(lambda k: response(), delay=later),
        ]
        episode = await ended(run_debate(Problem("p", "q"), setup, policies, seed=0))
        return episode, leftover_tasks()

    episode, left = asyncio.run(main())
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
    async def main() -> set[asyncio.Task[object]]:
        setup = scripted_setup(3, 3, protocol=protocol, history=ExplodingHistory())  # type: ignore[arg-type]
        policies = [RecordingPolicy(lambda k: response()) for _ in range(3)]
        with pytest.raises(ComponentFailure, match="history policy plugin raised KeyError"):
            await ended(run_debate(Problem("p", "q"), setup, policies, seed=0))
        return leftover_tasks()

    assert not asyncio.run(main())


def test_cancelling_a_debate_cancels_every_agent() -> None:
    async def main() -> set[asyncio.Task[object]]:
        setup = scripted_setup(3, 3, protocol="parallel")
        policies = [RecordingPolicy(lambda k: response(), delay=SLOW) for _ in range(3)]
        task = asyncio.create_task(run_debate(Problem("p", "q"), setup, policies, seed=0))
        await ended(every_agent_sampling(policies))
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
            await ended(run_debate(Problem("p", "q"), setup, policies, seed=0))
        assert not leftover_tasks()

    asyncio.run(main())
