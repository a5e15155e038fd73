"""Built-in history policies ``all``, ``none`` and ``last_k`` (docs/protocol.md#what-an-agent-sees)."""

from __future__ import annotations

from debate_core.debate import (
    AllRounds,
    HistoryOptions,
    LastRounds,
    LastRoundsOptions,
    NoHistory,
)
from debate_core.plugin import HistoryPolicySpec, hookimpl


@hookimpl
def debate_history_policies() -> list[HistoryPolicySpec]:
    return [
        HistoryPolicySpec(
            name="all",
            description="every earlier turn (history_rounds = -1); options max_chars_per_field, blind",
            build=AllRounds,
            options=HistoryOptions,
        ),
        HistoryPolicySpec(
            name="none",
            description="no history (history_rounds = 0): each agent answers alone",
            build=NoHistory,
            options=HistoryOptions,
        ),
        HistoryPolicySpec(
            name="last_k",
            description="the last `rounds` rounds plus the visible part of the current one; max_chars_per_field, blind",
            build=LastRounds,
            options=LastRoundsOptions,
        ),
    ]
