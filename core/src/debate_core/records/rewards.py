"""The reward contract: what a reward plugin receives and returns.

A reward plugin is a callable ``(debate: DebateRecord) -> RewardResult``. The simple case
returns one final reward per agent; richer rewards (v2) also return per-step rewards for
named token streams, with the sections of the output contract each stream covers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records.debate import DebateRecord
from debate_core.records.external_judges import JudgeHost

GENERATOR_STREAM = "generator"
"""The stream of the tokens that produce a solution (and, by default, everything else)."""
JUDGE_STREAM = "judge"
"""The stream of the tokens with which an agent judges its peers (v2's ``<comparison>`` section;
not an external judge, ``records.external_judges``)."""


def _float_tuple(values: Iterable[float]) -> tuple[float, ...]:
    """Any iterable of numbers (a list, a numpy array) as a tuple of floats."""
    return tuple(float(x) for x in values)


def _freeze_streams(
    value: Mapping[str, Iterable[Iterable[float]]],
) -> Mapping[str, tuple[tuple[float, ...], ...]]:
    return {str(k): tuple(_float_tuple(steps) for steps in v) for k, v in value.items()}


@attrs.frozen
class RewardResult:
    """The rewards of one finished debate.

    Attributes:
        agent_rewards: the final reward ``r_{p,i}`` of each agent (length ``num_agents``).
        step_streams: stream name -> agent -> one reward per step of that agent
            (``len(debate.turns_of(i))`` values). Empty for scalar rewards, whose
            advantage is broadcast to every action token of the agent.
        section_streams: section name (``solution``, ``comparison``, ...) -> the stream
            its tokens are trained with. Tokens in no listed section follow ``default_stream``.
        default_stream: the stream of tags, unlisted sections and failed turns.
        stream_weights: the weight (lambda) of each stream's advantages; 1.0 when absent.
        metrics: scalar diagnostics, averaged over debates by the trainer.
    """

    agent_rewards: tuple[float, ...] = attrs.field(converter=_float_tuple)
    step_streams: Mapping[str, tuple[tuple[float, ...], ...]] = attrs.field(factory=dict, converter=_freeze_streams)
    section_streams: Mapping[str, str] = attrs.field(factory=dict)
    default_stream: str = GENERATOR_STREAM
    stream_weights: Mapping[str, float] = attrs.field(factory=dict)
    metrics: Mapping[str, float] = attrs.field(factory=dict)


@runtime_checkable
class RewardFunction(Protocol):
    """Scores one finished debate. Must be deterministic and must not raise on any
    debate the coordinators can produce (no comparisons, every turn failing to parse)."""

    def __call__(self, debate: DebateRecord) -> RewardResult: ...


@attrs.frozen
class TrainingRound:
    """What the trainer tells a reward about the RL iteration whose debates it scores."""

    iteration: int
    """The RL iteration, from 0 (a reward with a schedule reads it)."""
    host: JudgeHost
    """Sampling from models the run's backend serves (a model judge samples through it)."""


@runtime_checkable
class TrainingTimeReward(RewardFunction, Protocol):
    """A reward whose score during training depends on the RL iteration or on a model the run's
    backend serves (``judge_mix``, docs/rewards.md#a-stronger-judge-phased-out).

    The trainer awaits :meth:`score_in_training` for every debate of an RL iteration; everywhere
    else (evaluation, ``debate show``, the reward sidecars) the reward is called as a plain
    :class:`RewardFunction`, which scores the debate as it would with no training round.

    Example::

        class Annealed:
            def __call__(self, debate): return self.inner(debate)
            async def score_in_training(self, debate, round):
                scale = max(0.0, 1.0 - round.iteration / 100)
                result = self.inner(debate)
                return attrs.evolve(result, agent_rewards=[scale * r for r in result.agent_rewards])
    """

    async def score_in_training(self, debate: DebateRecord, round: TrainingRound) -> RewardResult: ...
