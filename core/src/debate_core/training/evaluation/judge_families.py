"""The pairs of each judge-benchmark family (docs/training.md#the-judge-benchmark), and the whole
benchmark run over the families an evaluation asks for (``evaluation.judge_families``).

Every family pairs a problem's correct reference solution with another solution (the module
docstring of ``training.evaluation.judge_benchmark`` defines them). The pairs of ``slip``, ``far``,
``bare`` and ``both_right`` are drawn from seeds of their own, so they are the same in every
evaluation of a run (their per-problem accuracy is kept for paired changes); ``own``'s come
from the policy under evaluation, so its problems differ between evaluations and its changes
are independent, or, with ``evaluation.judge_own_answers = "opponent"``, from the fixed
opponent, the same at every evaluation.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping, Sequence

import attrs

from debate_core.config.sections import JUDGE_FAMILIES, JudgeFamily, WarmstartFlaw
from debate_core.debate.setup import DebateSetup
from debate_core.records import AgentPolicy, DebateEpisode, Grader, SampledAction, Tokenizer, Turn
from debate_core.stats import mean
from debate_core.tasks.flaws import AnswerFlaws, FlawedSolution
from debate_core.training.evaluation.judge_benchmark import (
    JudgeCase,
    Judgement,
    benchmark_jobs,
    benchmark_metrics,
    judgements_of,
)
from debate_core.training.kernel.reference_debates import Lesson, bare_right, wrong_solution
from debate_core.training.kernel.rollouts import DebateJob
from debate_core.training.seeding import derive_seed

OWN_SAMPLES = 4
"""Blind round-1 answers of the policy sampled per problem for the ``own`` family."""

_WRONG_KIND: dict[JudgeFamily, WarmstartFlaw] = {"slip": "slip", "far": "far", "bare": "bare"}
"""The families whose other solution is a wrong one, written as the warm-start's wrong first answers."""

RunDebates = Callable[[DebateSetup, Sequence[DebateJob], str], Awaitable[list[DebateEpisode]]]
"""Runs debates under a setup with a progress label (the evaluator's ``_run``)."""

__all__ = [
    "JUDGE_FAMILIES",
    "OWN_SAMPLES",
    "FamilyResult",
    "JudgeBenchmarkRun",
    "JudgeFamily",
    "family_case",
    "family_cases",
    "has_slip_pairs",
    "own_case",
    "own_counts",
    "own_samples",
    "run_judge_families",
]


def family_case(
    family: JudgeFamily, index: int, lesson: Lesson, answer_flaws: AnswerFlaws, seed: int, template: str
) -> JudgeCase | None:
    """Problem ``index``'s pair in ``family`` (not ``own``), drawn from a seed of its own; ``None``
    when the family has none for it (``far`` on a non-integer answer, say)."""
    parts = () if family == "slip" else (family,)
    rng = random.Random(derive_seed(seed, "judge-pair", *parts, index))
    if family == "both_right":
        right = bare_right(lesson, template)
        return None if right is None else JudgeCase(lesson, right, family, expected="=")
    kind = _WRONG_KIND.get(family)
    if kind is None:
        raise ValueError(f"no fixed pairs for judge family {family!r}")
    wrong = wrong_solution(kind, lesson, answer_flaws, rng, template)
    if wrong is None:
        return None
    return JudgeCase(lesson, wrong) if family == "slip" else JudgeCase(lesson, wrong, family)


def own_case(lesson: Lesson, samples: Sequence[Turn]) -> JudgeCase | None:
    """The ``own`` pair: the first of the policy's sampled answers that the grader reads and marks
    wrong, against the reference solution; ``None`` when there is none."""
    for turn in samples:
        if turn.failed:
            continue
        grade = lesson.grader.grade(turn.response.solution, lesson.answer)
        if grade.formatted and not grade.correct and grade.extracted is not None:
            return JudgeCase(lesson, FlawedSolution(turn.response.solution, grade.extracted, "own"), "own")
    return None


@attrs.frozen
class FamilyResult:
    """The benchmark's metrics of every family, and the per-problem accuracy of those whose
    problems are the same in every evaluation."""

    metrics: dict[str, float]
    per_problem: dict[str, list[float]]


@attrs.frozen
class JudgeBenchmarkRun:
    """What the benchmark runs on: the judge, the lessons of the evaluation problems, and how."""

    judge: AgentPolicy
    lessons: Sequence[tuple[int, Lesson]]
    answer_flaws: AnswerFlaws
    seed: int
    template: str
    tokenizer: Tokenizer
    grader: Grader


async def own_samples(
    run: JudgeBenchmarkRun, setup: DebateSetup, run_debates: RunDebates, label: str, whose: str = "its own"
) -> dict[int, list[Turn]]:
    """Up to :data:`OWN_SAMPLES` blind round-1 answers of ``run.judge`` per problem: the answers of
    as many blind rounds (``setup``: the direct answers' setup) as needed, in agent order."""
    n = setup.num_agents
    rounds = -(-OWN_SAMPLES // n)
    jobs = [
        DebateJob(
            lesson.problem,
            (run.judge,) * n,
            derive_seed(run.seed, "eval-judge-own", index, r),
            f"eval-judge-own-sample-{index}-{r}",
        )
        for index, lesson in run.lessons
        for r in range(rounds)
    ]
    episodes = await run_debates(setup, jobs, f"{label}: judge benchmark, {whose} answers")
    return {
        index: [t for e in episodes[k * rounds : (k + 1) * rounds] for t in e.record.turns][:OWN_SAMPLES]
        for k, (index, _) in enumerate(run.lessons)
    }


def has_slip_pairs(run: JudgeBenchmarkRun) -> bool:
    """Whether any problem has a ``slip`` pair (the benchmark's own family needs one)."""
    return any(family_case("slip", i, lesson, run.answer_flaws, run.seed, run.template) for i, lesson in run.lessons)


def family_cases(
    run: JudgeBenchmarkRun, families: Sequence[JudgeFamily], samples: Mapping[int, list[Turn]]
) -> dict[JudgeFamily, list[tuple[int, JudgeCase]]]:
    """Every family's pairs, in problem order."""
    out: dict[JudgeFamily, list[tuple[int, JudgeCase]]] = {}
    for family in families:
        cases = []
        for index, lesson in run.lessons:
            if family == "own":
                case = own_case(lesson, samples.get(index, []))
            else:
                case = family_case(family, index, lesson, run.answer_flaws, run.seed, run.template)
            if case is not None:
                cases.append((index, case))
        out[family] = cases
    return out


async def run_judge_families(
    run: JudgeBenchmarkRun,
    families: Sequence[JudgeFamily],
    setups: tuple[DebateSetup, DebateSetup],
    run_debates: RunDebates,
    prefix: str,
    label: str,
    blind_answers: Mapping[int, list[Turn]] | None = None,
    own_answerer: AgentPolicy | None = None,
) -> FamilyResult:
    """The benchmark over ``families``: each pair in both orders (the order-``a`` debates of every
    family at once, then the order-``b`` ones), the judge's blind round 1 sampled once per problem
    and replayed in every pair of it. ``setups`` are the benchmark's debate and the direct
    answers'; ``blind_answers``, the direct answers of this evaluation by problem index, are the
    ``own`` family's samples when given (at least :data:`OWN_SAMPLES` each; sampled otherwise, from
    ``own_answerer`` when given: another policy, whose wrong answers the judge is then tried on)."""
    judge_setup, direct = setups
    samples: Mapping[int, list[Turn]] = {}
    if "own" in families and blind_answers is not None:
        samples = blind_answers
    elif "own" in families and own_answerer is not None:
        answerer = attrs.evolve(run, judge=own_answerer)
        samples = await own_samples(answerer, direct, run_debates, label, whose="the opponent's")
    elif "own" in families:
        samples = await own_samples(run, direct, run_debates, label)
    cases = family_cases(run, families, samples)
    pairs = [case for family in families for case in cases[family]]
    by_problem: dict[int, list[SampledAction]] = {}
    first_turns = [by_problem.setdefault(index, []) for index, _ in pairs]
    await judge_round_one(run, pairs, first_turns, judge_setup, run_debates, label)
    both: list[list[Judgement]] = []
    for order in (0, 1):
        jobs = benchmark_jobs(pairs, run.judge, first_turns, order, run.seed, run.tokenizer, judge_setup)
        episodes = await run_debates(judge_setup, jobs, f"{label}: judge benchmark, pairs in order {'ab'[order]}")
        both.append(judgements_of(episodes, pairs, order, run.grader))
    metrics: dict[str, float] = {}
    per_problem: dict[str, list[float]] = {}
    start = 0
    for family in families:
        count = len(cases[family])
        pairs_of = list(zip(both[0][start : start + count], both[1][start : start + count], strict=True))
        start += count
        where = prefix if family == "slip" else f"{prefix}/{family}"
        metrics[f"{where}/num_pairs"] = float(count)
        metrics.update(benchmark_metrics(pairs_of, where))
        if family != "own" or own_answerer is not None:  # the same pairs in every evaluation
            per_problem[f"{where}/accuracy"] = [mean([float(j.verdict == "correct") for j in p]) for p in pairs_of]
    if "own" in families:
        metrics.update(own_counts(run, samples, prefix))
    return FamilyResult(metrics, per_problem)


async def judge_round_one(
    run: JudgeBenchmarkRun,
    pairs: Sequence[tuple[int, JudgeCase]],
    first_turns: Sequence[list[SampledAction]],
    setup: DebateSetup,
    run_debates: RunDebates,
    label: str,
) -> None:
    """Sample the judge's blind round 1 once per problem, into ``first_turns`` (one list per problem,
    shared by its pairs): its prompt shows nobody else, so it is the same in every family and
    order. The debate of a problem's first pair (its ``slip`` pair when it has one, with that
    debate's seed) stops after round 1; its id ends in ``-round1``."""
    first: dict[int, int] = {}
    for position, (index, _) in enumerate(pairs):
        first.setdefault(index, position)
    chosen = [pairs[position] for position in first.values()]
    recorded = [first_turns[position] for position in first.values()]
    jobs = benchmark_jobs(chosen, run.judge, recorded, 0, run.seed, run.tokenizer, setup, id_suffix="round1")
    await run_debates(attrs.evolve(setup, stop_after_round=1), jobs, f"{label}: judge benchmark, round 1")


def own_counts(run: JudgeBenchmarkRun, samples: Mapping[int, list[Turn]], prefix: str) -> dict[str, float]:
    """How many problems the ``own`` family skipped: every sampled answer right, and no sampled
    answer both readable and wrong (those included)."""
    all_right = no_wrong = 0
    for index, lesson in run.lessons:
        turns = samples.get(index, [])
        grades = [lesson.grader.grade(t.response.solution, lesson.answer) for t in turns if not t.failed]
        all_right += int(bool(turns) and len(grades) == len(turns) and all(g.correct for g in grades))
        no_wrong += int(own_case(lesson, turns) is None)
    return {
        f"{prefix}/own/all_right_problems": float(all_right),
        f"{prefix}/own/no_wrong_answer_problems": float(no_wrong),
    }
