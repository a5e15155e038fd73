"""Ground-truth mixing (docs/rewards.md#gt_mix): ``w_peer * peer + w_gt * correctness``.

Wraps any peer reward. Correctness is ``Turn.grade`` (1.0 or 0.0, filled by the dataset's
grader); a turn without a grade (failed, or a non-verifiable task) counts as ``ungraded``.

- A peer with step streams: the mixed stream (``generator`` by default) becomes
  ``w_peer * peer[i][s] + w_gt * grade(i, s)`` per step. With ``judge_truth`` (the default)
  and a ``judge`` stream, ground truth reaches the judges too: that stream becomes
  ``w_peer * peer_judge[i][s] + w_gt * truth_judge[i][s]``, where ``truth_judge`` is the mean
  over the step's resolved votes of +1 for a vote that prefers the correct of a correct and a
  wrong response, -1 for one that prefers the wrong one or calls them equal, and 0 for a vote
  between two responses the grader does not tell apart (both right, both wrong, or ungraded);
  a step that owed a comparison and made none gets -1 (so a small ``w_peer``, which scales the
  peer reward's own format penalty, does not make skipping comparisons free).
  Other streams are left as they are (their weight is their lambda). The agent reward becomes
  ``w_peer * r_i + w_gt * mean_s grade(i, s)`` (for v2, still the mean of the mixed stream).
- A scalar peer: ``r_i = w_peer * peer_i + w_gt * correctness of agent i's final answer`` (its latest turn
  that followed the output contract, ``DebateRecord.final_turn``).
"""

from __future__ import annotations

import math

import attrs
from attrs import validators as v

from debate_core.config.choices import ComponentChoice, nested_component
from debate_core.errors import ComponentFailure
from debate_core.plugin import BuildContext
from debate_core.plugin import check_reward_result as check_result
from debate_core.records import GENERATOR_STREAM, JUDGE_STREAM, DebateRecord, RewardFunction, RewardResult, Turn
from debate_core.rewards.v2 import resolve_votes
from debate_core.stats import mean


def _finite(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"'{attribute.name}' must be a finite number, got {value!r}")


def _default_peer() -> ComponentChoice:
    return ComponentChoice(name="v2")


@attrs.frozen(kw_only=True)
class GtMixOptions:
    """Options of the ``gt_mix`` reward."""

    peer: ComponentChoice = attrs.field(factory=_default_peer, metadata=nested_component("reward"))
    """The wrapped peer reward: ``{ name = "win_rate" }`` or ``{ name = "v2", options = {...} }``."""
    w_peer: float = attrs.field(default=0.7, validator=[_finite, v.ge(0.0)])
    w_gt: float = attrs.field(default=0.3, validator=[_finite, v.ge(0.0)])
    stream: str = GENERATOR_STREAM
    """The stream that receives the correctness term when the peer reward has streams."""
    ungraded: float = attrs.field(default=0.0, validator=_finite)
    """The correctness of a turn without a grade."""
    judge_truth: bool = True
    """Mix ground truth into the peer reward's ``judge`` stream too: a vote between a correct and
    a wrong response is right or wrong by the grader (docs/rewards.md#ground-truth-for-judges)."""


class GtMixReward:
    """``w_peer * peer + w_gt * correctness`` around another reward function."""

    def __init__(self, peer: RewardFunction, options: GtMixOptions | None = None) -> None:
        self.peer = peer
        self.options = options or GtMixOptions()

    def _correctness(self, turn: Turn) -> float:
        return self.options.ungraded if turn.grade is None else float(turn.grade)

    def __call__(self, debate: DebateRecord) -> RewardResult:
        o = self.options
        inner = self.peer(debate)
        check_result(debate, inner, f"gt_mix peer {self.peer!r}")
        steps = [debate.turns_of(i) for i in range(debate.num_agents)]
        graded = [t.grade is not None for t in debate.turns]
        metrics = dict(inner.metrics)
        metrics["gt_mix/graded_fraction"] = mean(1.0 if g else 0.0 for g in graded)
        if not inner.step_streams:
            final = final_grades(debate, o.ungraded)
            rewards = [o.w_peer * r + o.w_gt * c for r, c in zip(inner.agent_rewards, final, strict=True)]
            metrics["gt_mix/correctness_mean"] = mean(final)
            return attrs.evolve(inner, agent_rewards=tuple(rewards), metrics=metrics)
        if o.stream not in inner.step_streams:
            raise ComponentFailure(
                f"gt_mix: the peer reward has no stream '{o.stream}' to mix correctness into "
                f"(its streams: {', '.join(sorted(inner.step_streams))}); set the gt_mix option 'stream'"
            )
        per_step = [[self._correctness(t) for t in turns] for turns in steps]
        mixed_stream = tuple(
            tuple(o.w_peer * r + o.w_gt * c for r, c in zip(peer_steps, grades, strict=True))
            for peer_steps, grades in zip(inner.step_streams[o.stream], per_step, strict=True)
        )
        streams = dict(inner.step_streams)
        streams[o.stream] = mixed_stream
        if o.judge_truth and JUDGE_STREAM in streams and o.stream != JUDGE_STREAM:
            truth = truth_judge_stream(debate)
            streams[JUDGE_STREAM] = tuple(
                tuple(o.w_peer * r + o.w_gt * t for r, t in zip(peer_steps, truth_steps, strict=True))
                for peer_steps, truth_steps in zip(inner.step_streams[JUDGE_STREAM], truth, strict=True)
            )
            metrics["gt_mix/judge_truth_mean"] = mean(x for row in truth for x in row)
        rewards = [o.w_peer * r + o.w_gt * mean(g) for r, g in zip(inner.agent_rewards, per_step, strict=True)]
        metrics["gt_mix/correctness_mean"] = mean(c for grades in per_step for c in grades)
        return attrs.evolve(inner, agent_rewards=tuple(rewards), step_streams=streams, metrics=metrics)

    def __repr__(self) -> str:
        return f"GtMixReward({self.peer!r}, {self.options!r})"


def build_gt_mix(options: GtMixOptions, context: BuildContext) -> GtMixReward:
    """Build the wrapped peer reward through the host's registry (``context``), then the mixer."""
    peer: RewardFunction = context.build("reward", options.peer, "peer")
    return GtMixReward(peer, options)


def final_grades(debate: DebateRecord, ungraded: float = 0.0) -> list[float]:
    """The correctness of each agent's final answer (``DebateRecord.final_turn``, its latest turn
    that followed the output contract); ``ungraded`` when it has none or it carries no grade."""
    out: list[float] = []
    for agent in range(debate.num_agents):
        turn = debate.final_turn(agent)
        grade = turn.grade if turn is not None else None
        out.append(ungraded if grade is None else float(grade))
    return out


def truth_judge_stream(debate: DebateRecord) -> tuple[tuple[float, ...], ...]:
    """Per agent and step: the mean over the step's resolved votes of what ground truth says of
    each (+1 prefers the correct response, -1 prefers the wrong one or calls them equal, 0 when
    the grader does not tell the two apart); -1 for a step that owed a comparison (v2's format
    rule) and made none, since a judgement owed and not made is a wrong one; 0 for any other
    step without votes."""
    resolution = resolve_votes(debate)
    owed = set(resolution.missing)
    grades = {ref: debate.turns[position].grade for position, ref in enumerate(resolution.refs)}
    earned: dict[tuple[int, int], list[float]] = {}
    for vote in resolution.resolved:
        first, second = grades.get(vote.first), grades.get(vote.second)
        if first is None or second is None or first == second:
            value = 0.0
        else:
            better = 1 if first > second else -1
            value = 1.0 if vote.judgement == better else -1.0
        earned.setdefault(vote.judge, []).append(value)
    return tuple(
        tuple(
            -1.0 if (agent, step) in owed else mean(earned.get((agent, step), ()))
            for step in range(len(debate.turns_of(agent)))
        )
        for agent in range(debate.num_agents)
    )
