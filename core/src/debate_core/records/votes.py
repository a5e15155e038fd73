"""Votes: the valid authored comparisons of a debate, and the counts of the lines that were not.

A comparison becomes a vote under the authorship rules of ``records.authorship`` (stated in
docs/protocol.md#authorship-and-validity). Coordinators apply them when they record a turn; the tally
applies the same function again, so that hand-written transcripts cannot smuggle in an invalid
vote. Turns that broke the output contract contribute no votes (their parse is not trusted).
"""

from __future__ import annotations

import attrs

from debate_core.records.authorship import apply_authorship
from debate_core.records.debate import AuthoredComparison, DebateRecord


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
    """Collect the valid votes of a debate and count the discarded comparison lines.

    The comparisons a turn holds are checked again with :func:`apply_authorship`, the one
    authorship rule, so that a hand-built record cannot smuggle in an invalid vote.
    """
    votes: list[AuthoredComparison] = []
    malformed = self_comparisons = invalid_lines = failed = 0
    for turn in debate.turns:
        if turn.failed:
            failed += 1
            continue
        checked = apply_authorship(turn.comparisons, turn.agent, debate.num_agents)
        malformed += turn.malformed_comparisons + checked.malformed
        self_comparisons += turn.self_comparisons + checked.self_comparisons
        invalid_lines += turn.response.invalid_comparison_lines
        votes.extend(AuthoredComparison(turn.agent, c.a, c.op, c.b, turn.round, turn.turn_index) for c in checked.valid)
    return VoteTally(tuple(votes), malformed, self_comparisons, invalid_lines, failed)


@attrs.frozen
class AgentVotes:
    """The valid votes about one agent over a whole debate."""

    agent: int
    wins: int = 0
    losses: int = 0
    ties: int = 0

    @property
    def votes(self) -> int:
        """Valid comparisons that involve the agent."""
        return self.wins + self.losses + self.ties

    @property
    def win_score(self) -> float:
        """Wins plus half the ties."""
        return self.wins + 0.5 * self.ties


def vote_counts(debate: DebateRecord) -> tuple[AgentVotes, ...]:
    """Wins, losses and ties of every agent from the debate's valid votes (``tally_votes``)."""
    counts = {i: [0, 0, 0] for i in range(debate.num_agents)}
    for vote in tally_votes(debate).votes:
        if vote.op == ">":
            counts[vote.a][0] += 1
            counts[vote.b][1] += 1
        else:
            counts[vote.a][2] += 1
            counts[vote.b][2] += 1
    return tuple(AgentVotes(i, *counts[i]) for i in range(debate.num_agents))
