"""History policies (docs/protocol.md#what-an-agent-sees): which earlier turns an agent's prompt
shows, with each field clipped to ``max_chars_per_field``, comparisons and consensus reasons
hidden when blind (the same as the parallel coordinator's ``blind_review``).

``all`` (``history_rounds = -1``) shows every visible turn, ``none`` (``0``) shows nothing,
``last_k`` (``K > 0``) the last K rounds before the current one plus whatever of the
current round the turn protocol lets the agent see (the earlier agents of a sequential
round), so that round-1 bootstrapping works for every K.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from debate_core.records import HistoryEntry, Turn

CLIP_MARKER = " [\u2026]"
"""Appended to a field that was clipped, so the reader knows text is missing."""


def _optional_positive(instance: object, attribute: attrs.Attribute[int | None], value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"'{attribute.name}' must be at least 1 (or left out for no clipping), got {value}")


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ValueError(f"'{attribute.name}' must be at least 1, got {value}")


@attrs.frozen(kw_only=True)
class HistoryOptions:
    """Options every built-in history policy takes."""

    max_chars_per_field: int | None = attrs.field(default=None, validator=_optional_positive)
    """Clip solution, evaluation, comparison and consensus reason to this many characters (unset: no clipping)."""
    blind: bool = False
    """Blind review: hide every other agent's ``<comparison>`` and consensus reason, so agents cannot
    copy each other's judgements (what ``parallel``'s ``blind_review`` hides, under any protocol)."""


@attrs.frozen(kw_only=True)
class LastRoundsOptions(HistoryOptions):
    """Options of ``last_k``."""

    rounds: int = attrs.field(default=1, validator=_positive)
    """K: how many rounds before the current one are shown."""
    count_current_round: bool = False
    """Count the current round as one of the K once any of its turns is visible, as the peer
    recipe's ``history_rounds = K`` does (the last K rounds that hold a response): sequential
    agents 1 and up then see K - 1 earlier rounds, agent 0 still K (docs/protocol.md#what-an-agent-sees)."""


def clip_field(text: str, max_chars: int | None) -> str:
    """The first ``max_chars`` characters of ``text``, marked when something was cut."""
    if max_chars is None or len(text) <= max_chars:
        return text
    return text[:max_chars] + CLIP_MARKER


def history_entry(turn: Turn, max_chars: int | None, blind: bool) -> HistoryEntry:
    """How one earlier turn is shown in a prompt; ``blind`` leaves out its judgements (comparison
    and consensus reason)."""
    r = turn.response
    return HistoryEntry(
        round=turn.round,
        agent=turn.agent,
        solution=clip_field(r.solution, max_chars),
        evaluation=clip_field(r.evaluation, max_chars),
        comparison=None if blind else clip_field(r.comparison, max_chars),
        consensus_reason=None if blind else clip_field(r.consensus_reason, max_chars),
    )


class AllRounds:
    """``all``: every turn the agent may see (``history_rounds = -1``)."""

    def __init__(self, options: HistoryOptions | None = None) -> None:
        self.options = options or HistoryOptions()

    def select(self, visible: Sequence[Turn], current_round: int) -> Sequence[HistoryEntry]:
        """Every visible turn, clipped."""
        o = self.options
        return [history_entry(t, o.max_chars_per_field, o.blind) for t in visible]


class NoHistory:
    """``none``: no earlier turn at all (``history_rounds = 0``); each agent answers alone."""

    def __init__(self, options: HistoryOptions | None = None) -> None:
        self.options = options or HistoryOptions()

    def select(self, visible: Sequence[Turn], current_round: int) -> Sequence[HistoryEntry]:
        """Nothing."""
        return []


class LastRounds:
    """``last_k``: the last K rounds before the current one, plus the visible part of the current round."""

    def __init__(self, options: LastRoundsOptions | None = None) -> None:
        self.options = options or LastRoundsOptions()

    def select(self, visible: Sequence[Turn], current_round: int) -> Sequence[HistoryEntry]:
        """Visible turns of rounds ``current_round - K`` to ``current_round`` (from
        ``current_round - K + 1`` when the current round counts and has a visible turn), clipped."""
        o = self.options
        counts_now = o.count_current_round and any(t.round == current_round for t in visible)
        first = current_round - o.rounds + (1 if counts_now else 0)
        return [history_entry(t, o.max_chars_per_field, o.blind) for t in visible if t.round >= first]
