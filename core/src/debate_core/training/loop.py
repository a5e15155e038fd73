"""The training loop: optional warm-start, then debate self-play RL (seed 000 "Training Loop").

One RL iteration:

1. take ``batch_size`` problems of the current curriculum stage (seeded order, epochs chained);
2. run one self-play debate per problem, at most ``max_debates_in_flight`` at once, every agent
   sampling from the sampling client of the current weights;
3. score each debate with the reward plugin and turn rewards into per-token advantages
   (``rewards.advantages``), then trajectories into Datums (``training.datum``);
4. ``forward_backward`` + ``optim_step`` per substep, pipelined (``training.update``);
5. a fresh sampling client of the new weights; evaluation every ``eval_every``; one metrics
   record; transcripts; a checkpoint every ``save_every``.

Steps count warm-start steps first, then RL iterations; step ``s`` writes the metrics record
``s``. Metrics are written before the checkpoint of the same step, so a crash between the two
resumes from the earlier checkpoint and rewrites the record; nothing is lost or repeated.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
from tinker import types

from debate_core.backends.contract import SamplingClientLike
from debate_core.backends.session import (
    SAMPLER_SUFFIX,
    BackendError,
    BackendSession,
    RetryPolicy,
    open_session_async,
)
from debate_core.errors import ComponentFailure, DebateError
from debate_core.protocol.interfaces import DebateEpisode
from debate_core.protocol.tasks import Problem
from debate_core.rewards.advantages import AdvantageOptions, DebateAdvantages, compute_advantages
from debate_core.rewards.contract import RewardResult
from debate_core.training.checkpoints import (
    Checkpoint,
    DataPosition,
    atomic_write_json,
    capture_rng_state,
    latest_checkpoint,
    restore_rng_state,
    write_checkpoint,
)
from debate_core.training.context_guard import ContextLengthError, context_failure
from debate_core.training.datum import AssembledDatum, trajectory_datums
from debate_core.training.evaluation import Evaluator
from debate_core.training.grading import grade_debate, verifiable_metrics
from debate_core.training.metrics import (
    backend_metrics,
    debate_metrics,
    episode_metrics,
    mean,
    reward_metrics,
    sample_train_metrics,
    total_returns,
    turn_metrics,
)
from debate_core.training.parts import RetryingSamplingClient, RunParts, build_run_parts
from debate_core.training.policy_weights import check_not_expired, opponent_client, resolve_opponent
from debate_core.training.progress import Progress
from debate_core.training.rollouts import DebateJob, run_debates, sampled_tokens
from debate_core.training.run_dir import RunDirectory
from debate_core.training.schedule import learning_rate_at
from debate_core.training.seeding import batch_indices, derive_seed
from debate_core.training.signals import StopRequest, stop_on_signals
from debate_core.training.sinks import MetricSink, MetricValue, MultiSink
from debate_core.training.update import UpdateResult, pipelined_update
from debate_core.training.warmstart import WarmstartData, warmstart_datums

PartsFactory = Callable[[Any, Any, Any], RunParts]


class _Abandoned(Exception):
    """Sampling was abandoned because a stop was requested (no weights changed)."""


@attrs.define
class RunOutcome:
    """Where a training run stopped."""

    run_dir: Path
    step: int
    iterations: int
    warmstart_steps: int
    stopped_by: str | None
    last_checkpoint: int | None
    evaluations: dict[str, dict[str, float]]

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["run_dir"] = str(self.run_dir)
        return data


@attrs.define
class Trainer:
    """Runs the steps of one run on an open backend session."""

    config: Any
    parts: RunParts
    session: BackendSession
    run_dir: RunDirectory
    sink: MetricSink
    progress: Progress
    stop: StopRequest
    tokenizer: Any
    step: int = 0
    warmstart_steps: int = 0
    iteration: int = 0
    last_checkpoint: int | None = None
    opponent: Callable[[], Awaitable[SamplingClientLike]] | None = None
    """Opens the fixed opponent of role-averaged evaluation (resolved once, at the start of the run)."""
    _names_used: set[str] = attrs.field(factory=set)
    """Checkpoint names saved (or tried) on this training client: a retry after a half-written
    checkpoint takes a fresh name, so the backend never sees one name twice."""
    _uncommitted: bool = False
    """True from the start of an update until its step's metrics are written: a checkpoint then
    would not match any written step, so failures in between leave the last checkpoint standing."""

    # ------------------------------------------------------------------ the run
    async def run(self, start: Checkpoint | None) -> RunOutcome:
        """Run (or continue from ``start``) until done, stopped or failed."""
        if start is not None:
            self.step, self.warmstart_steps, self.iteration = start.step, start.warmstart_steps, start.iteration
            self.last_checkpoint = start.step
        pending_eval: dict[str, float] = {}
        if self.step == 0 and self.config.evaluation.at_start:
            pending_eval = await self._evaluate("start")
        try:
            await self._warmstart(pending_eval)
            await self._reinforce(pending_eval)
        except _Abandoned:
            pass
        except (ComponentFailure, BackendError) as exc:
            await self._checkpoint_before_exit(exc)
            raise
        if self.stop.requested and self.last_checkpoint != self.step:
            await self._checkpoint(f"stopped by {self.stop.name}", keep=True)
        return self._outcome()

    def _outcome(self) -> RunOutcome:
        outcome = RunOutcome(
            run_dir=self.run_dir.root,
            step=self.step,
            iterations=self.iteration,
            warmstart_steps=self.warmstart_steps,
            stopped_by=self.stop.name or None,
            last_checkpoint=self.last_checkpoint,
            evaluations=read_evaluations(self.run_dir),
        )
        self.run_dir.write_summary(outcome.to_json())
        return outcome

    async def _checkpoint_before_exit(self, error: BaseException) -> None:
        """Checkpoint when the weights are those of a finished step, then let the error go."""
        if self._uncommitted:
            where = f"step {self.last_checkpoint}" if self.last_checkpoint is not None else "no checkpoint yet"
            self.progress.message(f"debate: the update of step {self.step} failed; last checkpoint: {where}")
            return
        if self.last_checkpoint == self.step:
            return
        try:
            await self._checkpoint(f"failure: {type(error).__name__}", keep=True)
        except DebateError as exc:  # the backend may be the thing that failed
            self.progress.message(f"debate: could not checkpoint before exiting: {exc}")

    # ------------------------------------------------------------------ warm-start
    async def _warmstart(self, pending_eval: dict[str, float]) -> None:
        settings = self.config.warmstart
        if not settings.enabled or self.warmstart_steps >= settings.steps:
            return
        data = WarmstartData.prepare(
            self.parts.stages[0].dataset,
            self.parts.grader,
            settings,
            self.config.run.seed,
            self.config.debate.num_agents,
            self.tokenizer,
        )
        while self.warmstart_steps < settings.steps:
            if self.stop.requested:
                raise _Abandoned
            metrics: dict[str, MetricValue] = dict(pending_eval)
            pending_eval.clear()
            metrics.update(await self._warmstart_step(data, self.warmstart_steps))
            self.warmstart_steps += 1
            last = self.warmstart_steps == settings.steps
            if last and self.config.evaluation.after_warmstart:
                metrics.update(await self._evaluate("warmstart"))
            self._write(metrics)
            if last or self._due(self.warmstart_steps, self.config.training.save_every):
                await self._checkpoint(
                    "warm-start" if last else "scheduled", keep=last and not self.parts.total_iterations
                )

    async def _warmstart_step(self, data: WarmstartData, index: int) -> dict[str, MetricValue]:
        settings = self.config.warmstart
        started = time.perf_counter()
        jobs, policies = data.jobs(index)
        self.progress.start(f"warm-start {index + 1}/{settings.steps}", len(jobs))
        episodes = await run_debates(
            self.parts.runner(),
            jobs,
            self.config.training.max_debates_in_flight,
            lambda e: self.progress.debate_done(sampled_tokens(e)),
        )
        datums = warmstart_datums(episodes)
        built = time.perf_counter()
        lr = learning_rate_at(settings.learning_rate, settings.lr_schedule, index, settings.steps)
        update = await self._update(datums, "cross_entropy", None, lr, 1)
        done = time.perf_counter()
        trained_tokens = sum(d.num_action_tokens for d in datums)
        loss = sum(float(o.metrics.get("loss:sum", 0.0)) for o in update.outputs)
        metrics: dict[str, MetricValue] = {
            "phase": "warmstart",
            "warmstart/step": index,
            "warmstart/lr": lr,
            "warmstart/num_datums": len(datums),
            "warmstart/action_tokens": trained_tokens,
            "warmstart/loss_per_token": loss / trained_tokens if trained_tokens else 0.0,
            "warmstart/truncated_responses": sum(len(p.truncated) for p in policies),
            "time/rollouts": built - started,
            "time/training": done - built,
            "time/total": done - started,
        }
        self.progress.finish({"loss/token": float(metrics["warmstart/loss_per_token"]), "lr": lr})
        return metrics

    # ------------------------------------------------------------------ RL
    async def _reinforce(self, pending_eval: dict[str, float]) -> None:
        total = self.parts.total_iterations
        training = self.config.training
        evaluation = self.config.evaluation
        while self.iteration < total:
            if self.stop.requested:
                raise _Abandoned
            metrics: dict[str, MetricValue] = dict(pending_eval)
            pending_eval.clear()
            metrics.update(await self._iteration(self.iteration))
            self.iteration += 1
            last = self.iteration == total
            if self._due(self.iteration, training.eval_every) or (last and evaluation.at_end):
                metrics.update(await self._evaluate("final" if last else f"iteration_{self.iteration}"))
            self._write(metrics)
            if last or self._due(self.iteration, training.save_every) or self.stop.requested:
                reason = f"stopped by {self.stop.name}" if self.stop.requested and not last else "scheduled"
                await self._checkpoint(reason, keep=last or self.stop.requested)

    @staticmethod
    def _due(count: int, every: int) -> bool:
        return every > 0 and count % every == 0

    def _batch(self, iteration: int) -> tuple[int, str, list[Problem]]:
        stage_index, within = self.parts.stage_at(iteration)
        stage = self.parts.stages[stage_index]
        problems = stage.dataset.problems("train")
        if not problems:
            raise ComponentFailure(f"dataset plugin '{stage.dataset.name}' has no 'train' problems")
        indices = batch_indices(
            self.config.run.seed, stage_index, within, self.config.training.batch_size, len(problems)
        )
        return stage_index, stage.dataset.name, [problems[i] for i in indices]

    async def _sample(self, jobs: Sequence[DebateJob]) -> list[DebateEpisode]:
        """Run the debates, or abandon them when a stop is requested meanwhile."""
        rollouts = asyncio.ensure_future(
            run_debates(
                self.parts.runner(),
                jobs,
                self.config.training.max_debates_in_flight,
                lambda e: self.progress.debate_done(sampled_tokens(e)),
            )
        )
        stopper = asyncio.ensure_future(self.stop.wait())
        try:
            await asyncio.wait({rollouts, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
        if not rollouts.done():
            rollouts.cancel()
            await asyncio.gather(rollouts, return_exceptions=True)
            self.progress.message(f"debate: sampling of step {self.step} abandoned (stop requested)")
            raise _Abandoned
        return rollouts.result()

    async def _iteration(self, iteration: int) -> dict[str, MetricValue]:
        config = self.config
        training = config.training
        n = config.debate.num_agents
        stage_index, dataset_name, problems = self._batch(iteration)
        started = time.perf_counter()
        sampler = self._sampler()
        policy = self.parts.make_policy(sampler)
        jobs = [
            DebateJob(
                p, (policy,) * n, derive_seed(config.run.seed, "train", iteration, i), f"iter{iteration}-debate{i}"
            )
            for i, p in enumerate(problems)
        ]
        self.progress.start(f"iter {iteration + 1}/{self.parts.total_iterations}", len(jobs))
        episodes = await self._sample(jobs)
        raise_backend_failure(sampler, episodes, self.config)
        sampled = time.perf_counter()

        records = [e.record for e in episodes]
        results = [self.parts.score(e.record, p) for e, p in zip(episodes, problems, strict=True)]
        advantages = self._advantages(records, results)
        datums = [
            d
            for index, (episode, advantage) in enumerate(zip(episodes, advantages, strict=True))
            if advantage is not None
            for trajectory in episode.trajectories
            for d in trajectory_datums(trajectory, advantage, debate_index=index)
        ]
        trainable = [d for d in datums if d.has_signal()] if training.skip_zero_advantage_updates else datums
        scored = time.perf_counter()

        lr = learning_rate_at(training.learning_rate, training.lr_schedule, iteration, self.parts.total_iterations)
        update = await self._update(trainable, training.loss_fn, training.loss_fn_config, lr, training.num_substeps)
        trained = time.perf_counter()
        self._log_transcripts(episodes)

        metrics: dict[str, MetricValue] = {"phase": "rl", "iteration": iteration, "stage": stage_index, "optim/lr": lr}
        returns = [total_returns(r, res) for r, res in zip(records, results, strict=True)]
        metrics.update(turn_metrics(records))
        metrics.update(reward_metrics(results))
        metrics.update(episode_metrics(episodes, returns))
        metrics.update(debate_metrics(records))
        if self.parts.grader is not None:
            graded = [
                g
                for g in (grade_debate(r, self.parts.grader, p.answer) for r, p in zip(records, problems, strict=True))
                if g is not None
            ]
            metrics.update(verifiable_metrics(graded, f"train_{dataset_name}", n))
        metrics.update(self._optim_metrics(datums, trainable, advantages, update))
        action_tokens = sum(sampled_tokens(e) for e in episodes)
        trained_tokens = sum(d.num_tokens for d in update.datums)
        metrics.update(
            {
                "time/sampling": sampled - started,
                "time/rewards": scored - sampled,
                "time/training": trained - scored,
                "time/total": trained - started,
                "throughput/sampled_tokens_per_s": action_tokens / max(sampled - started, 1e-9),
                "throughput/trained_tokens_per_s": trained_tokens / max(trained - scored, 1e-9)
                if trained_tokens
                else 0.0,
            }
        )
        headline = {
            "reward": float(metrics["env/all/reward/total"]),
            "parse_err": float(metrics["parse_error"]),
            "tok/s": float(metrics["throughput/sampled_tokens_per_s"]),
        }
        if f"train_{dataset_name}/format" in metrics:
            headline["format"] = float(metrics[f"train_{dataset_name}/format"])
            headline["correct"] = float(metrics[f"train_{dataset_name}/correct"])
        self.progress.finish(headline)
        return metrics

    def _advantages(self, records: Sequence[Any], results: Sequence[RewardResult]) -> list[DebateAdvantages | None]:
        training = self.config.training
        options = AdvantageOptions(
            normalisation=training.advantage_normalisation, drop_uniform=training.drop_uniform_groups
        )
        try:
            return compute_advantages(records, results, options)
        except DebateError as exc:
            raise ComponentFailure(f"reward plugin '{self.parts.reward_name}': {exc}") from exc

    def _optim_metrics(
        self,
        datums: Sequence[AssembledDatum],
        trainable: Sequence[AssembledDatum],
        advantages: Sequence[DebateAdvantages | None],
        update: UpdateResult,
    ) -> dict[str, MetricValue]:
        action_advantages = [
            abs(a)
            for d in datums
            for a, m in zip(d.datum.loss_fn_inputs["advantages"].data, d.mask, strict=True)
            if m > 0
        ]
        out: dict[str, MetricValue] = {
            "optim/num_datums": len(datums),
            "optim/num_datums_trained": len(update.datums),
            "optim/num_datums_zero_advantage": len(datums) - len(trainable),
            "optim/num_updates": len(update.outputs),
            "optim/update_skipped": float(not update.updated),
            "optim/trained_tokens": sum(d.num_tokens for d in update.datums),
            "advantages/dropped_debates": sum(1 for a in advantages if a is None),
            "advantages/mean_abs": mean([float(a) for a in action_advantages]),
        }
        if update.updated:
            out.update(sample_train_metrics(update.datums, update.outputs))
            out.update(backend_metrics(update.outputs))
        return out

    # ------------------------------------------------------------------ backend
    def _sampler(self) -> RetryingSamplingClient:
        """The current weights' sampling client, with retries and the context guard."""
        session = self.session
        return RetryingSamplingClient(
            session.sampling_client(), session.retry, session.backend_name, context_length=session.context_length
        )

    async def _update(
        self, datums: Sequence[AssembledDatum], loss_fn: Any, loss_config: Any, lr: float, substeps: int
    ) -> UpdateResult:
        training = self.config.training
        adam = types.AdamParams(
            learning_rate=lr,
            beta1=training.adam_beta1,
            beta2=training.adam_beta2,
            eps=training.adam_eps,
            weight_decay=training.weight_decay,
            grad_clip_norm=training.grad_clip_norm,
        )
        if not datums:
            return UpdateResult((), ())
        self._uncommitted = True
        update = await pipelined_update(
            self.session.require_training_client(),
            datums,
            loss_fn=loss_fn,
            loss_fn_config=loss_config,
            adam_params=adam,
            num_substeps=substeps,
            backend_name=self.session.backend_name,
        )
        await self.session.refresh_sampling_client()
        return update

    async def _checkpoint(self, reason: str, *, keep: bool) -> None:
        """Save the training state and the sampler weights, then the manifest. ``keep``: the last
        checkpoint of the run, or one written on a stop or a failure (it never expires); the
        others live ``session.checkpoint_ttl_seconds`` on the backend."""
        started = time.perf_counter()
        ttl = None if keep else self.session.checkpoint_ttl_seconds
        saved = await self.session.save_checkpoint(self._checkpoint_name(), ttl)
        if self.iteration < self.parts.total_iterations:
            stage, within = self.parts.stage_at(self.iteration)
        else:
            stage, within = len(self.parts.stages) - 1, self.parts.stages[-1].iterations if self.parts.stages else 0
        checkpoint = Checkpoint(
            step=self.step,
            warmstart_steps=self.warmstart_steps,
            iteration=self.iteration,
            backend_state=saved.state,
            data=DataPosition(stage, within),
            seed=self.config.run.seed,
            rng=capture_rng_state(),
            reason=reason,
            sampler_weights=saved.sampler,
            ttl_seconds=ttl,
        )
        write_checkpoint(self.run_dir.checkpoints, checkpoint)
        self.last_checkpoint = self.step
        self.progress.message(
            f"checkpoint step {self.step} ({reason}) in {time.perf_counter() - started:.1f}s: {saved.state}"
        )

    def _checkpoint_name(self) -> str:
        """``step_NNNNNN``, or ``step_NNNNNN-2``, ``-3``, ... when that name was tried before: on
        this training client, or by an earlier process whose save a crash left without a manifest
        (a backend that keeps its states in ``RUN_DIR/checkpoints/backend``)."""
        base = name = f"step_{self.step:06d}"
        attempt = 1
        leftovers = self.run_dir.backend_states
        while name in self._names_used or (leftovers / name).exists() or (leftovers / (name + SAMPLER_SUFFIX)).exists():
            attempt += 1
            name = f"{base}-{attempt}"
        self._names_used.add(name)
        return name

    # ------------------------------------------------------------------ side outputs
    def _write(self, metrics: dict[str, MetricValue]) -> None:
        self.sink.write(self.step, metrics)
        self.step += 1
        self._uncommitted = False

    def _log_transcripts(self, episodes: Sequence[DebateEpisode]) -> None:
        for index, episode in enumerate(episodes[: self.config.logging.num_groups_to_log]):
            path = self.run_dir.transcript_path(self.step, index)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.parts.write_transcript(episode.record, path)

    async def _evaluate(self, label: str) -> dict[str, float]:
        if self.config.evaluation.num_problems == 0:
            return {}
        started = time.perf_counter()
        evaluator = Evaluator(
            self.parts,
            self.config.evaluation,
            self.config.run.seed,
            self.config.training.max_debates_in_flight,
            self.progress,
        )
        sampler = self._sampler()
        metrics = await evaluator.evaluate(sampler, self.opponent, label=f"eval {label}")
        raise_evaluation_failure(sampler, evaluator.episodes, self.config, label)
        metrics["time/eval"] = time.perf_counter() - started
        record = {
            "label": label,
            "step": self.step,
            "iteration": self.iteration,
            "warmstart_steps": self.warmstart_steps,
            "metrics": metrics,
        }
        atomic_write_json(self.run_dir.evaluation_path(self.step, label), record)
        shown = {
            k.split("/", 1)[1]: v for k, v in metrics.items() if k.endswith(("/correct", "/judge_accuracy", "/format"))
        }
        self.progress.finish(shown)
        return metrics


def raise_backend_failure(
    sampler: RetryingSamplingClient, episodes: Sequence[DebateEpisode], config: Any = None
) -> None:
    """Stop when sampling failed for good (the debates counted it as failed turns, but training on
    an outage would teach the policy nothing true), or a prompt did not fit the model's context
    (naming the debate, the sizes and, with ``config``, what to change)."""
    if not sampler.failures:
        return
    first = sampler.failures[0]
    if isinstance(first, ContextLengthError):
        raise context_failure(first, episodes, config) from None
    where = next(
        (
            e.record.debate_id
            for e in episodes
            for t in e.record.turns
            if t.response.error is not None and type(first).__name__ in t.response.error.message
        ),
        None,
    )
    suffix = f" (debate '{where}')" if where else ""
    raise BackendError(f"{first}{suffix}") from first


def raise_evaluation_failure(
    sampler: RetryingSamplingClient, episodes: Sequence[DebateEpisode], config: Any, label: str
) -> None:
    """:func:`raise_backend_failure` for an evaluation, naming it."""
    try:
        raise_backend_failure(sampler, episodes, config)
    except (BackendError, ContextLengthError) as exc:
        exc.args = (f"{exc} (evaluation '{label}')",)
        raise


def read_evaluations(run_dir: RunDirectory) -> dict[str, dict[str, float]]:
    """Every evaluation recorded in the run directory, by label (the latest of each label)."""
    found: dict[str, dict[str, float]] = {}
    if not run_dir.evaluations.is_dir():
        return found
    for path in sorted(run_dir.evaluations.glob("step_*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            found[str(record["label"])] = dict(record["metrics"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def open_sinks(config: Any, registry: Any, run_dir: RunDirectory) -> MetricSink:
    """Build every configured metric sink for this run directory."""
    sinks: list[MetricSink] = []
    for index, choice in enumerate(config.logging.sinks):
        factory = registry.build("metric_sink", choice.name, choice.options, f"logging.sinks[{index}].options")
        sinks.append(factory(run_dir.root))
    return MultiSink(sinks)


def config_differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Key paths whose values differ between two resolved configs."""
    out: list[str] = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(config_differences(a, b, path + "."))
        elif a != b:
            out.append(path)
    return out


async def run_training(
    config: Any,
    registry: Any,
    run_dir: RunDirectory,
    *,
    resume: bool = False,
    progress: Progress | None = None,
    stop: StopRequest | None = None,
    parts_factory: PartsFactory = build_run_parts,
    handle_signals: bool = True,
) -> RunOutcome:
    """Start a run in ``run_dir`` (or continue the one there with ``resume=True``) and train.

    Raises:
        ComponentFailure: a plugin raised; the message names it and the debate, and the run
            was checkpointed first (when its weights were those of a finished step).
        BackendError: the backend failed for good (after retries).
    """
    from debate_core.config import resolved_config_dict, write_resolved_config
    from debate_core.plugins import installed_distributions

    progress = progress or Progress(config.logging.progress)
    stop = stop or StopRequest()
    # the fixed opponent is resolved once: a wrong checkpoint fails before any work, and a run
    # directory named as the opponent cannot change it halfway
    fixed_opponent = resolve_opponent(config.evaluation.opponent) if config.evaluation.role_averaged else None
    start: Checkpoint | None = None
    if resume:
        start = latest_checkpoint(run_dir.checkpoints)
        if start is not None:
            check_not_expired(start, f"--resume {run_dir.root}")
        differences = _resume_differences(run_dir, resolved_config_dict(config, registry))
        if differences:
            progress.message("debate: resuming with a config that differs from the run's at: " + ", ".join(differences))
            write_resolved_config(
                config, run_dir.root / f"config.resumed_step_{start.step if start else 0:06d}.toml", registry
            )
        progress.message(
            f"resuming {run_dir.root} from step {start.step}"
            if start
            else f"resuming {run_dir.root}: no checkpoint yet, starting over"
        )
    else:
        run_dir.create()
        write_resolved_config(config, run_dir.config_path, registry)
        run_dir.write_plugins(installed_distributions())
    run_dir.create()
    run_dir.truncate_metrics(start.step if start else 0)
    retry = RetryPolicy(
        max_attempts=config.training.backend_retries, initial_delay_s=config.training.backend_retry_delay_s
    )
    session = await open_session_async(
        config,
        registry,
        state_path=start.backend_state if start else None,
        with_optimizer=True,
        state_directory=run_dir.backend_states,
        retry=retry,
    )
    status = "errored"
    try:
        opponent = opponent_client(session, fixed_opponent) if config.evaluation.role_averaged else None
        if start is not None:
            restore_rng_state(start.rng)
        parts = parts_factory(config, registry, session.tokenizer)
        sink = open_sinks(config, registry, run_dir)
        trainer = Trainer(config, parts, session, run_dir, sink, progress, stop, session.tokenizer, opponent=opponent)
        try:
            if handle_signals:
                with stop_on_signals(stop, asyncio.get_running_loop()):
                    outcome = await trainer.run(start)
            else:
                outcome = await trainer.run(start)
        finally:
            sink.close()
        status = "interrupted" if outcome.stopped_by else "success"
        return outcome
    finally:
        await session.close(status)


def _resume_differences(run_dir: RunDirectory, new: dict[str, Any]) -> list[str]:
    import tomllib

    try:
        old = tomllib.loads(run_dir.config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return config_differences(old, new)
