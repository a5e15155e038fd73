"""Held-out evaluation: direct answers, self-play debates, and role-averaged debates against
a fixed opponent (docs/training.md#evaluation).

* ``direct``: one answer per agent, no debate: the blind first round of the same debate
  (parallel, so nobody sees anybody; the same personas and prompts, which still say
  ``Round 1 of max_rounds``), stopped after that round; ``k`` answers per problem (the first
  ``k`` agents' answers of as many such rounds as needed): ``format``, ``correct`` (mean over
  answers), ``pass@k``, ``avg@k``, ``cons@k`` (the majority answer).
* ``debate``: ``evaluation.debates_per_problem`` self-play debates per problem, the policy in
  every role: the same metrics over the agents' final answers (a problem's figure is the mean
  over its debates), ``cons@k`` (the debate's own final answer), judge accuracy,
  answer changes, and the debate diagnostics (``parse_error``, ``rounds_played``,
  ``comparison_rate``, ...).
* ``judge``: the judge benchmark (``training.evaluation.judge_benchmark``): the policy, in the debate's
  round-2 prompt, judges a correct and another solution of each problem in both orders, for
  each family of ``evaluation.judge_families`` (``training.evaluation.judge_families``): strict accuracy,
  position consistency, tie rate, its own answer before and after reading the pair.
* with both: ``debate_minus_direct``, the paired difference per problem between the debate's
  final answer and the mean direct answer, with its standard error (kept per problem too, so
  its change between evaluations is paired); with ``debate`` or ``runoff`` too, voting at that
  mode's cost (``training.evaluation.matched_cost``), paired per problem.
* ``runoff``: judging between the two most held of several blind answers where they disagree
  (``training.evaluation.runoff``).
* role-averaged (``evaluation.role_averaged``): for each problem N debates; in debate ``i`` the
  policy plays role ``i`` and the fixed opponent (``evaluation.opponent``: the base model or any
  checkpoint) the others. Reported for the policy's role, with or without a grader: its peer
  win rate (``peer_win_rate``: the leave-one-out ``W_i / V_i`` of the ``win_rate`` reward for
  the policy's seat, 0 without a vote, averaged over its N seats per problem; ``_se`` over
  problems) and the fixed opponents' beside it, the votes its seat received, ``parse_error``;
  with a grader also ``format``, ``correct`` of its final answer, its ``judge_accuracy``, and
  the opponent's ``correct``.

Names: ``eval_{dataset}/{mode}/{metric}``. Every evaluation uses the same problems and seeds,
so evaluations during one run are paired comparisons.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Sequence

import attrs

from debate_core.backends.contract import SamplingClientLike
from debate_core.config.sections import EvaluationSettings, RunConfig
from debate_core.debate.coordinators import ParallelCoordinator
from debate_core.debate.final_answer import rules_side_by_side
from debate_core.debate.setup import DebateSetup
from debate_core.errors import DebateError
from debate_core.plugin import ComponentBuilder
from debate_core.records import AgentPolicy, DebateEpisode, DebateRecord, Problem, Turn, tally_votes
from debate_core.rewards import win_rate_rewards
from debate_core.runtime.retries import RetryingSamplingClient, retry_policy
from debate_core.runtime.session import open_session_async
from debate_core.stats import mean, paired_difference, standard_error
from debate_core.tasks.flaws import AnswerFlaws
from debate_core.training.correctness import (
    JudgeTally,
    grade_debate,
    grade_samples,
    problem_means,
    verifiable_metrics,
)
from debate_core.training.evaluation.judge_benchmark import benchmark_lessons, benchmark_setup
from debate_core.training.evaluation.judge_families import (
    OWN_SAMPLES,
    JudgeBenchmarkRun,
    has_slip_pairs,
    run_judge_families,
)
from debate_core.training.evaluation.matched_cost import (
    answer_costs,
    matched_voting,
    samples_at_cost,
    tokens_per_sample,
)
from debate_core.training.evaluation.policy_debate import evaluation_setup
from debate_core.training.evaluation.runoff import (
    runoff_metrics,
    runoff_setup,
)
from debate_core.training.kernel.debate_metrics import debate_metrics, turn_metrics
from debate_core.training.kernel.rollouts import DebateJob, run_debates, sampled_tokens
from debate_core.training.policy_weights import PolicyWeights, opponent_client, resolve_opponent
from debate_core.training.progress import Progress
from debate_core.training.run_components import RunComponents, build_run_components
from debate_core.training.seeding import derive_seed


class EvaluationError(DebateError):
    """Evaluation cannot run as configured."""


def direct_setup(setup: DebateSetup) -> DebateSetup:
    """The debate setup of direct answers: the same debate under parallel rounds (its first round
    is blind), stopped after round 1."""
    return attrs.evolve(setup, coordinator=ParallelCoordinator(), stop_after_round=1)


def evaluation_problems(parts: RunComponents, split: str, limit: int) -> list[Problem]:
    """The first ``limit`` problems of the evaluation split."""
    problems = parts.eval_dataset.problems(split)[:limit]
    if limit > 0 and not problems:
        raise EvaluationError(
            f"dataset '{parts.eval_dataset.name}' has no '{split}' problems to evaluate on; "
            "set evaluation.split to a split it has, or evaluation.num_problems = 0"
        )
    return problems


def _debate_job(problem: Problem, seats: tuple[AgentPolicy, ...], seed: int, index: int, repeat: int) -> DebateJob:
    """Self-play debate ``repeat`` of problem ``index``; the first keeps the seed and name that a
    single debate per problem has always had, so one debate per problem evaluates as before."""
    if repeat == 0:
        return DebateJob(problem, seats, derive_seed(seed, "eval-debate", index), f"eval-debate-{index}")
    return DebateJob(problem, seats, derive_seed(seed, "eval-debate", index, repeat), f"eval-debate-{index}-{repeat}")


@attrs.define
class Evaluator:
    """Runs the configured evaluation modes for one policy."""

    parts: RunComponents
    settings: EvaluationSettings
    seed: int
    max_in_flight: int
    progress: Progress | None = None
    episodes: list[DebateEpisode] = attrs.field(factory=list)
    """Every debate of the last :meth:`evaluate` (to name the one a failure came from)."""
    problems_of_episodes: list[Problem] = attrs.field(factory=list)
    """The problem of each of ``episodes`` (to score and save them)."""
    per_problem: dict[str, list[float]] = attrs.field(factory=dict)
    """Per-problem outcomes of the last ``evaluate`` (metric name -> one value per problem, in
    problem order), for paired comparisons between evaluations."""
    seconds: dict[str, float] = attrs.field(factory=dict)
    """Wall time of each mode of the last ``evaluate`` (``direct``, ``debate``, ``judge``)."""
    _blind_answers: dict[int, list[Turn]] = attrs.field(factory=dict)
    """The direct answers of the last ``evaluate`` by problem index: the judge benchmark's ``own``
    family takes its samples of the policy's blind round-1 answers from them (the same prompts)."""
    _opponent: AgentPolicy | None = None
    """The fixed opponent of the last ``evaluate``, when its settings use one (``uses_opponent``)."""
    _direct_tokens_per_sample: float = 0.0
    """Sampled tokens per direct answer of the last ``evaluate`` (0: none sampled)."""

    @property
    def prefix(self) -> str:
        return f"eval_{self.parts.eval_dataset.name}"

    async def evaluate(
        self,
        policy_client: SamplingClientLike,
        opponent_client: Callable[[], Awaitable[SamplingClientLike]] | None = None,
        label: str = "eval",
    ) -> dict[str, float]:
        """Every configured mode on the evaluation problems; ``{}`` when there are none.
        ``opponent_client`` opens the fixed opponent of role-averaged debates."""
        self.episodes = []
        self.problems_of_episodes = []
        self._blind_answers = {}
        self._direct_tokens_per_sample = 0.0
        self.seconds = {}
        problems = evaluation_problems(self.parts, self.settings.split, self.settings.num_problems)
        if not problems:
            return {}
        policy = self.parts.make_policy(policy_client)
        self._opponent = None
        if self.settings.uses_opponent:
            if opponent_client is None:
                raise EvaluationError("evaluation against the fixed opponent needs its sampling client")
            fixed = await opponent_client()
            if isinstance(policy_client, RetryingSamplingClient):
                fixed = policy_client.sibling(fixed)
            self._opponent = self.parts.make_policy(fixed)
        self.per_problem = {}
        metrics: dict[str, float] = {f"{self.prefix}/num_problems": float(len(problems))}
        modes = {"direct": self._direct, "debate": self._debate, "runoff": self._runoff, "judge": self._judge}
        for mode, run in modes.items():
            if mode in self.settings.modes:
                started = time.perf_counter()
                metrics.update(await run(problems, policy, label))
                self.seconds[mode] = time.perf_counter() - started
        for mode in ("debate", "runoff"):
            if mode in self.settings.modes:
                metrics.update(self._voting_at_cost(problems, mode, metrics))
        direct = self.per_problem.get(f"{self.prefix}/direct/correct")
        debate = self.per_problem.get(f"{self.prefix}/debate/answer_correct")
        if direct is not None and debate is not None and len(direct) == len(debate):
            difference, error = paired_difference(direct, debate)
            metrics[f"{self.prefix}/debate_minus_direct"] = difference
            metrics[f"{self.prefix}/debate_minus_direct_se"] = error
            self.per_problem[f"{self.prefix}/debate_minus_direct"] = [
                b - a for a, b in zip(direct, debate, strict=True)
            ]
        if self.settings.role_averaged and self._opponent is not None:
            metrics.update(await self._role_averaged(problems, policy, self._opponent, label))
        return metrics

    async def _run(self, setup: DebateSetup, jobs: Sequence[DebateJob], label: str) -> list[DebateEpisode]:
        runner = self.parts.runner(setup)
        if self.progress is not None:
            self.progress.start(label, len(jobs))
        progress = self.progress
        episodes = await run_debates(
            runner,
            jobs,
            self.max_in_flight,
            (lambda e: progress.debate_done(sampled_tokens(e))) if progress is not None else None,
        )
        self.episodes.extend(episodes)
        self.problems_of_episodes.extend(job.problem for job in jobs)
        return episodes

    @functools.cached_property
    def _debate_setup(self) -> DebateSetup:
        """The run's setup at the evaluation's temperature, derived once, so that every
        evaluation of the run reuses the same debate runner."""
        return evaluation_setup(self.parts.setup, self.settings)

    @functools.cached_property
    def _direct_setup(self) -> DebateSetup:
        return direct_setup(self._debate_setup)

    def _samples(self) -> int:
        return int(self.settings.num_samples or self.parts.setup.num_agents)

    async def _blind_samples(
        self, problems: list[Problem], policy: AgentPolicy, k: int, label: str
    ) -> tuple[list[list[Turn]], list[DebateEpisode]]:
        """``k`` blind answers per problem: the first ``k`` agents' answers of as many blind first
        rounds as needed, seeded as direct evaluation's, and the rounds' episodes."""
        n = self.parts.setup.num_agents
        rounds = -(-k // n)
        jobs = [
            DebateJob(p, (policy,) * n, derive_seed(self.seed, "eval-direct", i, r), f"eval-direct-{i}-{r}")
            for i, p in enumerate(problems)
            for r in range(rounds)
        ]
        episodes = await self._run(self._direct_setup, jobs, label)
        # an answer lost to an earlier agent's parse error in the same round is not counted
        answers = [
            [turn for e in episodes[i * rounds : (i + 1) * rounds] for turn in e.record.turns][:k]
            for i in range(len(problems))
        ]
        return answers, episodes

    async def _direct(self, problems: list[Problem], policy: AgentPolicy, label: str) -> dict[str, float]:
        k = self._samples()
        answers, episodes = await self._blind_samples(problems, policy, k, f"{label}: direct answers")
        prefix = f"{self.prefix}/direct"
        self._blind_answers = dict(enumerate(answers))
        self._direct_tokens_per_sample = tokens_per_sample(episodes)
        out = {f"{prefix}/parse_error": mean([float(t.failed) for turns in answers for t in turns])}
        grader = self.parts.grader
        if grader is None:
            return out
        graded = [
            grade_samples(turns, grader, problem.answer)
            for problem, turns in zip(problems, answers, strict=True)
            if problem.answer is not None
        ]
        out.update(verifiable_metrics(graded, prefix, k))
        for name in ("judge_decidable_votes", "judge_ties", "round1_disagreement"):
            out.pop(f"{prefix}/{name}", None)
        out.update(answer_costs(episodes, len(problems), prefix))
        out[f"{prefix}/sampled_tokens_per_sample"] = self._direct_tokens_per_sample
        self.per_problem[f"{prefix}/correct"] = [d.avg_at_k for d in graded]
        self.per_problem[f"{prefix}/cons@{k}"] = [d.cons_at_k for d in graded]
        return out

    def _voting_at_cost(self, problems: Sequence[Problem], mode: str, metrics: dict[str, float]) -> dict[str, float]:
        """Voting at the sampled-token cost of one answer of ``mode``, paired per problem with it
        (``training.evaluation.matched_cost``; from direct evaluation's answers)."""
        grader = self.parts.grader
        cost = metrics.get(f"{self.prefix}/{mode}/sampled_tokens_per_answer")
        answered = self.per_problem.get(f"{self.prefix}/{mode}/answer_correct")
        if grader is None or cost is None or answered is None or self._direct_tokens_per_sample <= 0:
            return {}
        k = samples_at_cost(cost, self._direct_tokens_per_sample)
        if k > self._samples():
            return {f"{self.prefix}/{mode}/cons_matched_k_needed": float(k)}
        graded = [i for i, p in enumerate(problems) if p.answer is not None]
        truths = [str(problems[i].answer) for i in graded]
        voting = matched_voting([self._blind_answers[i] for i in graded], truths, answered, k, grader)
        self.per_problem.update(voting.per_problem(self.prefix, mode))
        return voting.metrics(self.prefix, mode)

    async def _runoff(self, problems: list[Problem], policy: AgentPolicy, label: str) -> dict[str, float]:
        """The runoff (``training.evaluation.runoff``): one runoff debate per problem."""
        setup = self._runoff_setup
        n = setup.num_agents
        jobs = [
            DebateJob(p, (policy,) * n, derive_seed(self.seed, "eval-runoff", i), f"eval-runoff-{i}")
            for i, p in enumerate(problems)
        ]
        episodes = await self._run(setup, jobs, f"{label}: runoffs")
        truths = [p.answer for p in problems]
        metrics, correct = runoff_metrics(f"{self.prefix}/runoff", episodes, truths, self.parts.grader)
        if correct is not None:
            self.per_problem[f"{self.prefix}/runoff/answer_correct"] = correct
        return metrics

    @functools.cached_property
    def _runoff_setup(self) -> DebateSetup:
        return runoff_setup(self._debate_setup, self.settings.runoff_candidates, self.settings.runoff_judges)

    async def _debate(self, problems: list[Problem], policy: AgentPolicy, label: str) -> dict[str, float]:
        setup = self._debate_setup
        n = setup.num_agents
        m = self.settings.debates_per_problem
        jobs = [_debate_job(p, (policy,) * n, self.seed, i, r) for i, p in enumerate(problems) for r in range(m)]
        episodes = await self._run(setup, jobs, f"{label}: debates")
        records = [e.record for e in episodes]
        prefix = f"{self.prefix}/debate"
        out = {
            f"{prefix}/{name.removeprefix('debate/')}": v
            for name, v in {**turn_metrics(records), **debate_metrics(records)}.items()
        }
        out.update(answer_costs(episodes, len(episodes), prefix))
        if self.parts.grader is not None:
            rules = rules_side_by_side(setup.answer_rule)
            graded = [
                g
                for g in (
                    grade_debate(e.record, self.parts.grader, job.problem.answer, rules)
                    for e, job in zip(episodes, jobs, strict=True)
                )
                if g is not None
            ]
            out.update(verifiable_metrics(graded, prefix, n, m))
            self.per_problem[f"{prefix}/correct"] = problem_means([d.avg_at_k for d in graded], m)
            self.per_problem[f"{prefix}/cons@{n}"] = problem_means([d.cons_at_k for d in graded], m)
            self.per_problem[f"{prefix}/answer_correct"] = problem_means([d.answer_correct for d in graded], m)
            for position, (name, _) in enumerate(rules):
                per_debate = [float(d.rules[position][1]) for d in graded]
                self.per_problem[f"{prefix}/rule/{name}/correct"] = problem_means(per_debate, m)
        return out

    @functools.cached_property
    def _judge_setup(self) -> DebateSetup:
        return benchmark_setup(self._debate_setup)

    async def _judge(self, problems: list[Problem], policy: AgentPolicy, label: str) -> dict[str, float]:
        """The judge benchmark (``training.evaluation.judge_benchmark``) over ``evaluation.judge_families``:
        each pair in both orders, the judge's round 1 shared between them."""
        grader, tokenizer = self.parts.grader, self.parts.tokenizer
        if grader is None or tokenizer is None:
            raise EvaluationError("evaluation mode 'judge' needs a grader and the policy's tokenizer")
        lessons = benchmark_lessons(problems, self.parts.eval_dataset, grader, self.parts.solution_template)
        flaws = AnswerFlaws(tuple(sorted({p.answer for p in problems if p.answer})))
        families = self.settings.judge_families
        run = JudgeBenchmarkRun(policy, lessons, flaws, self.seed, self.parts.solution_template, tokenizer, grader)
        if not lessons or ("slip" in families and not has_slip_pairs(run)):
            raise EvaluationError(
                f"evaluation mode 'judge' found no problem of dataset '{self.parts.eval_dataset.name}' with a "
                "reference solution and a plausibly wrong one; remove 'judge' from evaluation.modes"
            )
        setups = (self._judge_setup, self._direct_setup)
        answerer = self._opponent if self.settings.judge_own_answers == "opponent" else None
        # the direct answers are the own family's samples when they are the policy's and there are
        # enough of them per problem
        enough = answerer is None and self._blind_answers and self._samples() >= OWN_SAMPLES
        blind = self._blind_answers if enough else None
        result = await run_judge_families(
            run, families, setups, self._run, f"{self.prefix}/judge", label, blind, own_answerer=answerer
        )
        # one value per judged problem, in problem order (the same problems in every evaluation)
        self.per_problem.update(result.per_problem)
        return result.metrics

    async def _role_averaged(
        self, problems: list[Problem], policy: AgentPolicy, opponent: AgentPolicy, label: str
    ) -> dict[str, float]:
        setup = self._debate_setup
        n = setup.num_agents
        jobs = [
            DebateJob(
                p,
                tuple(policy if role == seat else opponent for seat in range(n)),
                derive_seed(self.seed, "eval-roles", i, role),
                f"eval-roles-{i}-{role}",
            )
            for i, p in enumerate(problems)
            for role in range(n)
        ]
        episodes = await self._run(setup, jobs, f"{label}: debates against the fixed opponent")
        prefix = f"{self.prefix}/role_averaged"
        records = [e.record for e in episodes]
        out = {f"{prefix}/parse_error": turn_metrics(records)["parse_error"]}
        out.update(seat_win_rates(records, n, prefix))
        self.per_problem[f"{prefix}/peer_win_rate"] = per_problem_seat_win_rate(records, n)
        grader = self.parts.grader
        if grader is None:
            return out
        formatted: list[float] = []
        correct: list[float] = []
        opponent_correct: list[float] = []
        judge = JudgeTally()
        for index, episode in enumerate(episodes):
            problem = problems[index // n]
            role = index % n
            graded = grade_debate(episode.record, grader, problem.answer)
            if graded is None:
                continue
            mine = graded.final_grades[role]
            formatted.append(float(mine.formatted))
            correct.append(float(mine.correct))
            opponent_correct.extend(float(g.correct) for seat, g in enumerate(graded.final_grades) if seat != role)
            judge = judge + graded.judge_by_agent.get(role, JudgeTally())
        if correct:
            out[f"{prefix}/format"] = mean(formatted)
            out[f"{prefix}/correct"] = mean(correct)
            out[f"{prefix}/opponent_correct"] = mean(opponent_correct)
            out[f"{prefix}/judge_decidable_votes"] = float(judge.decidable)
            if judge.decidable:
                out[f"{prefix}/judge_accuracy"] = judge.agreed / judge.decidable
        return out


def per_problem_seat_win_rate(records: Sequence[DebateRecord], n: int) -> list[float]:
    """Per problem, the policy's peer win rate averaged over its ``n`` seats (debate ``k`` of a
    problem seats the policy at role ``k mod n``)."""
    rates = [win_rate_rewards(tally_votes(r).votes, n)[k % n] for k, r in enumerate(records)]
    return [mean(rates[start : start + n]) for start in range(0, len(rates), n)]


def seat_win_rates(records: Sequence[DebateRecord], n: int, prefix: str) -> dict[str, float]:
    """The role-averaged peer win rates: the policy's seat against the fixed opponents' seats
    (the win-rate reward's ``W_i / V_i``, 0 without a vote), and the votes each seat received."""
    mine = per_problem_seat_win_rate(records, n)
    opponents: list[float] = []
    votes: list[float] = []
    for k, record in enumerate(records):
        tally = tally_votes(record)
        rates = win_rate_rewards(tally.votes, n)
        opponents.extend(rate for seat, rate in enumerate(rates) if seat != k % n)
        votes.append(float(sum(k % n in (v.a, v.b) and v.author != k % n for v in tally.votes)))
    return {
        f"{prefix}/peer_win_rate": mean(mine),
        f"{prefix}/peer_win_rate_se": standard_error(mine),
        f"{prefix}/opponent_peer_win_rate": mean(opponents),
        f"{prefix}/peer_votes": mean(votes),
    }


@attrs.frozen
class PolicyEvaluation:
    """What one evaluation of a policy gives: its metrics and, for every per-problem metric, the
    value of each problem in order (what a later evaluation of the same problems is paired with)."""

    metrics: dict[str, float]
    per_problem: dict[str, list[float]]
    seconds: dict[str, float] = attrs.field(factory=dict, eq=False)
    """Wall time of each mode (timings differ between runs: left out of equality)."""


async def evaluate_policy(
    config: RunConfig,
    registry: ComponentBuilder,
    *,
    weights: PolicyWeights | None = None,
    settings: EvaluationSettings | None = None,
    progress: Progress | None = None,
) -> PolicyEvaluation:
    """Open the backend for sampling only, on saved weights or the base model, and evaluate them.

    ``weights`` are opened with ``create_sampling_client`` (the weights saved for sampling) or,
    without those, from a training state; ``None`` evaluates the untrained base model. No training
    model is started. ``settings`` replaces ``config.evaluation``.
    """
    from debate_core.runtime.sampling_failures import raise_backend_failure

    evaluation = settings or config.evaluation
    fixed_opponent = resolve_opponent(evaluation.opponent) if evaluation.uses_opponent else None
    session = await open_session_async(
        config,
        registry,
        training=False,
        sampler_path=weights.sampler_path if weights else None,
        state_path=weights.state_path if weights and not weights.sampler_path else None,
        retry=retry_policy(config.training),
    )
    status = "errored"
    try:
        parts = build_run_components(config, registry, session.tokenizer)
        evaluator = Evaluator(parts, evaluation, config.run.seed, config.training.max_debates_in_flight, progress)
        sampler = session.sampler()
        opponent = opponent_client(session, fixed_opponent) if evaluation.uses_opponent else None
        metrics = await evaluator.evaluate(sampler, opponent)
        raise_backend_failure(sampler, evaluator.episodes, config)
        status = "success"
        return PolicyEvaluation(metrics, evaluator.per_problem, evaluator.seconds)
    finally:
        await session.close(status)
