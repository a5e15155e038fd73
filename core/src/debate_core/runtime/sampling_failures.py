"""Stopping when sampling failed for good: the debates counted each failure as a failed turn, but
training (or reporting an evaluation) on an outage or on prompts that did not fit would teach the
policy, or tell the user, nothing true."""

from __future__ import annotations

from collections.abc import Sequence

from debate_core.config.sections import RunConfig
from debate_core.records import DebateEpisode
from debate_core.runtime.context_guard import ContextLengthError, context_failure
from debate_core.runtime.retries import BackendError, RetryingSamplingClient


def raise_backend_failure(
    sampler: RetryingSamplingClient, episodes: Sequence[DebateEpisode], config: RunConfig | None = None
) -> None:
    """Stop when sampling failed for good (the debates counted it as failed turns, but training on
    an outage would teach the policy nothing true), or a prompt did not fit the model's context
    (naming the debate, the sizes and, with ``config``, what to change)."""
    if not sampler.failures:
        return
    first = sampler.failures[0]
    if isinstance(first, ContextLengthError):
        raise context_failure(first, episodes, config) from None
    where = next(
        (
            e.record.debate_id
            for e in episodes
            for t in e.record.turns
            if t.response.error is not None and type(first).__name__ in t.response.error.message
        ),
        None,
    )
    suffix = f" (debate '{where}')" if where else ""
    kind = type(first) if isinstance(first, BackendError) else BackendError  # a timeout stays one
    raise kind(f"{first}{suffix}") from first


def raise_evaluation_failure(
    sampler: RetryingSamplingClient, episodes: Sequence[DebateEpisode], config: RunConfig, label: str
) -> None:
    """:func:`raise_backend_failure` for an evaluation, naming it."""
    try:
        raise_backend_failure(sampler, episodes, config)
    except (BackendError, ContextLengthError) as exc:
        exc.args = (f"{exc} (evaluation '{label}')",)
        raise
