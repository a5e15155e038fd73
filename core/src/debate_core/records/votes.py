"""Votes: the valid authored comparisons of a debate, and the counts of the lines that were not.

Seed 000 "Pairwise Comparisons as Votes": a comparison ``(u, a, op, b)`` is valid iff
``a, b`` are agent ids, ``a != b`` and ``op`` is ``>`` or ``=``; comparisons naming their
author are dropped (that rule is checked first, so ``Agent u > Agent u`` by ``u`` counts as a
self-comparison). Coordinators apply these rules when they record a turn; the tally
checks them again so that hand-written transcripts cannot smuggle in an invalid vote.
Turns that broke the output contract contribute no votes (their parse is not trusted).
"""

from __future__ import annotations

import attrs

from debate_core.records.debate import AuthoredComparison, DebateRecord


def is_well_formed(vote: AuthoredComparison, num_agents: int) -> bool:
    """True when both ids are agents, they differ, and the operator is ``>`` or ``=``."""
    in_range = 0 <= vote.a < num_agents and 0 <= vote.b < num_agents
    return in_range and vote.a != vote.b and vote.op in (">", "=")


@attrs.frozen
class VoteTally:
    """The valid votes of one debate in commit order, with what was discarded.

    Attributes:
        votes: valid comparisons of non-failed turns, with their author.
        malformed: comparisons dropped for an id out of range, ``a == b`` or a bad operator.
        self_comparisons: comparisons dropped because their author was on either side.
        invalid_lines: lines of comparison sections that were neither ``N/A`` nor a comparison.
        failed_turns: turns that broke the output contract (their comparisons are not counted).
    """

    votes: tuple[AuthoredComparison, ...]
    malformed: int = 0
    self_comparisons: int = 0
    invalid_lines: int = 0
    failed_turns: int = 0

    @property
    def total_votes(self) -> int:
        """The number of valid votes."""
        return len(self.votes)


def tally_votes(debate: DebateRecord) -> VoteTally:
    """Collect the valid votes of a debate and count the discarded comparison lines."""
    votes: list[AuthoredComparison] = []
    malformed = self_comparisons = invalid_lines = failed = 0
    for turn in debate.turns:
        if turn.failed:
            failed += 1
            continue
        malformed += turn.malformed_comparisons
        self_comparisons += turn.self_comparisons
        invalid_lines += turn.response.invalid_comparison_lines
        for vote in turn.votes():
            if vote.author in (vote.a, vote.b):  # the self-comparison rule first, as in apply_authorship
                self_comparisons += 1
            elif not is_well_formed(vote, debate.num_agents):
                malformed += 1
            else:
                votes.append(vote)
    return VoteTally(tuple(votes), malformed, self_comparisons, invalid_lines, failed)
