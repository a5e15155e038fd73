"""The v2 reward (docs/rewards.md#v2): a generator stream from vote ratios and a judge stream
from agreement with the other judges, per response (agent, step), with a format penalty.

The rules, as docs/rewards.md#v2 states them:

- Votes are the debate's valid comparisons (``records.votes.tally_votes``). A vote made at
  turn ``t`` refers to the most recent step of each compared agent among the turns ``t``
  could see (``DebateRecord.visible_responses``). A vote naming an agent with no visible turn
  is *unresolved* and ignored. Failed turns cast no votes.
- Generator reward of step ``(i, s)``: ``(for - against) / (for + against)``, 0 with no
  votes; a tie ``=`` counts for neither side (equal to ``2 * for / (for + against) - 1``).
- Judge reward of a step: the mean, over its resolved votes, of what each vote earns. The
  consensus on a pair of responses compares how many votes say the first is better with how
  many say the second is (``=`` is a vote for neither side); with ``judge_leave_one_out`` the
  judge's own votes on the pair are left out. A ``>`` vote earns +1 when it sides with a strict
  consensus, -1 when it goes against one, and 0 when the consensus is tied; an ``=`` vote earns 0.
  With ``judge_consensus = "others_ranking"`` the consensus is instead the other judges' ranking
  of the two responses (each one's win rate over their votes that involve it).
- Format penalty: a non-failed step with ``turn_index >= 2`` and no resolved vote although
  at least two other agents have a visible turn gets ``format_penalty_value`` added to its
  judge reward (a step whose only votes are valid ties has resolved votes and is not penalised).
- Token streams: ``<solution>`` and ``<evaluation>`` tokens learn from the generator stream,
  ``<comparison>`` tokens from the judge stream, and every other token (tags,
  ``<consensus>``, ``<consensus_reason>``) from neither: only a failed turn's -1 reaches them.
  ``evaluation_stream`` and ``other_tokens`` change that.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Literal

import attrs
from attrs import validators as v

from debate_core.records import (
    GENERATOR_STREAM,
    JUDGE_STREAM,
    AnswerReader,
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

UNSCORED_STREAM = "unscored"
"""The stream of tokens no v2 stream scores: it holds only the failed-turn step reward."""


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
    """Score each judge against the other judges only. Off by default (the consensus of all
    judges, the recipe's rule); with it off a lone judge of a pair always agrees with itself, so
    every resolved ``>`` vote of a 3-agent debate earns +1 (docs/rewards.md#who-judges-a-pair)."""
    judge_consensus: Literal["pair", "others_ranking"] = "pair"
    """What a judge's ``>`` vote is scored against (docs/rewards.md#judging-against-the-others-ranking):
    ``pair``, the consensus of the votes on the same pair (the recipe's rule); ``others_ranking``,
    the ranking the other judges' votes give the two responses, each by its win rate over every
    vote of another judge that involves it, so that a lone judge of a pair is still checked
    against what the rest of the debate says of each side."""
    evaluation_stream: Literal["generator", "judge"] = "generator"
    """The stream the ``<evaluation>`` tokens learn from: ``generator`` (the recipe's split:
    solution and evaluation are content) or ``judge`` (the evaluation is where an agent decides
    who is right, so it learns with the comparisons)."""
    revisions: Literal["unscored", "peers_choice"] = "unscored"
    """What a revision no vote judges (an agent's response after its first, such as every round-2
    solution of a 2-round debate) earns in the generator stream: nothing (``unscored``, the recipe's
    rule), or with ``peers_choice`` +1 when its answer is the one the *other* agents' votes rank
    highest, -1 when it holds another, 0 when no single answer ranks highest
    (docs/rewards.md#revisions-and-the-peers-choice)."""
    answers: Literal["boxed", "text"] = "boxed"
    """How ``peers_choice`` reads a solution's answer: the last ``\\boxed{}`` normalised (``boxed``)
    or the solution's text, runs of whitespace collapsed (``text``)."""
    other_tokens: Literal["none", "generator"] = "none"
    """What the tokens outside ``<solution>``, ``<evaluation>`` and ``<comparison>`` learn from
    (tags, ``<consensus>``, ``<consensus_reason>``): ``none`` (the recipe's split; only a failed
    turn's -1 reaches them) or ``generator`` (the generator stream, as before this option)."""


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


def ratio(votes_for: int, votes_against: int) -> float:
    """The generator reward of a response: ``(for - against) / (for + against)``, 0 with no votes."""
    total = votes_for + votes_against
    return (votes_for - votes_against) / total if total else 0.0


@attrs.frozen
class VoteResolution:
    """The votes of a debate resolved to the responses their judges saw, with what was dropped."""

    refs: tuple[StepRef, ...]
    """For each turn (by position in ``debate.turns``): the response ``(agent, step)`` it is."""
    resolved: tuple[ResolvedVote, ...]
    judge_steps: tuple[StepRef, ...]
    """The responses that could vote (every non-failed turn)."""
    missing: tuple[StepRef, ...]
    """Responses that should have compared (the format rule) and resolved no vote."""
    unresolved: int
    invalid_lines: int
    malformed: int
    self_comparisons: int


def resolve_votes(debate: DebateRecord) -> VoteResolution:
    """Resolve every valid vote of the debate to the two responses its judge saw
    (docs/rewards.md#which-response-a-vote-refers-to)."""
    refs = _step_positions(debate)
    tally = tally_votes(debate)
    by_turn: dict[int, list[AuthoredComparison]] = {}
    for authored in tally.votes:
        by_turn.setdefault(authored.turn_index, []).append(authored)
    resolved: list[ResolvedVote] = []
    unresolved = 0
    missing: list[StepRef] = []
    judge_steps: list[StepRef] = []
    history = debate.history_index()  # one pass; each turn's view is then looked up, not rescanned
    for position, turn in enumerate(debate.turns):
        judge_ref = refs[position]
        if turn.failed:
            continue
        judge_steps.append(judge_ref)
        usable = 0
        for c in by_turn.get(turn.turn_index, ()):
            a_at, b_at = history.latest(c.a, turn.visible_turns), history.latest(c.b, turn.visible_turns)
            if a_at is None or b_at is None:
                unresolved += 1
                continue
            usable += 1
            a_ref, b_ref = refs[a_at], refs[b_at]
            first, second = min(a_ref, b_ref), max(a_ref, b_ref)
            judgement = 0 if c.op == "=" else (1 if a_ref == first else -1)
            resolved.append(ResolvedVote(judge_ref, first, second, judgement))
        if turn.turn_index >= 2 and usable == 0 and history.others_seen(turn.agent, turn.visible_turns) >= 2:
            missing.append(judge_ref)
    return VoteResolution(
        tuple(refs),
        tuple(resolved),
        tuple(judge_steps),
        tuple(missing),
        unresolved,
        tally.invalid_lines,
        tally.malformed,
        tally.self_comparisons,
    )


def ranking_scores(votes: Sequence[ResolvedVote]) -> list[float | None]:
    """What each vote earns against the other judges' ranking of its two responses: each side's
    win rate (a win 1, a tie ½) over the votes of *other* judges that involve it; +1 when a ``>``
    vote prefers the side with the higher rate, -1 when the lower, ``None`` when the rates are
    equal or a side has no other judge's vote; an ``=`` vote earns 0."""
    scores: list[float | None] = []
    for vote in votes:
        if vote.judgement == 0:
            scores.append(0.0)
            continue
        rates = [_win_rate(side, vote.judge[0], votes) for side in (vote.first, vote.second)]
        if rates[0] is None or rates[1] is None or rates[0] == rates[1]:
            scores.append(None)
            continue
        scores.append(1.0 if (rates[0] - rates[1]) * vote.judgement > 0 else -1.0)
    return scores


def _win_rate(response: StepRef, judge_agent: int, votes: Sequence[ResolvedVote]) -> float | None:
    """``response``'s win rate over the votes of agents other than ``judge_agent`` that involve it."""
    points: list[float] = []
    for vote in votes:
        if vote.judge[0] == judge_agent or response not in (vote.first, vote.second):
            continue
        side = 1 if response == vote.first else -1
        points.append(0.5 if vote.judgement == 0 else float(vote.judgement * side > 0))
    return mean(points) if points else None


def judge_scores(votes: Sequence[ResolvedVote], leave_one_out: bool) -> list[float | None]:
    """What each vote earns against the consensus on its pair: +1 agreeing with a strict
    consensus, -1 against it, 0 for an ``=`` vote, ``None`` for a ``>`` vote on a tied pair.

    The consensus of a pair is the sign of (votes for the first) - (votes for the second);
    with ``leave_one_out`` the votes of the judging agent itself are not counted.
    """
    margin: Counter[tuple[StepRef, StepRef]] = Counter()
    own: Counter[tuple[StepRef, StepRef, int]] = Counter()
    for vote in votes:
        margin[(vote.first, vote.second)] += vote.judgement
        own[(vote.first, vote.second, vote.judge[0])] += vote.judgement
    scores: list[float | None] = []
    for vote in votes:
        if vote.judgement == 0:
            scores.append(0.0)
            continue
        pair = (vote.first, vote.second)
        consensus = margin[pair] - (own[(*pair, vote.judge[0])] if leave_one_out else 0)
        scores.append(None if consensus == 0 else (1.0 if consensus * vote.judgement > 0 else -1.0))
    return scores


def peers_choice(
    debate: DebateRecord, refs: Sequence[StepRef], votes: Sequence[ResolvedVote], read_answer: AnswerReader
) -> dict[StepRef, float]:
    """What each revision no vote judges earns under ``revisions = "peers_choice"``: each answer's
    Borda score over the votes of the revision's *other* agents (a win 1, a tie ½ each; a vote
    between two responses of the same answer left out); +1 when the revision's answer alone scores
    highest, -1 when another answer does, 0 when none alone does (or it reads no answer)."""
    answer_of = {
        ref: read_answer(turn.response.solution) if not turn.failed else None
        for ref, turn in zip(refs, debate.turns, strict=True)
    }
    judged = {ref for vote in votes for ref in (vote.first, vote.second)}
    earned: dict[StepRef, float] = {}
    for ref, turn in zip(refs, debate.turns, strict=True):
        if ref[1] == 0 or ref in judged or turn.failed:
            continue
        scores: dict[str, float] = {}
        for vote in votes:
            first, second = answer_of[vote.first], answer_of[vote.second]
            if vote.judge[0] == ref[0] or first is None or second is None or first == second:
                continue
            scores[first] = scores.get(first, 0.0) + (0.5 if vote.judgement == 0 else float(vote.judgement > 0))
            scores[second] = scores.get(second, 0.0) + (0.5 if vote.judgement == 0 else float(vote.judgement < 0))
        ranked = sorted(scores.items(), key=lambda item: -item[1])
        if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]) or answer_of[ref] is None:
            earned[ref] = 0.0
        else:
            earned[ref] = 1.0 if answer_of[ref] == ranked[0][0] else -1.0
    return earned


def v2_breakdown(debate: DebateRecord, options: V2Options, read_answer: AnswerReader | None = None) -> V2Breakdown:
    """Resolve votes, then compute generator and judge rewards per response (no lambdas);
    ``read_answer`` reads answers for ``revisions = "peers_choice"``."""
    votes = resolve_votes(debate)
    refs, resolved = votes.refs, votes.resolved

    votes_for: Counter[StepRef] = Counter()
    votes_against: Counter[StepRef] = Counter()
    for vote in resolved:
        if vote.judgement != 0:
            winner, loser = (vote.first, vote.second) if vote.judgement > 0 else (vote.second, vote.first)
            votes_for[winner] += 1
            votes_against[loser] += 1
    generator = {ref: ratio(votes_for[ref], votes_against[ref]) for ref in refs}
    if options.revisions == "peers_choice":
        if read_answer is None:
            raise ValueError("v2 with revisions = 'peers_choice' needs an answer reader")
        generator.update(peers_choice(debate, refs, resolved, read_answer))

    signals: dict[StepRef, list[float]] = {ref: [] for ref in votes.judge_steps}
    tied = 0
    if options.judge_consensus == "others_ranking":
        earnings = ranking_scores(resolved)
    else:
        earnings = judge_scores(resolved, options.judge_leave_one_out)
    for vote, earned in zip(resolved, earnings, strict=True):
        if earned is None:
            tied += 1
            earned = 0.0
        signals[vote.judge].append(earned)
    judge = {ref: mean(signals.get(ref, ())) for ref in refs}
    if options.format_penalty:
        for ref in votes.missing:
            judge[ref] += options.format_penalty_value
    return V2Breakdown(
        generator=generator,
        judge=judge,
        resolved=resolved,
        unresolved=votes.unresolved,
        missing_comparisons=votes.missing,
        tied_votes=tied,
        invalid_lines=votes.invalid_lines,
        malformed=votes.malformed,
        self_comparisons=votes.self_comparisons,
    )


def _per_agent(values: dict[StepRef, float], num_agents: int) -> tuple[tuple[float, ...], ...]:
    """agent -> its steps' values in order (keys are ``(agent, position)``, positions 0..n-1)."""
    rows: list[list[float]] = [[] for _ in range(num_agents)]
    for (agent, _position), value in sorted(values.items()):
        if 0 <= agent < num_agents:
            rows[agent].append(value)
    return tuple(tuple(row) for row in rows)


class V2Reward:
    """The v2 reward: per-step generator and judge streams, weighted by lambdas; ``read_answer``
    reads a solution's answer for ``revisions = "peers_choice"``."""

    def __init__(self, options: V2Options | None = None, read_answer: AnswerReader | None = None) -> None:
        self.options = options or V2Options()
        self.read_answer = read_answer

    def __call__(self, debate: DebateRecord) -> RewardResult:
        parts = v2_breakdown(debate, self.options, self.read_answer)
        generator = _per_agent(parts.generator, debate.num_agents)
        judge = _per_agent(parts.judge, debate.num_agents)
        return RewardResult(
            agent_rewards=tuple(mean(steps) for steps in generator),
            step_streams={GENERATOR_STREAM: generator, JUDGE_STREAM: judge},
            section_streams={**V2_SECTION_STREAMS, "evaluation": self.options.evaluation_stream},
            default_stream=GENERATOR_STREAM if self.options.other_tokens == "generator" else UNSCORED_STREAM,
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
        "v2/tied_consensus_votes": float(parts.tied_votes),
        "reward/gen/mean": mean(parts.generator.values()),
        "reward/judge/mean": mean(parts.judge.values()),
    }
