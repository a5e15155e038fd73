"""``length_debias``: wraps another reward and removes its linear dependence on answer length.

Peer judges (models included) tend to prefer longer answers, so a peer reward can be raised by
padding: verbosity reward hacking. Within each debate this wrapper regresses the wrapped
reward on answer length by ordinary least squares and removes the slope:

    beta = sum_k (x_k - mean x)(r_k - mean r) / sum_k (x_k - mean x)^2
    r'_k = r_k - beta * (x_k - mean x)

where ``k`` runs over agents (``x_k``: the agent's mean answer length over its turns) for
the per-agent rewards, and over every ``(agent, step)`` (``x_k``: that step's answer length)
for each listed stream. Afterwards the rewards are uncorrelated with length inside the
debate, their mean is unchanged, and differences in quality that are not explained by
length are kept. With fewer than two answers or all lengths equal nothing changes.
The fit uses one debate only, so it is noisy with few agents; it cannot remove a
non-linear preference for length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import attrs
from attrs import validators as v

from debate_core import (
    GENERATOR_STREAM,
    BuildContext,
    ComponentChoice,
    DebateRecord,
    RewardFunction,
    RewardResult,
    Turn,
)

TEXT_FIELDS = ("solution", "evaluation", "comparison", "consensus_reason", "text")


def _default_inner() -> ComponentChoice:
    return ComponentChoice(name="win_rate")


@attrs.frozen(kw_only=True)
class LengthDebiasOptions:
    """Options of the ``length_debias`` reward."""

    inner: ComponentChoice = attrs.field(factory=_default_inner)
    """The wrapped reward: ``{ name = "v2", options = { lambda_judge = 0.5 } }``."""
    text_field: str = attrs.field(default="solution", validator=v.in_(TEXT_FIELDS))
    """Whose length: a section of the parsed response, or ``text`` for the whole raw response."""
    measure: Literal["words", "chars"] = attrs.field(default="words", validator=v.in_(("words", "chars")))
    streams: tuple[str, ...] = (GENERATOR_STREAM,)
    """Step streams to debias as well (streams not listed are left as they are)."""


def answer_length(turn: Turn, field: str, measure: str) -> float:
    """The length of one turn's answer, in words or characters."""
    text = turn.text if field == "text" else str(getattr(turn.response, field))
    return float(len(text.split()) if measure == "words" else len(text))


def remove_length_slope(rewards: Sequence[float], lengths: Sequence[float]) -> tuple[list[float], float]:
    """``rewards`` minus their least-squares slope on ``lengths`` (centred), and the slope."""
    n = len(rewards)
    if n < 2:
        return list(rewards), 0.0
    mx, mr = sum(lengths) / n, sum(rewards) / n
    sxx = sum((x - mx) ** 2 for x in lengths)
    if sxx <= 1e-12 * max(1.0, mx * mx):
        return list(rewards), 0.0
    beta = sum((x - mx) * (r - mr) for x, r in zip(lengths, rewards, strict=True)) / sxx
    return [r - beta * (x - mx) for x, r in zip(lengths, rewards, strict=True)], beta


class LengthDebiasReward:
    """Another reward with its within-debate linear dependence on answer length removed."""

    def __init__(self, inner: RewardFunction, options: LengthDebiasOptions | None = None) -> None:
        self.inner = inner
        self.options = options or LengthDebiasOptions()

    def __call__(self, debate: DebateRecord) -> RewardResult:
        o = self.options
        result = self.inner(debate)
        steps = [debate.turns_of(i) for i in range(debate.num_agents)]
        lengths = [[answer_length(t, o.text_field, o.measure) for t in turns] for turns in steps]
        metrics = dict(result.metrics)
        # agents without a turn have no length: they keep their reward and stay out of the fit
        fitted = [i for i in range(debate.num_agents) if lengths[i]]
        agent_rewards = list(result.agent_rewards)
        debiased, beta = remove_length_slope(
            [agent_rewards[i] for i in fitted], [sum(lengths[i]) / len(lengths[i]) for i in fitted]
        )
        for i, value in zip(fitted, debiased, strict=True):
            agent_rewards[i] = value
        metrics["length_debias/slope"] = beta
        streams = dict(result.step_streams)
        for name in o.streams:
            if name not in streams:
                continue
            keys = [(i, s) for i in range(debate.num_agents) for s in range(len(streams[name][i]))]
            values, stream_beta = remove_length_slope(
                [streams[name][i][s] for i, s in keys], [lengths[i][s] for i, s in keys]
            )
            rows: list[list[float]] = [[] for _ in range(debate.num_agents)]
            for (i, _), value in zip(keys, values, strict=True):
                rows[i].append(value)
            streams[name] = tuple(tuple(row) for row in rows)
            metrics[f"length_debias/{name}/slope"] = stream_beta
        return attrs.evolve(result, agent_rewards=tuple(agent_rewards), step_streams=streams, metrics=metrics)

    def __repr__(self) -> str:
        return f"LengthDebiasReward({self.inner!r}, {self.options!r})"


def build_length_debias(options: LengthDebiasOptions, context: BuildContext) -> LengthDebiasReward:
    """Build the wrapped reward through the host's registry (``context``), then the wrapper."""
    inner: RewardFunction = context.build("reward", options.inner, "inner")
    return LengthDebiasReward(inner, options)
