"""Built-in turn protocols ``sequential``, ``parallel`` and ``runoff`` (docs/protocol.md#turn-protocols)."""

from __future__ import annotations

from debate_core.debate import (
    ParallelCoordinator,
    ParallelOptions,
    RunoffCoordinator,
    RunoffOptions,
    SequentialCoordinator,
)
from debate_core.plugin import CoordinatorSpec, hookimpl


def _build_sequential(_: None) -> SequentialCoordinator:
    return SequentialCoordinator()


@hookimpl
def debate_coordinators() -> list[CoordinatorSpec]:
    return [
        CoordinatorSpec(
            name="sequential",
            description="agents 0..N-1 in turn, each sees every earlier turn",
            build=_build_sequential,
        ),
        CoordinatorSpec(
            name="parallel",
            description="all agents of a round at once against earlier rounds; option blind_review",
            build=ParallelCoordinator,
            options=ParallelOptions,
        ),
        CoordinatorSpec(
            name="runoff",
            description="blind round 1; where answers disagree, other agents judge the two most held",
            build=RunoffCoordinator,
            options=RunoffOptions,
        ),
    ]
