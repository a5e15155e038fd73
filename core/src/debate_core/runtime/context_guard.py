"""The context guard: a run and its prompts checked against the model's context (docs/limits.md).

Before any model loads, :func:`check_run_fits_context` refuses a run whose last turn can never fit
(``debate train``, ``run``, ``eval``, ``serve``, ``preflight``, ``config check``): that turn shows
the history policy's share of the earlier turns, each at least one token, and then samples up to
``debate.max_tokens``. It is a lower bound: a run that passes may still meet a prompt that outgrows
the context when responses are long, which the per-request check below catches.

A prompt plus ``debate.max_tokens`` beyond the model's context then stops the run before the
request is sent, with a message naming the debate, the sizes and what to change, instead of a
service error in the middle of a run.

The sampling client wrapper (``runtime.retries.RetryingSamplingClient``) checks every request
against the backend's context length (``BackendSession.context_length``) and raises
:class:`ContextLengthError`; once one request overflowed, later ones fail at once with
:class:`ContextGuardStop`, so the other debates of the batch end quickly. The trainer, evaluation
and ``debate run`` then stop with :func:`context_failure`, which names the debate that overflowed.
"""

from __future__ import annotations

from collections.abc import Sequence

from debate_core.config.sections import RunConfig
from debate_core.errors import ConfigError, DebateError
from debate_core.plugin import ComponentBuilder
from debate_core.records import DebateEpisode, ParsedResponse, Turn

CLIPPING_HISTORIES = ("all", "last_k")
"""The built-in history policies that clip fields (``max_chars_per_field``)."""


class ContextLengthError(DebateError):
    """A prompt plus ``max_tokens`` does not fit the model's context."""

    def __init__(self, prompt_tokens: int, max_tokens: int | None, context_length: int, where: str = "") -> None:
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.context_length = context_length
        asked = f" plus debate.max_tokens = {max_tokens}" if max_tokens else ""
        total = prompt_tokens + (max_tokens or 0)
        prefix = f"{where}: " if where else ""
        super().__init__(
            f"{prefix}a prompt of {prompt_tokens} tokens{asked} needs {total} tokens, beyond the model's "
            f"context of {context_length}"
        )


class ContextGuardStop(DebateError):
    """Sampling refused because another request of the same batch overflowed the context."""


def check_prompt_fits(prompt_tokens: int, max_tokens: int | None, context_length: int | None) -> None:
    """Raise :class:`ContextLengthError` when the request cannot fit (``context_length=None``: no limit)."""
    if context_length is None:
        return
    if prompt_tokens + (max_tokens or 0) > context_length or prompt_tokens >= context_length:
        raise ContextLengthError(prompt_tokens, max_tokens, context_length)


def context_hint(config: RunConfig) -> str:
    """What to change in the run file so that prompts fit: the options of the configured history
    policy that shorten prompts, and ``debate.max_tokens``."""
    history = config.debate.history_policy
    options = dict(history.options or {})
    ways = [f"lower debate.max_tokens (now {config.debate.max_tokens})"]
    if history.name in CLIPPING_HISTORIES:
        clip = options.get("max_chars_per_field")
        ways.append(
            "clip the history with debate.history_policy.options.max_chars_per_field "
            + (f"(now {clip})" if clip else "(now unset: no clipping)")
        )
        if history.name == "last_k":
            ways.append(f"show fewer rounds with debate.history_policy.options.rounds (now {options.get('rounds', 1)})")
        else:
            ways.append('show fewer rounds with debate.history_policy = { name = "last_k", options = { rounds = 1 } }')
    elif history.name != "none":
        ways.append(f"make the history policy '{history.name}' show less")
    return "to fit, " + ", or ".join(ways)


def overflowing_turn(episodes: Sequence[DebateEpisode]) -> str:
    """``debate 'ID' (agent A, round R)`` of the turn whose prompt overflowed, or ``""``."""
    for episode in episodes:
        for turn in episode.record.turns:
            error = turn.response.error
            if error is not None and ContextLengthError.__name__ in error.message:
                return f"debate '{episode.record.debate_id}' (agent {turn.agent}, round {turn.round})"
    return ""


def context_failure(
    error: ContextLengthError, episodes: Sequence[DebateEpisode], config: RunConfig | None
) -> ContextLengthError:
    """The error to stop with: the sizes, the debate that overflowed, and what to change."""
    where = overflowing_turn(episodes)
    failure = ContextLengthError(error.prompt_tokens, error.max_tokens, error.context_length, where)
    if config is not None:
        failure.args = (f"{failure.args[0]}; {context_hint(config)}",)
    return failure


def known_context_length(config: RunConfig) -> int | None:
    """The positions the run's model reads, when the backend can tell without loading it."""
    if config.backend.name != "local":
        return None
    from debate_core.backends.local.models.model_context import context_positions

    return context_positions(config.model.base_model)


def history_entries_at_most(config: RunConfig, registry: ComponentBuilder) -> int:
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


def check_run_fits_context(config: RunConfig, registry: ComponentBuilder) -> None:
    """Refuse a run whose longest prompt cannot fit the model's context even with empty responses.

    Raises:
        ConfigError: naming the keys to change and the positions needed and available.
    """
    positions = known_context_length(config)
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
