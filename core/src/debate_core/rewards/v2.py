"""The v2 reward (docs/rewards.md#v2): a generator stream from vote ratios and a judge stream
from agreement with the majority, per (agent, step), with a format penalty.

The rules, as docs/rewards.md#v2 states them:

- Votes are the debate's valid comparisons (``records.votes.tally_votes``). A vote made at
  turn ``t`` refers to the most recent step of each compared agent among the turns ``t``
  could see (``DebateRecord.visible_responses``). A vote naming an agent with no visible turn
  is *unresolved* and ignored. Failed turns cast no votes.
- Generator reward of step ``(i, s)``: ``(for - against) / (for + against)``, 0 with no
  votes; a tie ``=`` counts as neither (equal to ``2 * for / (for + against) - 1``).
- Judge reward of a step: mean over its resolved votes of +1 when the vote agrees with the
  majority judgement on that pair of responses and -1 when not. The majority is the
  judgement (first better, second better, equal) cast strictly more often than each other
  one, over all judges' votes on the pair (leaving out the judge's own votes when
  ``judge_leave_one_out``); a pair with no strict majority gives no signal and its votes
  are left out of the mean. 0 when nothing is left.
- Format penalty: a non-failed step with ``turn_index >= 2`` and no resolved vote although
  at least two other agents have a visible turn gets ``format_penalty_value`` added to its
  judge reward (its judge reward is 0 otherwise, as it has no vote).
"""

from __future__ import annotations

import math
from collections import Counter

import attrs
from attrs import validators as v

from debate_core.records import (
    GENERATOR_STREAM,
    JUDGE_STREAM,
    AuthoredComparison,
    DebateRecord,
    RewardResult,
    tally_votes,
)
from debate_core.stats import mean

StepRef = tuple[int, int]
"""``(agent, step)``: one response of the debate."""

V2_SECTION_STREAMS: dict[str, str] = {
    "solution": GENERATOR_STREAM,
    "evaluation": GENERATOR_STREAM,
    "comparison": JUDGE_STREAM,
}


def _finite(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"'{attribute.name}' must be a finite number, got {value!r}")


@attrs.frozen(kw_only=True)
class V2Options:
    """Options of the ``v2`` reward (docs/rewards.md#v2)."""

    lambda_gen: float = attrs.field(default=1.0, validator=[_finite, v.ge(0.0)])
    """Weight of the generator stream's advantages (``solution`` and ``evaluation`` tokens)."""
    lambda_judge: float = attrs.field(default=1.0, validator=[_finite, v.ge(0.0)])
    """Weight of the judge stream's advantages (``comparison`` tokens)."""
    format_penalty: bool = True
    """Penalise steps that should have compared two other agents and did not."""
    format_penalty_value: float = attrs.field(default=-0.5, validator=[_finite, v.le(0.0)])
    """The penalty added to such a step's judge reward (a penalty, so at most 0)."""
    judge_leave_one_out: bool = False
    """Leave the judge's own votes out of the majority it is scored against. Off by default
    (the majority of all judges); with it off a lone judge of a pair always agrees."""


@attrs.frozen
class ResolvedVote:
    """A vote whose two sides were resolved to the responses the judge saw."""

    judge: StepRef
    first: StepRef
    second: StepRef
    judgement: int
    """+1: ``first`` better, -1: ``second`` better, 0: equal (``first < second``)."""


@attrs.frozen
class V2Breakdown:
    """Everything v2 derives from one debate, before it becomes a ``RewardResult``."""

    generator: dict[StepRef, float]
    judge: dict[StepRef, float]
    resolved: tuple[ResolvedVote, ...]
    unresolved: int
    missing_comparisons: tuple[StepRef, ...]
    tied_votes: int
    invalid_lines: int
    malformed: int
    self_comparisons: int


def _step_positions(debate: DebateRecord) -> list[StepRef]:
    """For each turn (by position in ``debate.turns``): ``(agent, position among that agent's turns)``."""
    seen: Counter[int] = Counter()
    refs: list[StepRef] = []
    for turn in debate.turns:
        refs.append((turn.agent, seen[turn.agent]))
        seen[turn.agent] += 1
    return refs


def _majority(counts: Counter[int]) -> int | None:
    """The judgement cast strictly more often than every other one, or None."""
    ranked = counts.most_common()
    if not ranked or ranked[0][1] <= 0:
        return None
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        return None
    return ranked[0][0]


def ratio(votes_for: int, votes_against: int) -> float:
    """The generator reward of a response: ``(for - against) / (for + against)``, 0 with no votes."""
    total = votes_for + votes_against
    return (votes_for - votes_against) / total if total else 0.0


def v2_breakdown(debate: DebateRecord, options: V2Options) -> V2Breakdown:
    """Resolve votes, then compute generator and judge rewards per response (no lambdas)."""
    refs = _step_positions(debate)
    tally = tally_votes(debate)
    by_turn: dict[int, list[AuthoredComparison]] = {}
    for authored in tally.votes:
        by_turn.setdefault(authored.turn_index, []).append(authored)
    resolved: list[ResolvedVote] = []
    unresolved = 0
    missing: list[StepRef] = []
    judge_steps: list[StepRef] = []
    for position, turn in enumerate(debate.turns):
        judge_ref = refs[position]
        if turn.failed:
            continue
        judge_steps.append(judge_ref)
        latest = {agent: refs[p] for agent, p in debate.visible_responses(turn).items()}
        usable = 0
        for c in by_turn.get(turn.turn_index, ()):
            if c.a not in latest or c.b not in latest:
                unresolved += 1
                continue
            usable += 1
            a_ref, b_ref = latest[c.a], latest[c.b]
            first, second = min(a_ref, b_ref), max(a_ref, b_ref)
            judgement = 0 if c.op == "=" else (1 if a_ref == first else -1)
            resolved.append(ResolvedVote(judge_ref, first, second, judgement))
        others_visible = {agent for agent in latest if agent != turn.agent}
        if turn.turn_index >= 2 and usable == 0 and len(others_visible) >= 2:
            missing.append(judge_ref)

    votes_for: Counter[StepRef] = Counter()
    votes_against: Counter[StepRef] = Counter()
    for vote in resolved:
        if vote.judgement != 0:
            winner, loser = (vote.first, vote.second) if vote.judgement > 0 else (vote.second, vote.first)
            votes_for[winner] += 1
            votes_against[loser] += 1
    generator = {ref: ratio(votes_for[ref], votes_against[ref]) for ref in refs}

    pair_counts: dict[tuple[StepRef, StepRef], Counter[int]] = {}
    own_counts: dict[tuple[StepRef, StepRef, int], Counter[int]] = {}
    for vote in resolved:
        pair = (vote.first, vote.second)
        pair_counts.setdefault(pair, Counter())[vote.judgement] += 1
        own_counts.setdefault((*pair, vote.judge[0]), Counter())[vote.judgement] += 1
    signals: dict[StepRef, list[float]] = {ref: [] for ref in judge_steps}
    tied = 0
    for vote in resolved:
        pair = (vote.first, vote.second)
        counts = Counter(pair_counts[pair])
        if options.judge_leave_one_out:
            counts.subtract(own_counts[(*pair, vote.judge[0])])
        majority = _majority(counts)
        if majority is None:
            tied += 1
            continue
        signals[vote.judge].append(1.0 if vote.judgement == majority else -1.0)
    judge = {ref: mean(signals.get(ref, ())) for ref in refs}
    if options.format_penalty:
        for ref in missing:
            judge[ref] += options.format_penalty_value
    return V2Breakdown(
        generator=generator,
        judge=judge,
        resolved=tuple(resolved),
        unresolved=unresolved,
        missing_comparisons=tuple(missing),
        tied_votes=tied,
        invalid_lines=tally.invalid_lines,
        malformed=tally.malformed,
        self_comparisons=tally.self_comparisons,
    )


def _per_agent(values: dict[StepRef, float], num_agents: int) -> tuple[tuple[float, ...], ...]:
    """agent -> its steps' values in order (keys are ``(agent, position)``, positions 0..n-1)."""
    rows: list[list[float]] = [[] for _ in range(num_agents)]
    for (agent, _position), value in sorted(values.items()):
        if 0 <= agent < num_agents:
            rows[agent].append(value)
    return tuple(tuple(row) for row in rows)


class V2Reward:
    """The v2 reward: per-step generator and judge streams, weighted by lambdas."""

    def __init__(self, options: V2Options | None = None) -> None:
        self.options = options or V2Options()

    def __call__(self, debate: DebateRecord) -> RewardResult:
        parts = v2_breakdown(debate, self.options)
        generator = _per_agent(parts.generator, debate.num_agents)
        judge = _per_agent(parts.judge, debate.num_agents)
        return RewardResult(
            agent_rewards=tuple(mean(steps) for steps in generator),
            step_streams={GENERATOR_STREAM: generator, JUDGE_STREAM: judge},
            section_streams=dict(V2_SECTION_STREAMS),
            default_stream=GENERATOR_STREAM,
            stream_weights={GENERATOR_STREAM: self.options.lambda_gen, JUDGE_STREAM: self.options.lambda_judge},
            metrics=v2_metrics(parts),
        )

    def __repr__(self) -> str:
        return f"V2Reward({self.options!r})"


def v2_metrics(parts: V2Breakdown) -> dict[str, float]:
    """The v2 reward metrics (docs/rewards.md#v2), plus the counts of discarded comparisons."""
    return {
        "v2/total_votes": float(len(parts.resolved)),
        "v2/missing_comparisons": float(len(parts.missing_comparisons)),
        "v2/comparison_lines_invalid": float(parts.invalid_lines + parts.malformed + parts.self_comparisons),
        "v2/invalid_lines": float(parts.invalid_lines),
        "v2/malformed": float(parts.malformed),
        "v2/self_comparisons": float(parts.self_comparisons),
        "v2/unresolved_comparisons": float(parts.unresolved),
        "v2/tied_majority_votes": float(parts.tied_votes),
        "reward/gen/mean": mean(parts.generator.values()),
        "reward/judge/mean": mean(parts.judge.values()),
    }
