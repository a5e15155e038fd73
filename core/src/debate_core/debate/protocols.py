"""The built-in turn protocols by name: what a transcript's ``protocol`` says each turn saw, and
the built-in coordinator of a protocol for tests and the test kit."""

from __future__ import annotations

from collections.abc import Callable

from debate_core.debate.coordinators import (
    Coordinator,
    ParallelCoordinator,
    ParallelOptions,
    ParallelTurns,
    SequentialCoordinator,
    SequentialTurns,
    TurnState,
)
from debate_core.debate.runoff_protocol import RunoffTurns

BUILTIN_TURN_STATES: tuple[type[TurnState], ...] = (SequentialTurns, ParallelTurns, RunoffTurns)
"""The turn states of the built-in protocols."""
DEFAULT_PROTOCOL = SequentialTurns.protocol_name
"""The protocol of a debate (or transcript) that names none."""


def visibility_rule(protocol: str) -> Callable[[int, int], int | None] | None:
    """``visible_at`` of the built-in protocol called ``protocol``; ``None`` for any other
    protocol (a third party's coordinator: its transcripts record what each turn saw)."""
    state = next((s for s in BUILTIN_TURN_STATES if s.protocol_name == protocol), None)
    return None if state is None else state.visible_at


def builtin_coordinator(protocol: str, blind_review: bool = False) -> Coordinator:
    """The built-in coordinator of ``protocol`` (``blind_review`` for ``parallel``), for tests and
    the test kit; ``ValueError`` for another protocol."""
    if protocol == SequentialTurns.protocol_name:
        return SequentialCoordinator()
    if protocol == ParallelTurns.protocol_name:
        return ParallelCoordinator(ParallelOptions(blind_review=blind_review))
    names = ", ".join(s.protocol_name for s in BUILTIN_TURN_STATES)
    raise ValueError(f"no built-in coordinator for protocol {protocol!r} (built-in: {names})")
