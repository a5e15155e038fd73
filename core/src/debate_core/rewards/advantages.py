"""Advantages (docs/rewards.md#advantages): rewards centred within each debate, per stream for
streamed rewards, optionally divided by the batch's standard deviation.

Scalar rewards:
    ``R_i = sum_t r^step_{i,t} + r_i`` with ``r^step = -1`` for a failed turn, 0 otherwise;
    ``A_i = R_i - mean_j R_j``. Every action token of agent ``i`` gets ``A_i``.
Streamed rewards: for each stream ``k`` and each response ``(i, s)``,
    ``x^k_{i,s} = stream_k[i][s] (+ r^step_{i,s} when k is the default stream)``,
    ``A^k_{i,s} = lambda_k * (x^k_{i,s} - mean over all (j, u) of x^k_{j,u})``.
    A token of step ``(i, s)`` gets ``A^k_{i,s}`` of the stream ``k`` its section maps to.
Global normalisation divides the centred values (``A_i``, and each stream's before lambda)
by their root mean square over the batch, which is their standard deviation since every
debate's values already sum to zero; a zero standard deviation leaves them unchanged.
Adding a constant to every reward of a debate (or of one stream) changes no advantage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

import attrs
from attrs import validators as v

from debate_core.plugin import check_reward_result as check_result
from debate_core.records import DebateRecord, RewardResult

FAILED_TURN_REWARD = -1.0
"""The per-step reward of a turn that broke the output contract or the turn-taking (docs/rewards.md#advantages)."""

UNIFORM_TOLERANCE = 1e-9
"""Advantages at most this far from zero count as zero when deciding that a debate is uniform."""

StreamTable = tuple[tuple[float, ...], ...]


@attrs.frozen(kw_only=True)
class AdvantageOptions:
    """How rewards become advantages."""

    normalisation: Literal["group", "global"] = attrs.field(default="group", validator=v.in_(("group", "global")))
    """``group``: centre within each debate. ``global``: also divide by the batch's standard deviation."""
    drop_uniform: bool = False
    """Leave out debates whose advantages are all zero (they carry no gradient)."""


@attrs.frozen
class DebateAdvantages:
    """The advantages of one debate.

    Attributes:
        returns: ``R_i`` per agent (step rewards plus final reward).
        agent_advantages: ``R_i - mean_j R_j`` (scaled under global normalisation).
        step_advantages: stream -> agent -> one weighted, centred advantage per step;
            empty for scalar rewards.
        section_streams: section name -> stream, as the reward declared it.
        default_stream: the stream of tokens in no listed section.
    """

    returns: tuple[float, ...]
    agent_advantages: tuple[float, ...]
    step_advantages: Mapping[str, StreamTable] = attrs.field(factory=dict)
    section_streams: Mapping[str, str] = attrs.field(factory=dict)
    default_stream: str = "generator"

    @property
    def streamed(self) -> bool:
        """True when tokens get per-stream, per-step advantages."""
        return bool(self.step_advantages)

    def stream_of(self, section: str | None) -> str:
        """The stream a token of ``section`` (``None``: outside every section) is trained with."""
        if section is None:
            return self.default_stream
        return self.section_streams.get(section, self.default_stream)

    def token_advantages(self, agent: int, step: int, action_sections: Sequence[str | None]) -> list[float]:
        """The advantage of each action token of ``agent``'s ``step``, given each token's section."""
        if not self.streamed:
            return [self.agent_advantages[agent]] * len(action_sections)
        out: list[float] = []
        for section in action_sections:
            table = self.step_advantages[self.stream_of(section)]
            try:
                out.append(table[agent][step])
            except IndexError:
                raise IndexError(
                    f"no advantage for agent {agent} step {step}: the debate has {len(table)} agents and "
                    f"{len(table[agent]) if 0 <= agent < len(table) else 0} steps for that agent"
                ) from None
        return out


@attrs.frozen
class _Centred:
    returns: tuple[float, ...]
    agent: list[float]
    streams: dict[str, list[list[float]]]
    weights: dict[str, float]
    result: RewardResult


def _step_rewards(debate: DebateRecord, agent: int) -> list[float]:
    return [FAILED_TURN_REWARD if t.failed else 0.0 for t in debate.turns_of(agent)]


def _centre_debate(debate: DebateRecord, result: RewardResult) -> _Centred:
    check_result(debate, result, check_metrics=False)
    n = debate.num_agents
    step_rewards = [_step_rewards(debate, i) for i in range(n)]
    returns = tuple(sum(step_rewards[i]) + result.agent_rewards[i] for i in range(n))
    baseline = sum(returns) / n if n else 0.0
    agent = [r - baseline for r in returns]
    streams: dict[str, list[list[float]]] = {}
    if result.step_streams:
        names = set(result.step_streams) | {result.default_stream} | set(result.section_streams.values())
        for name in sorted(names):
            given = result.step_streams.get(name)
            values = [
                [
                    (given[i][s] if given is not None else 0.0)
                    + (step_rewards[i][s] if name == result.default_stream else 0.0)
                    for s in range(len(step_rewards[i]))
                ]
                for i in range(n)
            ]
            flat = [x for row in values for x in row]
            centre = sum(flat) / len(flat) if flat else 0.0
            streams[name] = [[x - centre for x in row] for row in values]
    weights = {name: float(result.stream_weights.get(name, 1.0)) for name in streams}
    return _Centred(returns, agent, streams, weights, result)


def _is_uniform(c: _Centred) -> bool:
    if c.streams:
        return all(
            abs(x * c.weights[name]) <= UNIFORM_TOLERANCE
            for name, rows in c.streams.items()
            for row in rows
            for x in row
        )
    return all(abs(x) <= UNIFORM_TOLERANCE for x in c.agent)


def _rms(values: list[float]) -> float:
    return math.sqrt(sum(x * x for x in values) / len(values)) if values else 0.0


def _scale(std: float) -> float:
    """1/std, or 1 when the batch has no spread (nothing to normalise)."""
    return 1.0 / std if std > 1e-12 else 1.0


def compute_advantages(
    records: Sequence[DebateRecord],
    results: Sequence[RewardResult],
    options: AdvantageOptions | None = None,
) -> list[DebateAdvantages | None]:
    """Advantages of a batch of debates, in order; ``None`` where a uniform debate was dropped.

    Raises:
        ComponentFailure: a result does not fit its debate (wrong shapes or non-finite rewards).
    """
    options = options or AdvantageOptions()
    if len(records) != len(results):
        raise ValueError(f"{len(records)} debates but {len(results)} reward results")
    centred = [_centre_debate(d, r) for d, r in zip(records, results, strict=True)]
    kept = [None if options.drop_uniform and _is_uniform(c) else c for c in centred]
    agent_scale = 1.0
    stream_scales: dict[str, float] = {}
    if options.normalisation == "global":
        present = [c for c in kept if c is not None]
        agent_scale = _scale(_rms([x for c in present for x in c.agent]))
        names = {name for c in present for name in c.streams}
        for name in names:
            values = [x for c in present for row in c.streams.get(name, []) for x in row]
            stream_scales[name] = _scale(_rms(values))
    out: list[DebateAdvantages | None] = []
    for c in kept:
        if c is None:
            out.append(None)
            continue
        step_advantages = {
            name: tuple(tuple(x * stream_scales.get(name, 1.0) * c.weights[name] for x in row) for row in rows)
            for name, rows in c.streams.items()
        }
        out.append(
            DebateAdvantages(
                returns=c.returns,
                agent_advantages=tuple(x * agent_scale for x in c.agent),
                step_advantages=step_advantages,
                section_streams=dict(c.result.section_streams),
                default_stream=c.result.default_stream,
            )
        )
    return out
