"""The authorship rules (docs/protocol.md#authorship-and-validity), in the one function that
applies them: a comparison gets its author when the coordinator receives the response, then the
author's self-comparisons and the malformed ones are dropped and counted.

Order: the self-comparison rule first (the author on either side, whatever the other id), then
the validity check (both ids in ``0..N-1``, ``a != b``, ``op`` is ``>`` or ``=``) on what is left.
Coordinators, ``load_transcript`` and ``tally_votes`` all call :func:`apply_authorship`; a turn
whose prompt seated the debate as a smaller one (``Turn.seats``) goes through
:func:`apply_seated_authorship`, the same rules in its seats' ids.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from debate_core.records.debate import Comparison


@attrs.frozen
class CheckedComparisons:
    """The comparisons of one response after the authorship rules."""

    valid: tuple[Comparison, ...] = ()
    self_comparisons: int = 0
    malformed: int = 0


def apply_authorship(comparisons: Iterable[Comparison], author: int, num_agents: int | None) -> CheckedComparisons:
    """Keep the comparisons a reward may count; count the dropped ones.

    Args:
        comparisons: the comparison lines the parser found (ids unchecked).
        author: the agent that wrote them.
        num_agents: the number of agents, for the range check; ``None`` skips the range check
            (``debate parse --author`` without ``--num-agents``).
    """
    valid: list[Comparison] = []
    self_comparisons = malformed = 0
    for c in comparisons:
        if author in (c.a, c.b):
            self_comparisons += 1
        elif c.a == c.b or c.op not in (">", "=") or not _in_range(c.a, num_agents) or not _in_range(c.b, num_agents):
            malformed += 1
        else:
            valid.append(c)
    return CheckedComparisons(tuple(valid), self_comparisons, malformed)


def _in_range(agent: int, num_agents: int | None) -> bool:
    return agent >= 0 and (num_agents is None or agent < num_agents)


def apply_seated_authorship(
    comparisons: Iterable[Comparison], author: int, seats: tuple[int, ...]
) -> CheckedComparisons:
    """The authorship rules for a turn whose prompt seated agent ``seats[i]`` at seat ``i``
    (``Turn.seats``; ``-1`` an empty seat, the author at the seat holding its id): the rules applied
    in seat ids (range ``0..len(seats)-1``, an empty seat out of range too), then each valid
    comparison's seats turned back into the debate's agent ids."""
    checked = apply_authorship(comparisons, seats.index(author), len(seats))
    empty = [c for c in checked.valid if seats[c.a] < 0 or seats[c.b] < 0]
    valid = tuple(Comparison(seats[c.a], c.op, seats[c.b]) for c in checked.valid if c not in empty)
    return attrs.evolve(checked, valid=valid, malformed=checked.malformed + len(empty))
