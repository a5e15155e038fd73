"""The judge benchmark, evaluation mode ``judge`` (docs/training.md#the-judge-benchmark).

Judging is what the peer reward rests on, so it is measured on its own, on controlled pairs,
in the debate's own round-2 prompt. For every held-out problem with an answer, agent 0 is the
policy and agents 1 and 2 state two solutions of the problem: its correct worked solution and
a plausibly wrong one (the warm-start's flaws: a dropped carry, a digit slip, an off-by-one
for arithmetic; a wrong final answer of the same form for any other dataset). The pair is
shown in both orders. The judge's round 1, blind in both, is sampled once and replayed in the
second order, so its two judgements differ only by the order of the pair; its own answer is
left to it. Its verdict is its round-2 comparison of agents 1 and 2:

* ``correct``: the correct solution ``>`` the wrong one (the only right verdict);
* ``wrong``: the wrong one preferred; ``tie``: ``=``; ``none``: no comparison of the two
  (a response that broke the output contract, or a missing line).

Metrics (``eval_{dataset}/judge/...``), with standard errors over problems:

* ``accuracy``: share of judgements whose verdict is ``correct`` (strict: a tie is wrong);
* ``consistency``: share of problems whose two verdicts are the same; ``flip_rate``: share
  whose two verdicts are strict and prefer different solutions (the position decided);
* ``tie_rate`` and ``no_verdict_rate``: shares of judgements;
* ``own_correct``: share of judgements where the judge's own round-2 answer is right, and
  ``accuracy_own_right`` / ``accuracy_own_wrong`` split by it (binomial standard errors over
  judgements, with their counts).

A judge that always prefers the first position scores 0.5 accuracy and 0 consistency; a
truthful one 1 and 1.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Literal

import attrs

from debate_core.debate.episode import DebateSetup
from debate_core.records import (
    AgentPolicy,
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
from debate_core.tasks.flaws import AnswerFlaws, FlawedSolution
from debate_core.training.rl.rollouts import DebateJob
from debate_core.training.run_components import NamedDataset
from debate_core.training.seeding import derive_seed
from debate_core.training.warmstart.reference_debates import Lesson, ReferenceAgent, lessons_of, plausibly_wrong

Verdict = Literal["correct", "wrong", "tie", "none"]

JUDGE = 0
"""The judged seat: the policy. Agents 1 and 2 state the pair."""


@attrs.frozen
class JudgeCase:
    """One problem's pair: the correct reference solution and a plausibly wrong one."""

    lesson: Lesson
    flawed: FlawedSolution


def judge_cases(
    problems: Sequence[tuple[int, Lesson]], answer_flaws: AnswerFlaws, seed: int
) -> list[tuple[int, JudgeCase]]:
    """A pair for each ``(index, lesson)`` that has a plausibly wrong solution, drawn from a seed
    of its own (the same pairs in every evaluation of a run)."""
    cases = []
    for index, lesson in problems:
        flawed = plausibly_wrong(lesson, answer_flaws, random.Random(derive_seed(seed, "judge-pair", index)))
        if flawed is not None:
            cases.append((index, JudgeCase(lesson, flawed)))
    return cases


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
) -> list[DebateJob]:
    """The debates of one order: ``order`` 0 puts the correct solution at agent 1, 1 at agent 2;
    ``first_turns`` holds each case's recorded round 1 of the judge (empty until sampled)."""
    jobs = []
    for (index, case), recorded in zip(cases, first_turns, strict=True):
        first_answers = (None, case.flawed) if order == 0 else (case.flawed, None)
        pair = tuple(
            ReferenceAgent(seat, case.lesson, first, tokenizer, setup.parser.contract)
            for seat, first in enumerate(first_answers, start=1)
        )
        jobs.append(
            DebateJob(
                case.lesson.problem,
                (FirstTurnReplay(judge, recorded), *pair),
                derive_seed(seed, "eval-judge", index),
                f"eval-judge-{index}-{'ab'[order]}",
            )
        )
    return jobs


def verdict_of(record: DebateRecord, correct_seat: int) -> Verdict:
    """The judge's verdict in its round-2 turn: its first comparison of agents 1 and 2."""
    turn = next((t for t in record.turns if t.agent == JUDGE and t.round == 2), None)
    if turn is None or turn.failed:
        return "none"
    for comparison in turn.comparisons:
        if {comparison.a, comparison.b} == {1, 2}:
            if comparison.op == "=":
                return "tie"
            return "correct" if comparison.a == correct_seat else "wrong"
    return "none"


def own_answer_right(record: DebateRecord, grader: Grader, answer: str) -> bool:
    """Whether the judge's round-2 solution (its answer when it judged) is right."""
    turn = next((t for t in record.turns if t.agent == JUDGE and t.round == 2), None)
    return turn is not None and not turn.failed and grader.grade(turn.response.solution, answer).correct


@attrs.frozen
class Judgement:
    """One judgement of one pair in one order."""

    verdict: Verdict
    own_right: bool


def _binomial(successes: int, total: int) -> tuple[float, float]:
    share = successes / total
    return share, math.sqrt(share * (1.0 - share) / total)


def benchmark_metrics(pairs: Sequence[tuple[Judgement, Judgement]], prefix: str) -> dict[str, float]:
    """The benchmark's metrics of ``(first order, second order)`` judgements per problem."""
    if not pairs:
        return {}
    judgements = [j for pair in pairs for j in pair]
    per_problem = [mean([float(a.verdict == "correct"), float(b.verdict == "correct")]) for a, b in pairs]
    same = [float(a.verdict == b.verdict) for a, b in pairs]
    flips = [float({a.verdict, b.verdict} == {"correct", "wrong"}) for a, b in pairs]
    out = {
        f"{prefix}/num_pairs": float(len(pairs)),
        f"{prefix}/accuracy": mean(per_problem),
        f"{prefix}/accuracy_se": standard_error(per_problem),
        f"{prefix}/consistency": mean(same),
        f"{prefix}/consistency_se": standard_error(same),
        f"{prefix}/flip_rate": mean(flips),
        f"{prefix}/tie_rate": mean([float(j.verdict == "tie") for j in judgements]),
        f"{prefix}/no_verdict_rate": mean([float(j.verdict == "none") for j in judgements]),
        f"{prefix}/own_correct": mean([float(j.own_right) for j in judgements]),
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
            verdict_of(episode.record, correct_seat),
            own_answer_right(episode.record, grader, case.lesson.answer),
        )
        for episode, (_, case) in zip(episodes, cases, strict=True)
    ]


__all__ = [
    "FirstTurnReplay",
    "JudgeCase",
    "Judgement",
    "Verdict",
    "benchmark_jobs",
    "benchmark_lessons",
    "benchmark_metrics",
    "benchmark_setup",
    "judge_cases",
    "judgements_of",
    "verdict_of",
]
