"""A stronger judge, phased out (docs/rewards.md#a-stronger-judge-phased-out).

An external judge (ground truth, or another model) gives its verdict on every pair of
responses the agents compared. Its verdicts replace the agents' own comparisons in a copy of
the debate, the run's reward scores that copy, and the two results are mixed:

    mixed = (1 - w) * reward(debate) + w * reward(debate judged by the judge)

for the agent rewards and every step stream. The judge stream of the judged copy is not the
reward's own (every verdict would agree with itself) but each agent vote's agreement with the
judge: +1 when it sides with the judge's strict verdict, -1 when it goes against it or calls
equal a pair the judge split, 0 when the judge calls the pair equal. The weight ``w`` starts at
``weight`` and falls linearly to 0 over ``decay_iterations`` RL iterations, so training ends on
the peer reward alone.

The mixing is the ``judge_mix`` reward, which wraps the run's peer reward (as ``gt_mix`` wraps
one) and owns the judge and its schedule: the trainer scores an RL iteration's debates through
:meth:`JudgeMixReward.score_in_training` with the iteration and a host to sample models; outside
training (evaluation, ``debate show``) it is its peer reward. It must be the run's reward itself,
not wrapped by another: a wrapper would call it as a plain reward and the judge would never speak.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Literal

import attrs
from attrs import validators as v

from debate_core.config.choices import ComponentChoice, nested_component
from debate_core.errors import ConfigError, DebateError, PluginError
from debate_core.limits import short_repr
from debate_core.plugin import BuildContext, PluginCall, call_async_plugin, call_plugin, check_judge_verdicts
from debate_core.plugin import check_reward_result as check_result
from debate_core.records import (
    JUDGE_STREAM,
    Comparison,
    CountingJudge,
    DebateRecord,
    Judge,
    JudgePair,
    RewardFunction,
    RewardResult,
    TrainingRound,
    Turn,
)
from debate_core.rewards.v2 import ResolvedVote, StepRef, resolve_votes
from debate_core.stats import mean

Pair = tuple[StepRef, StepRef]
"""Two responses ``(agent, step)``, the first the smaller."""


def judge_weight(weight: float, decay_iterations: int, iteration: int) -> float:
    """The judge's weight at RL ``iteration``: ``weight`` falling linearly to 0 at
    ``decay_iterations`` (0 decay iterations: the judge is never used)."""
    if decay_iterations <= 0:
        return 0.0
    return weight * max(0.0, 1.0 - iteration / decay_iterations)


def _turn_of(record: DebateRecord, ref: StepRef) -> Turn:
    return record.turns_of(ref[0])[ref[1]]


def compared_pairs(record: DebateRecord) -> list[Pair]:
    """Every distinct pair of responses some agent compared, in the order first compared."""
    seen: dict[Pair, None] = {}
    for vote in resolve_votes(record).resolved:
        seen.setdefault((vote.first, vote.second), None)
    return list(seen)


def judge_pairs(record: DebateRecord, pairs: Sequence[Pair]) -> list[JudgePair]:
    """The pairs as a judge reads them: the question, its answer and the two turns."""
    return [JudgePair(record.question, record.answer, _turn_of(record, a), _turn_of(record, b)) for a, b in pairs]


def judged_record(record: DebateRecord, verdicts: Mapping[Pair, int]) -> DebateRecord:
    """The debate with every resolved comparison replaced by the judge's verdict on its pair
    (same author, same pair; unresolved comparisons are dropped)."""
    by_judge: dict[StepRef, list[Comparison]] = {}
    for vote in resolve_votes(record).resolved:
        verdict = verdicts.get((vote.first, vote.second), 0)
        a, b = vote.first[0], vote.second[0]
        if verdict == 0:
            comparison = Comparison(a, "=", b)
        else:
            comparison = Comparison(a, ">", b) if verdict > 0 else Comparison(b, ">", a)
        by_judge.setdefault(vote.judge, []).append(comparison)
    turns = tuple(attrs.evolve(t, comparisons=tuple(by_judge.get((t.agent, t.step), ()))) for t in record.turns)
    return attrs.evolve(record, turns=turns)


def agreement(vote: ResolvedVote, verdict: int) -> float:
    """What an agent's vote earns against the judge's verdict on its pair."""
    if verdict == 0:
        return 0.0
    return 1.0 if vote.judgement == verdict else -1.0


def agreement_stream(record: DebateRecord, verdicts: Mapping[Pair, int]) -> tuple[tuple[float, ...], ...]:
    """Per agent and step: the mean agreement of the step's votes with the judge (0 without votes)."""
    earned: dict[StepRef, list[float]] = {}
    for vote in resolve_votes(record).resolved:
        earned.setdefault(vote.judge, []).append(agreement(vote, verdicts.get((vote.first, vote.second), 0)))
    return tuple(
        tuple(mean(earned.get((agent, step), ())) for step in range(len(record.turns_of(agent))))
        for agent in range(record.num_agents)
    )


def mix_results(peer: RewardResult, judged: RewardResult, weight: float) -> RewardResult:
    """``(1 - weight) * peer + weight * judged`` on agent rewards and every step stream both have."""

    def blend(a: Sequence[float], b: Sequence[float]) -> tuple[float, ...]:
        return tuple((1.0 - weight) * x + weight * y for x, y in zip(a, b, strict=True))

    streams = {
        name: tuple(blend(row, judged.step_streams[name][i]) for i, row in enumerate(rows))
        if name in judged.step_streams
        else rows
        for name, rows in peer.step_streams.items()
    }
    return attrs.evolve(peer, agent_rewards=blend(peer.agent_rewards, judged.agent_rewards), step_streams=streams)


def judge_mixed_reward(
    record: DebateRecord,
    peer: RewardResult,
    reward: RewardFunction,
    verdicts: Mapping[Pair, int],
    weight: float,
) -> RewardResult:
    """The peer result mixed with the reward of the judged copy of the debate (module docstring),
    with ``judge/*`` metrics: the weight, the pairs judged, and how often the agents' strict votes
    on pairs the judge split agree with it."""
    if weight <= 0.0:
        return peer
    judged = reward(judged_record(record, verdicts))
    if JUDGE_STREAM in judged.step_streams:
        judged = attrs.evolve(
            judged, step_streams={**judged.step_streams, JUDGE_STREAM: agreement_stream(record, verdicts)}
        )
    mixed = mix_results(peer, judged, weight)
    split = agreed = 0
    for vote in resolve_votes(record).resolved:
        verdict = verdicts.get((vote.first, vote.second), 0)
        if verdict != 0 and vote.judgement != 0:
            split += 1
            agreed += int(vote.judgement == verdict)
    metrics = {**mixed.metrics, "judge/weight": weight, "judge/pairs": float(len(verdicts))}
    metrics["judge/votes_on_split_pairs"] = float(split)
    if split:
        metrics["judge/agreement"] = agreed / split
    return attrs.evolve(mixed, metrics=metrics)


def judge_counts(judge: Judge, name: str, debate_id: str) -> dict[str, float]:
    """A ``CountingJudge``'s counts since its last ``compare``, as ``judge/<counter>`` metrics (none
    for a judge that does not count).

    Raises:
        ComponentFailure: the judge's counts are not a mapping of names to finite numbers.
    """
    if not isinstance(judge, CountingJudge):
        return {}
    call = PluginCall("judge", name, "take_counts", f"debate '{debate_id}'")
    counts = call_plugin(call, judge.take_counts)
    if not isinstance(counts, Mapping):
        raise call.returned(counts, ["not a mapping of counter names to numbers"])
    bad = [
        key
        for key, value in counts.items()
        if not isinstance(key, str)
        or isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
    ]
    if bad:
        raise call.returned(counts, [f"counter {short_repr(bad[0], 40)} is not a name with a finite number"])
    return {f"judge/{key}": float(value) for key, value in counts.items()}


def _default_peer() -> ComponentChoice:
    return ComponentChoice(name="v2")


def _default_judge() -> ComponentChoice:
    return ComponentChoice(name="oracle")


@attrs.frozen(kw_only=True)
class JudgeMixOptions:
    """Options of the ``judge_mix`` reward."""

    judge: ComponentChoice = attrs.field(factory=_default_judge, metadata=nested_component("judge"))
    """The judge component: ``{ name = "oracle" }`` (ground truth, the default) or ``{ name = "model",
    options = {...} }``."""
    peer: ComponentChoice = attrs.field(factory=_default_peer, metadata=nested_component("reward"))
    """The wrapped peer reward, which the judge's verdicts are mixed into (``gt_mix`` may be it)."""
    weight: float = attrs.field(default=1.0, validator=[v.ge(0.0), v.le(1.0)])
    """The judge's weight in the reward at the first RL iteration."""
    decay_iterations: int = attrs.field(default=20, validator=v.ge(0))
    """RL iterations over which the weight falls linearly to 0."""
    on_unavailable: Literal["stop", "peer"] = attrs.field(default="stop", validator=v.in_(("stop", "peer")))
    """What a debate gets when the judge gives no verdict on one of its pairs (an endpoint that does
    not answer, an answer it cannot read): ``stop`` ends the run there in one line (the finished
    step checkpointed first), so that a wrong URL or a judge that never answers in its format does
    not quietly turn the run into a peer-vote run; ``peer`` scores that debate by the peer reward
    alone and counts it (``judge/fallback``, ``judge/abstained``)."""


class JudgeMixReward:
    """The peer reward mixed with a stronger judge's, the judge's weight falling to zero."""

    def __init__(self, peer: RewardFunction, judge: Judge, options: JudgeMixOptions) -> None:
        self.peer = peer
        self.judge = judge
        self.options = options

    def __call__(self, debate: DebateRecord) -> RewardResult:
        """The peer reward alone: what the debate earns with no training round (evaluation)."""
        result = self.peer(debate)
        check_result(debate, result, f"judge_mix peer {self.peer!r}")
        return result

    async def score_in_training(self, debate: DebateRecord, round: TrainingRound) -> RewardResult:
        """The peer reward mixed with the judge's at the round's weight (the module docstring). A
        debate with a pair the judge gave no verdict on stops the run (``on_unavailable = "stop"``,
        ``JudgeUnavailable``) or gets the peer reward alone (``"peer"``, ``judge/fallback``)."""
        peer = self(debate)
        weight = judge_weight(self.options.weight, self.options.decay_iterations, round.iteration)
        if weight <= 0.0:
            return peer
        pairs = compared_pairs(debate)
        name = self.options.judge.name
        call = PluginCall("judge", name, "compare", f"{len(pairs)} pairs of debate '{debate.debate_id}'")
        answer = await call_async_plugin(call, partial(self.judge.compare, judge_pairs(debate, pairs), round.host))
        verdicts = check_judge_verdicts(call, answer, len(pairs))
        counts = judge_counts(self.judge, name, debate.debate_id)
        abstained = sum(verdict is None for verdict in verdicts)
        if abstained and self.options.on_unavailable == "stop":
            raise JudgeUnavailable(
                f"reward.options.judge: judge '{name}' gave no verdict on {abstained} of the {len(pairs)} pairs "
                f"of debate '{debate.debate_id}' ({_named_counts(counts)}); the run stops "
                '(reward.options.on_unavailable = "stop"; "peer" scores such a debate by the peer reward alone)'
            )
        if abstained:
            fallback = {"judge/weight": 0.0, "judge/pairs": float(len(pairs)), "judge/fallback": 1.0}
            return attrs.evolve(peer, metrics={**peer.metrics, **counts, **fallback, "judge/abstained": abstained})
        decided = {pair: verdict or 0 for pair, verdict in zip(pairs, verdicts, strict=True)}
        mixed = judge_mixed_reward(debate, peer, self, decided, weight)
        return attrs.evolve(mixed, metrics={**counts, **mixed.metrics, "judge/fallback": 0.0, "judge/abstained": 0.0})

    def check_judge(self) -> None:
        """The judge's own ``check()`` when it has one (an endpoint that can be reached), before a
        run starts (``debate config check``, ``debate train``).

        Raises:
            DebateError: the judge says it cannot judge; the message says what it found.
        """
        check = getattr(self.judge, "check", None)
        if callable(check):
            name = self.options.judge.name
            call_plugin(PluginCall("judge", name, "check", "before the run"), check)

    def __repr__(self) -> str:
        return f"JudgeMixReward({self.peer!r}, {self.options!r})"


class JudgeUnavailable(DebateError):
    """The judge gave no verdict on a pair and ``on_unavailable`` is ``stop``."""


def _named_counts(counts: Mapping[str, float]) -> str:
    """What the judge counted that explains a missing verdict (``judge/unreadable 6``)."""
    reasons = ("failed", "skipped", "unreadable", "timeouts", "connection_errors", "refused")
    named = [f"{key} {value:g}" for key, value in counts.items() if key.removeprefix("judge/") in reasons and value]
    return ", ".join(named) if named else "it abstained"


def build_judge_mix(options: JudgeMixOptions, context: BuildContext) -> JudgeMixReward:
    """Build the peer reward and the judge through the host's registry, then the mixer.

    Raises:
        ConfigError: ``judge_mix`` is wrapped by another reward (the judge would never be asked).
        PluginError: the judge component built something that is not a ``Judge``.
    """
    if ".options." in context.path:  # its options' key path runs through a wrapper's options
        raise ConfigError(
            f"{context.path.removesuffix('.options')}: judge_mix must be the run's reward itself "
            "([reward] name = \"judge_mix\"), wrapping the others through its option 'peer': "
            "a wrapper calls it as a plain reward and its judge would never be asked"
        )
    peer: RewardFunction = context.build("reward", options.peer, "peer")
    judge = context.build("judge", options.judge, "judge")
    if not isinstance(judge, Judge):
        raise PluginError(
            f"{context.path}.judge: component '{options.judge.name}' built a {type(judge).__name__}, "
            "which is not a Judge"
        )
    return JudgeMixReward(peer, judge, options)
