"""Held-out evaluation: direct answers, self-play debates, and role-averaged debates against
a fixed opponent (seed 000 "Evaluation mode", seed 002 §3.1).

* ``direct``: one turn, no debate (a one-agent, one-round debate with the same prompts and
  output format), ``k`` independent samples per problem: ``format``, ``correct`` (mean over
  samples), ``pass@k``, ``avg@k``, ``cons@k``.
* ``debate``: a self-play debate per problem, the policy in every role: the same metrics over
  the agents' final answers, ``judge_accuracy``, and the protocol diagnostics
  (``parse_error``, ``consensus_reached``, ``debate/valid_comparison_rate``).
* role-averaged (``evaluation.role_averaged``): for each problem N debates; in debate ``i`` the
  policy plays role ``i`` and the fixed opponent (``evaluation.opponent``: the base model or any
  checkpoint) the others. Reported for the policy's role: ``format``, ``correct`` of its final
  answer, its ``judge_accuracy``, and the opponent's ``correct`` beside it.

Names: ``eval_{dataset}/{mode}/{metric}``. Every evaluation uses the same problems and seeds,
so evaluations during one run are paired comparisons.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from debate_core.backends.contract import SamplingClientLike
from debate_core.errors import DebateError
from debate_core.protocol.interfaces import AgentPolicy, DebateEpisode
from debate_core.protocol.tasks import Problem
from debate_core.training.grading import GradedDebate, JudgeTally, grade_debate, grade_turn, verifiable_metrics
from debate_core.training.metrics import debate_metrics, mean, turn_metrics
from debate_core.training.parts import RetryingSamplingClient, RunParts
from debate_core.training.policy_weights import PolicyWeights, opponent_client, resolve_opponent
from debate_core.training.progress import Progress
from debate_core.training.rollouts import DebateJob, run_debates, sampled_tokens
from debate_core.training.seeding import derive_seed


class EvaluationError(DebateError):
    """Evaluation cannot run as configured."""


def direct_config(config: Any) -> Any:
    """The run config for direct answers: one agent, one round."""
    return attrs.evolve(config, debate=attrs.evolve(config.debate, num_agents=1, max_rounds=1))


def with_temperature(config: Any, temperature: float | None) -> Any:
    """The run config with the evaluation's sampling temperature, when one is set."""
    if temperature is None:
        return config
    return attrs.evolve(config, debate=attrs.evolve(config.debate, temperature=temperature))


def evaluation_problems(parts: RunParts, split: str, limit: int) -> list[Problem]:
    """The first ``limit`` problems of the evaluation split."""
    problems = parts.eval_dataset.problems(split)[:limit]
    if limit > 0 and not problems:
        raise EvaluationError(
            f"dataset '{parts.eval_dataset.name}' has no '{split}' problems to evaluate on; "
            "set evaluation.split to a split it has, or evaluation.num_problems = 0"
        )
    return problems


@attrs.define
class Evaluator:
    """Runs the configured evaluation modes for one policy."""

    parts: RunParts
    settings: Any
    """``EvaluationSettings``."""
    seed: int
    max_in_flight: int
    progress: Progress | None = None
    episodes: list[DebateEpisode] = attrs.field(factory=list)
    """Every debate of the last :meth:`evaluate` (to name the one a failure came from)."""

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
        problems = evaluation_problems(self.parts, self.settings.split, self.settings.num_problems)
        if not problems:
            return {}
        policy = self.parts.make_policy(policy_client)
        metrics: dict[str, float] = {f"{self.prefix}/num_problems": float(len(problems))}
        if "direct" in self.settings.modes:
            metrics.update(await self._direct(problems, policy, label))
        if "debate" in self.settings.modes:
            metrics.update(await self._debate(problems, policy, label))
        if self.settings.role_averaged:
            if opponent_client is None:
                raise EvaluationError("role-averaged evaluation needs the fixed opponent's sampling client")
            fixed = await opponent_client()
            if isinstance(policy_client, RetryingSamplingClient):
                fixed = policy_client.sibling(fixed)
            opponent = self.parts.make_policy(fixed)
            metrics.update(await self._role_averaged(problems, policy, opponent, label))
        return metrics

    async def _run(self, config: Any, jobs: Sequence[DebateJob], label: str) -> list[DebateEpisode]:
        runner = self.parts.runner(config)
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
        return episodes

    @functools.cached_property
    def _debate_config(self) -> Any:
        """The run config at the evaluation's temperature, derived once, so that every
        evaluation of the run reuses the same debate runner."""
        return with_temperature(self.parts.config, self.settings.temperature)

    @functools.cached_property
    def _direct_config(self) -> Any:
        return direct_config(self._debate_config)

    def _samples(self) -> int:
        return int(self.settings.num_samples or self.parts.config.debate.num_agents)

    async def _direct(self, problems: list[Problem], policy: AgentPolicy, label: str) -> dict[str, float]:
        k = self._samples()
        jobs = [
            DebateJob(p, (policy,), derive_seed(self.seed, "eval-direct", i, s), f"eval-direct-{i}-{s}")
            for i, p in enumerate(problems)
            for s in range(k)
        ]
        episodes = await self._run(self._direct_config, jobs, f"{label} direct")
        prefix = f"{self.prefix}/direct"
        records = [e.record for e in episodes]
        out = {f"{prefix}/parse_error": turn_metrics(records)["parse_error"]}
        grader = self.parts.grader
        if grader is None:
            return out
        graded: list[GradedDebate] = []
        for i, problem in enumerate(problems):
            if problem.answer is None:
                continue
            grades = tuple(
                grade_turn(turn, problem.answer, grader)
                for e in episodes[i * k : (i + 1) * k]
                for turn in e.record.turns[-1:]
            )
            graded.append(GradedDebate(grades, grades, JudgeTally(), {}))
        out.update(verifiable_metrics(graded, prefix, k))
        out.pop(f"{prefix}/judge_decidable_votes", None)
        out.pop(f"{prefix}/judge_ties", None)
        return out

    async def _debate(self, problems: list[Problem], policy: AgentPolicy, label: str) -> dict[str, float]:
        config = self._debate_config
        n = config.debate.num_agents
        jobs = [
            DebateJob(p, (policy,) * n, derive_seed(self.seed, "eval-debate", i), f"eval-debate-{i}")
            for i, p in enumerate(problems)
        ]
        episodes = await self._run(config, jobs, f"{label} debate")
        records = [e.record for e in episodes]
        prefix = f"{self.prefix}/debate"
        out = {
            f"{prefix}/{name.removeprefix('debate/')}": v
            for name, v in {**turn_metrics(records), **debate_metrics(records)}.items()
        }
        if self.parts.grader is not None:
            graded = [
                g
                for g in (
                    grade_debate(e.record, self.parts.grader, p.answer) for e, p in zip(episodes, problems, strict=True)
                )
                if g is not None
            ]
            out.update(verifiable_metrics(graded, prefix, n))
        return out

    async def _role_averaged(
        self, problems: list[Problem], policy: AgentPolicy, opponent: AgentPolicy, label: str
    ) -> dict[str, float]:
        config = self._debate_config
        n = config.debate.num_agents
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
        episodes = await self._run(config, jobs, f"{label} role-averaged")
        prefix = f"{self.prefix}/role_averaged"
        records = [e.record for e in episodes]
        out = {f"{prefix}/parse_error": turn_metrics(records)["parse_error"]}
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


async def evaluate_policy(
    config: Any,
    registry: Any,
    *,
    weights: PolicyWeights | None = None,
    settings: Any | None = None,
    progress: Progress | None = None,
) -> dict[str, float]:
    """Open the backend for sampling only, on saved weights or the base model, and evaluate them.

    ``weights`` are opened with ``create_sampling_client`` (the weights saved for sampling) or,
    without those, from a training state; ``None`` evaluates the untrained base model. No training
    model is started. ``settings`` replaces ``config.evaluation``.
    """
    from debate_core.backends.session import RetryPolicy, open_session_async
    from debate_core.training.loop import raise_backend_failure
    from debate_core.training.parts import build_run_parts

    retry = RetryPolicy(
        max_attempts=config.training.backend_retries, initial_delay_s=config.training.backend_retry_delay_s
    )
    evaluation = settings or config.evaluation
    fixed_opponent = resolve_opponent(evaluation.opponent) if evaluation.role_averaged else None
    session = await open_session_async(
        config,
        registry,
        training=False,
        sampler_path=weights.sampler_path if weights else None,
        state_path=weights.state_path if weights and not weights.sampler_path else None,
        retry=retry,
    )
    status = "errored"
    try:
        parts = build_run_parts(config, registry, session.tokenizer)
        evaluator = Evaluator(
            parts, settings or config.evaluation, config.run.seed, config.training.max_debates_in_flight, progress
        )
        sampler = RetryingSamplingClient(
            session.sampling_client(), retry, session.backend_name, context_length=session.context_length
        )
        opponent = opponent_client(session, fixed_opponent) if evaluator.settings.role_averaged else None
        metrics = await evaluator.evaluate(sampler, opponent)
        raise_backend_failure(sampler, evaluator.episodes, config)
        status = "success"
        return metrics
    finally:
        await session.close(status)
