"""The judge benchmark, evaluation mode ``judge`` (docs/training.md#the-judge-benchmark).

Judging is what the peer reward rests on, so it is measured on its own, on controlled pairs,
in the debate's own round-2 prompt. For every held-out problem with an answer, agent 0 is the
policy and agents 1 and 2 state two solutions of the problem in round 1. A *family* says what
the pair is (``evaluation.judge_families``; ``training.evaluation.judge_families`` builds them):

* ``slip``: the correct worked solution and a plausibly wrong one (the warm-start's flaws: a
  dropped carry, a digit slip, an off-by-one for arithmetic; a wrong final answer of the same
  form for any other dataset);
* ``own``: the correct worked solution and a wrong answer of the policy itself (its blind
  round-1 answer, up to four of them: the evaluation's direct answers when it has four or more
  per problem, else sampled; problems it always answers right are skipped);
* ``far``: the correct worked solution and the same working with a final answer 11 to 39 away
  (integer answers only);
* ``bare``: the correct worked solution and a wrong answer stated with no working;
* ``both_right``: the correct worked solution and the right answer stated with no working:
  two right answers, where the right verdict is ``=``.

The pair is shown in both orders. The judge's round 1, blind, is sampled once per problem and
replayed in every pair of the problem in both orders, so its judgements differ only by the pair
and its order; its own answer is left to it. Its verdict is its round-2 comparison of agents 1 and 2:

* ``correct``: the right verdict: the correct solution ``>`` the wrong one, or for two right
  answers ``=``;
* ``wrong``: any other comparison of the two; ``tie``: ``=`` (wrong, except for two right
  answers, where a tie is ``correct`` and counted as a tie too); ``none``: no comparison of the
  two (a response that broke the output contract, or a missing line).

Metrics (``eval_{dataset}/judge/...`` for ``slip``, ``eval_{dataset}/judge/<family>/...`` for
the others), with standard errors over problems:

* ``accuracy``: share of judgements whose verdict is ``correct`` (strict: a tie is wrong for a
  wrong answer; for ``both_right`` the share of ties);
* ``consistency``: share of problems whose two verdicts are the same, and, where strict, prefer
  the same solution; ``flip_rate``: share whose two verdicts are strict and prefer different
  solutions (the position decided);
* ``tie_rate`` and ``no_verdict_rate``: shares of judgements;
* ``own_correct``: share of judgements where the judge's own round-2 answer is right;
  ``own_correct_round1``: the same for its blind round-1 answer; ``own_correct_shift``: the
  first minus the second (what reading the pair did to its own answer; ``_se`` over problems);
  ``accuracy_own_right`` / ``accuracy_own_wrong`` split accuracy by whether the round-2 answer
  is right (binomial standard errors over judgements, with their counts).

What scripted judges score, on every problem (``tests/training/test_judge_benchmark.py``): a
judge that always prefers the first position, 0.5 accuracy and 0 consistency on a wrong-answer
family, 0 accuracy (no ties) and 0 consistency on ``both_right``; a truthful one (the stated
answer that is right is better; two right ones are equal), 1 and 1 on every family; one that
ties everything, 0 accuracy and 1 consistency on a wrong-answer family, 1 and 1 on
``both_right``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import attrs

from debate_core.debate.setup import DebateSetup
from debate_core.records import (
    AgentPolicy,
    Comparison,
    DebateEpisode,
    DebateRecord,
    Grader,
    Problem,
    SampledAction,
    StopCondition,
    Tokenizer,
    TurnView,
    ViewingPolicy,
)
from debate_core.stats import mean, standard_error
from debate_core.tasks.flaws import FlawedSolution
from debate_core.training.kernel.reference_debates import Lesson, ReferenceAgent, lessons_of
from debate_core.training.kernel.rollouts import DebateJob
from debate_core.training.run_components import NamedDataset
from debate_core.training.seeding import derive_seed

Verdict = Literal["correct", "wrong", "tie", "none"]

JUDGE = 0
"""The judged seat: the policy. Agents 1 and 2 state the pair."""


RightVerdict = Literal[">", "="]
"""The right verdict on a pair: the correct solution ``>`` the other, or ``=`` (two right answers)."""


@attrs.frozen
class JudgeCase:
    """One problem's pair: the correct reference solution and another solution of the problem,
    ``other`` (a wrong one, or for ``expected = "="`` a second right one), in a family."""

    lesson: Lesson
    other: FlawedSolution
    family: str = "slip"
    expected: RightVerdict = ">"


def benchmark_lessons(
    problems: Sequence[Problem], dataset: NamedDataset, grader: Grader, template: str
) -> list[tuple[int, Lesson]]:
    """``(problem index, lesson)`` for every evaluation problem with a reference solution."""
    lessons, _ = lessons_of(problems, dataset, grader, template)
    position = {id(p): i for i, p in enumerate(problems)}
    return [(position[id(lesson.problem)], lesson) for lesson in lessons]


@attrs.define
class FirstTurnReplay:
    """The judge's policy in one debate: its first turn is sampled when ``recorded`` is empty (and
    kept there) and replayed verbatim when it is not, so the two debates of a pair, given the same
    ``recorded`` list, share the judge's round 1."""

    policy: AgentPolicy
    recorded: list[SampledAction]
    calls: int = 0

    async def sample_with_view(
        self,
        prompt: Sequence[int],
        view: TurnView,
        *,
        stop: StopCondition,
        temperature: float,
        max_tokens: int,
        seed: int | None,
    ) -> SampledAction:
        """The recorded first turn, or the wrapped policy's sample (with the view, when it reads one)."""
        self.calls += 1
        if self.calls == 1 and self.recorded:
            return self.recorded[0]
        if isinstance(self.policy, ViewingPolicy):
            action = await self.policy.sample_with_view(
                prompt, view, stop=stop, temperature=temperature, max_tokens=max_tokens, seed=seed
            )
        else:
            action = await self.policy.sample(
                prompt, stop=stop, temperature=temperature, max_tokens=max_tokens, seed=seed
            )
        if self.calls == 1:
            self.recorded.append(action)
        return action

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        raise TypeError("the judge's policy answers through sample_with_view")


def benchmark_setup(setup: DebateSetup) -> DebateSetup:
    """The run's debate for three agents, ended after round 2 (the judge's verdict is there)."""
    return attrs.evolve(setup, num_agents=3, max_rounds=max(2, setup.max_rounds), stop_after_round=2)


def benchmark_jobs(
    cases: Sequence[tuple[int, JudgeCase]],
    judge: AgentPolicy,
    first_turns: Sequence[list[SampledAction]],
    order: int,
    seed: int,
    tokenizer: Tokenizer,
    setup: DebateSetup,
    id_suffix: str | None = None,
) -> list[DebateJob]:
    """The debates of one order: ``order`` 0 puts the correct solution at agent 1, 1 at agent 2;
    ``first_turns`` holds each case's recorded round 1 of the judge (empty until sampled). A
    ``slip`` debate is ``eval-judge-I-a`` (``-b``), another family's ``eval-judge-FAMILY-I-a``;
    ``id_suffix`` replaces the order's letter there."""
    jobs = []
    for (index, case), recorded in zip(cases, first_turns, strict=True):
        first_answers = (None, case.other) if order == 0 else (case.other, None)
        family = () if case.family == "slip" else (case.family,)
        pair = tuple(
            ReferenceAgent(seat, case.lesson, first, tokenizer, setup.parser.contract)
            for seat, first in enumerate(first_answers, start=1)
        )
        jobs.append(
            DebateJob(
                case.lesson.problem,
                (FirstTurnReplay(judge, recorded), *pair),
                derive_seed(seed, "eval-judge", *family, index),
                "-".join(("eval-judge", *family, str(index), id_suffix or "ab"[order])),
            )
        )
    return jobs


def judged_comparison(record: DebateRecord) -> Comparison | None:
    """The judge's round-2 comparison of agents 1 and 2 (its first one); ``None`` when its turn
    broke the output contract or compared them nowhere."""
    turn = next((t for t in record.turns if t.agent == JUDGE and t.round == 2), None)
    if turn is None or turn.failed:
        return None
    return next((c for c in turn.comparisons if {c.a, c.b} == {1, 2}), None)


def verdict_of(record: DebateRecord, correct_seat: int, expected: RightVerdict = ">") -> Verdict:
    """The judge's verdict in its round-2 turn: its first comparison of agents 1 and 2, judged
    against ``expected`` (``>``: the agent at ``correct_seat`` is better; ``=``: they are equal)."""
    comparison = judged_comparison(record)
    if comparison is None:
        return "none"
    if comparison.op == "=":
        return "correct" if expected == "=" else "tie"
    return "correct" if expected == ">" and comparison.a == correct_seat else "wrong"


def preference_of(record: DebateRecord, correct_seat: int) -> int:
    """+1 when the judge's round-2 comparison prefers the agent at ``correct_seat`` (the
    reference solution), -1 the other, 0 a tie or no comparison."""
    comparison = judged_comparison(record)
    if comparison is None or comparison.op == "=":
        return 0
    return 1 if comparison.a == correct_seat else -1


def own_answer_right(record: DebateRecord, grader: Grader, answer: str, round: int = 2) -> bool:
    """Whether the judge's solution of ``round`` (2: its answer when it judged) is right."""
    turn = next((t for t in record.turns if t.agent == JUDGE and t.round == round), None)
    return turn is not None and not turn.failed and grader.grade(turn.response.solution, answer).correct


@attrs.frozen
class Judgement:
    """One judgement of one pair in one order."""

    verdict: Verdict
    own_right: bool
    round1_right: bool = False
    """The judge's blind round-1 answer (the same in both orders) is right."""
    expected: RightVerdict = ">"
    preferred: int | None = None
    """+1: the judge preferred the reference solution, -1: the other one, 0: neither (a tie or
    no verdict); ``None``: read from the verdict (a ``>`` pair's ``correct`` is +1, ``wrong`` -1)."""

    @property
    def tied(self) -> bool:
        """The judge called the two solutions equal (right only for two right answers)."""
        return self.verdict == "tie" or (self.expected == "=" and self.verdict == "correct")

    @property
    def side(self) -> int:
        """Which solution the judge preferred (:attr:`preferred`)."""
        if self.preferred is not None:
            return self.preferred
        return {"correct": 1, "wrong": -1}.get(self.verdict, 0) if self.expected == ">" else 0


def _binomial(successes: int, total: int) -> tuple[float, float]:
    share = successes / total
    return share, math.sqrt(share * (1.0 - share) / total)


def benchmark_metrics(pairs: Sequence[tuple[Judgement, Judgement]], prefix: str) -> dict[str, float]:
    """The benchmark's metrics of ``(first order, second order)`` judgements per problem."""
    if not pairs:
        return {}
    judgements = [j for pair in pairs for j in pair]
    per_problem = [mean([float(a.verdict == "correct"), float(b.verdict == "correct")]) for a, b in pairs]
    same = [float((a.verdict, a.side) == (b.verdict, b.side)) for a, b in pairs]
    flips = [float(a.side * b.side == -1) for a, b in pairs]
    shift = [mean([float(j.own_right) - float(j.round1_right) for j in pair]) for pair in pairs]
    out = {
        f"{prefix}/num_pairs": float(len(pairs)),
        f"{prefix}/accuracy": mean(per_problem),
        f"{prefix}/accuracy_se": standard_error(per_problem),
        f"{prefix}/consistency": mean(same),
        f"{prefix}/consistency_se": standard_error(same),
        f"{prefix}/flip_rate": mean(flips),
        f"{prefix}/tie_rate": mean([float(j.tied) for j in judgements]),
        f"{prefix}/no_verdict_rate": mean([float(j.verdict == "none") for j in judgements]),
        f"{prefix}/own_correct": mean([float(j.own_right) for j in judgements]),
        f"{prefix}/own_correct_round1": mean([float(j.round1_right) for j in judgements]),
        f"{prefix}/own_correct_shift": mean(shift),
        f"{prefix}/own_correct_shift_se": standard_error(shift),
    }
    for name, own_right in (("own_right", True), ("own_wrong", False)):
        group = [j for j in judgements if j.own_right == own_right]
        out[f"{prefix}/{name}_judgements"] = float(len(group))
        if group:
            share, error = _binomial(sum(j.verdict == "correct" for j in group), len(group))
            out[f"{prefix}/accuracy_{name}"] = share
            out[f"{prefix}/accuracy_{name}_se"] = error
    return out


def judgements_of(
    episodes: Sequence[DebateEpisode], cases: Sequence[tuple[int, JudgeCase]], order: int, grader: Grader
) -> list[Judgement]:
    """The judgements of one order's debates, in case order."""
    correct_seat = 1 if order == 0 else 2
    return [
        Judgement(
            verdict_of(episode.record, correct_seat, case.expected),
            own_answer_right(episode.record, grader, case.lesson.answer),
            own_answer_right(episode.record, grader, case.lesson.answer, round=1),
            case.expected,
            preference_of(episode.record, correct_seat),
        )
        for episode, (_, case) in zip(episodes, cases, strict=True)
    ]


__all__ = [
    "FirstTurnReplay",
    "JudgeCase",
    "Judgement",
    "RightVerdict",
    "Verdict",
    "benchmark_jobs",
    "benchmark_lessons",
    "benchmark_metrics",
    "benchmark_setup",
    "judged_comparison",
    "judgements_of",
    "preference_of",
    "verdict_of",
]
