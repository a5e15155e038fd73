"""The context guard: a prompt plus ``debate.max_tokens`` beyond the model's context stops the run
before the request is sent, with a message naming the debate, the sizes and what to change,
instead of a service error in the middle of a run.

The sampling client wrapper (``runtime.retries.RetryingSamplingClient``) checks every request
against the backend's context length (``BackendSession.context_length``) and raises
:class:`ContextLengthError`; once one request overflowed, later ones fail at once with
:class:`ContextGuardStop`, so the other debates of the batch end quickly. The trainer, evaluation
and ``debate run`` then stop with :func:`context_failure`, which names the debate that overflowed.
"""

from __future__ import annotations

from collections.abc import Sequence

from debate_core.config.sections import RunConfig
from debate_core.errors import DebateError
from debate_core.records import DebateEpisode

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


def check_context(prompt_tokens: int, max_tokens: int | None, context_length: int | None) -> None:
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
