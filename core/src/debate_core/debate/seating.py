"""Seated turns: a turn whose prompt seats it in a debate of another size (``Turn.seats``).

The ``runoff`` coordinator runs more agents than the debate the policy learned in, and shows its
judges only two of them: each of its prompts is one of a 3-agent debate (docs/protocol.md#the-runoff).
A candidate answers blind as agent ``k mod 3`` of 3; a judge sits at agent 0 with the two answers
it judges at agents 1 and 2. Everything the prompt names is in seats (the entries' agents, the ids
in the persona and the instructions); the comparisons the judge writes are turned back into the
debate's agents by ``records.apply_seated_authorship``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from debate_core.debate.observations import OwnTurn
from debate_core.records import HistoryEntry

EMPTY_SEAT = -1
"""A seat of the prompt's debate that no agent of the debate holds (``Turn.seats``)."""


@attrs.frozen
class Seating:
    """Seat ``i`` is agent ``seats[i]`` (``EMPTY_SEAT``: nobody); the answering agent holds one."""

    seats: tuple[int, ...]
    agent: int

    @property
    def size(self) -> int:
        """The number of agents the prompt names."""
        return len(self.seats)

    @property
    def own_seat(self) -> int:
        """The answering agent's seat."""
        return self.seats.index(self.agent)

    def entries(self, entries: Sequence[HistoryEntry], indices: Sequence[int]) -> tuple[list[HistoryEntry], list[int]]:
        """The entries of seated agents, each named by its seat, in round then seat order, with
        the commit index of the turn behind each. Their comparison lines are left out: they name
        agents by the debate's ids."""
        seated = [
            (attrs.evolve(entry, agent=self.seats.index(entry.agent), comparison=None), index)
            for entry, index in zip(entries, indices, strict=True)
            if entry.agent in self.seats
        ]
        seated.sort(key=lambda pair: (pair[0].round, pair[0].agent))
        return [entry for entry, _ in seated], [index for _, index in seated]

    @staticmethod
    def own_turns(own_turns: Mapping[int, OwnTurn], blind_instructions: Callable[[int], str]) -> dict[int, OwnTurn]:
        """The agent's earlier turns in its seat: a blind turn (one that saw nothing) with the
        instructions its seat is given in that round (``blind_instructions(round)``), any other as
        it was."""
        return {
            r: attrs.evolve(turn, instructions=blind_instructions(r)) if turn.visible_turns == 0 else turn
            for r, turn in own_turns.items()
        }


def seats_note(turn_agent: int, seats: Sequence[int]) -> str | None:
    """How a seated turn's text names the debate's agents, for readers of a transcript
    (``seated as Agent 0 of 3: its Agent 1 is agent 2, its Agent 2 is agent 0``; a turn seated
    alone: ``seated as Agent 1 of 3``); ``None`` for a turn that named every agent by its own id."""
    others = [
        f"its Agent {seat} is agent {agent}"
        for seat, agent in enumerate(seats)
        if agent not in (turn_agent, EMPTY_SEAT)
    ]
    if not seats:
        return None
    own = f"seated as Agent {list(seats).index(turn_agent)} of {len(seats)}"
    return f"{own}: {', '.join(others)}" if others else own
