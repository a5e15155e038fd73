"""The run's limits checked against the model's context before any model loads (docs/limits.md).

The last turn of a debate is the longest prompt: the history policy shows it some of the
earlier turns, and the model must then sample up to ``debate.max_tokens`` after it. Each shown
turn costs at least one token, so a run whose last turn needs more positions than the model
reads, even with every response empty, can never finish a debate: it is refused here, in
``debate train``, ``run``, ``eval`` and ``preflight``, before the backend loads anything. The
check is a lower bound: a run that passes it may still meet a prompt that outgrows the context
when responses are long (the backend then fails that turn).
"""

from __future__ import annotations

from typing import Any

from debate_core.config import RunConfig
from debate_core.errors import ConfigError
from debate_core.records import ParsedResponse, Turn


def context_length(config: RunConfig) -> int | None:
    """The positions the run's model reads, when the backend can tell without loading it."""
    if config.backend.name != "local":
        return None
    from debate_core.backends.local.models.model_context import context_positions

    return context_positions(config.model.base_model)


def history_entries_at_most(config: RunConfig, registry: Any) -> int:
    """How many earlier turns the history policy shows the last turn of a debate played to
    ``max_rounds`` (every agent answering in order, nobody seeing its own turn twice)."""
    debate = config.debate
    policy = registry.build(
        "history_policy", debate.history_policy.name, debate.history_policy.options, "debate.history_policy.options"
    )
    empty = ParsedResponse()
    total = debate.num_agents * debate.max_rounds
    visible = [
        Turn(
            round=k // debate.num_agents + 1,
            agent=k % debate.num_agents,
            step=k // debate.num_agents,
            turn_index=k,
            visible_turns=k,
            text="",
            response=empty,
        )
        for k in range(total - 1)
    ]
    return len(policy.select(visible, debate.max_rounds))


def check_context(config: RunConfig, registry: Any) -> None:
    """Refuse a run whose longest prompt cannot fit the model's context even with empty responses.

    Raises:
        ConfigError: naming the keys to change and the positions needed and available.
    """
    positions = context_length(config)
    if positions is None:
        return
    debate = config.debate
    if debate.max_tokens >= positions:
        raise ConfigError(
            f"debate.max_tokens: {debate.max_tokens} sampled tokens do not fit after a prompt in the "
            f"{positions} positions of {config.model.base_model}; lower debate.max_tokens (docs/limits.md)"
        )
    entries = history_entries_at_most(config, registry)
    needed = entries + 1 + debate.max_tokens
    if needed > positions:
        raise ConfigError(
            f"the run does not fit the context of {config.model.base_model}: the last turn of a "
            f"{debate.num_agents}-agent, {debate.max_rounds}-round debate shows "
            f"{entries} earlier turns, so its prompt and debate.max_tokens={debate.max_tokens} need at least "
            f"{needed} positions, more than the model's {positions}; lower "
            "debate.num_agents, debate.max_rounds or debate.max_tokens, or choose a history policy that "
            "shows fewer turns (docs/limits.md)"
        )
