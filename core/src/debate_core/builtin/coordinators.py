"""Built-in turn protocols ``sequential`` (seed 000) and ``parallel`` (seed 002 §2.1)."""

from __future__ import annotations

from debate_core.components import CoordinatorSpec
from debate_core.debate import ParallelCoordinator, ParallelOptions, SequentialCoordinator
from debate_core.hookspecs import hookimpl


def _build_sequential(_: None) -> SequentialCoordinator:
    return SequentialCoordinator()


@hookimpl
def debate_coordinators() -> list[CoordinatorSpec]:
    return [
        CoordinatorSpec(
            name="sequential",
            description="agents 0..N-1 in turn, each sees every earlier turn (seed 000)",
            build=_build_sequential,
        ),
        CoordinatorSpec(
            name="parallel",
            description="all agents of a round at once against earlier rounds; option blind_review (seed 002)",
            build=ParallelCoordinator,
            options=ParallelOptions,
        ),
    ]
