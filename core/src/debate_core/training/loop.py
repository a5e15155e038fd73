"""The training loop: optional warm-start, then debate self-play RL (docs/training.md#one-iteration).

One RL iteration:

1. take ``batch_size`` problems of the current curriculum stage (seeded order, epochs chained);
2. run one self-play debate per problem, at most ``max_debates_in_flight`` at once, every agent
   sampling from the sampling client of the current weights;
3. score each debate with the reward plugin and turn rewards into per-token advantages
   (``rewards.advantages``), then trajectories into Datums (``training.datum``); write the
   logged debates' transcripts (before the update, so that a full disk there stops the run with
   the weights of a finished step, which it checkpoints);
4. ``forward_backward`` + ``optim_step`` per substep, pipelined (``training.update``);
5. a fresh sampling client of the new weights; evaluation every ``eval_every``; one metrics
   record; a checkpoint every ``save_every``.

Steps count updates, warm-start steps first, then RL iterations, from 1: step ``s`` is the
state after ``s`` updates, and everything the run leaves about it carries that number (its
metrics record, the progress line, ``transcripts/step_s``, ``eval/step_s_<label>.json`` and
``checkpoints/step_s.json``; an evaluation before any update is step 0). Metrics are written
before the checkpoint of the same step, so a crash between the two resumes from the earlier
checkpoint and rewrites the record; nothing is lost or repeated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import attrs
from tinker import types

from debate_core.backends.contract import SamplingClientLike
from debate_core.config import RunConfig, resolved_config_dict, write_resolved_config
from debate_core.errors import ComponentFailure, DebateError, OutputWriteError
from debate_core.files import atomic_write_json, output_write_errors
from debate_core.plugin_results import PluginCall, call_async_plugin, check_judge_verdicts
from debate_core.plugins import Registry, installed_distributions
from debate_core.records import DebateEpisode, DebateRecord, Problem, RewardResult, Tokenizer
from debate_core.records.metrics import MetricSink, MetricValue
from debate_core.rewards.advantages import AdvantageOptions, DebateAdvantages, compute_advantages
from debate_core.rewards.judge_mix import compared_pairs, judge_mixed_reward, judge_pairs, judge_weight
from debate_core.runtime.checkpoint_format import Checkpoint, DataPosition
from debate_core.runtime.manifests import capture_rng_state, prune_checkpoints, restore_rng_state, write_checkpoint
from debate_core.runtime.retries import BackendError, BackendTimeout, retry_policy, watched
from debate_core.runtime.sampling_failures import raise_backend_failure, raise_evaluation_failure
from debate_core.runtime.session import SAMPLER_SUFFIX, BackendSession, open_session_async
from debate_core.stats import mean
from debate_core.training.datum import AssembledDatum, trajectory_datums
from debate_core.training.evaluation import Evaluator
from debate_core.training.evaluation_records import (
    best_steps,
    first_evaluation,
    latest_by_label,
    paired_changes,
    read_evaluation_records,
)
from debate_core.training.grading import grade_debate, verifiable_metrics
from debate_core.training.judge_host import BackendJudgeHost
from debate_core.training.lost_history import LostHistory, lost_transcripts, transcripts_message
from debate_core.training.metrics import (
    backend_metrics,
    debate_metrics,
    episode_metrics,
    reward_metrics,
    sample_train_metrics,
    total_returns,
    turn_metrics,
)
from debate_core.training.policy_weights import (
    PolicyWeights,
    check_not_expired,
    opponent_client,
    resolve_init_from,
    resolve_opponent,
)
from debate_core.training.progress import Progress
from debate_core.training.resume import choose_resume_point
from debate_core.training.reward_sidecars import reward_summary, write_sidecar
from debate_core.training.rollouts import DebateJob, run_debates, sampled_tokens
from debate_core.training.run_components import RunComponents, build_run_components
from debate_core.training.run_dir import RunDirectory
from debate_core.training.run_lock import run_directory_lock
from debate_core.training.schedule import learning_rate_at
from debate_core.training.seeding import batch_indices, derive_seed
from debate_core.training.signals import StopRequest, stop_on_signals
from debate_core.training.sinks import open_sinks
from debate_core.training.update import NonFiniteUpdateError, UpdateResult, pipelined_update
from debate_core.training.warmstart import (
    WarmstartData,
    flawed_first_answers,
    truncated_responses,
    warmstart_datums,
)

ComponentsFactory = Callable[[RunConfig, Registry, Tokenizer], RunComponents]


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
    lost_history: dict[str, list[int]] = attrs.field(factory=dict)
    """Steps up to a resume's checkpoint with no metrics record or transcripts (``LostHistory``)."""

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["run_dir"] = str(self.run_dir)
        return data


@attrs.define
class Trainer:
    """Runs the steps of one run on an open backend session."""

    config: RunConfig
    components: RunComponents
    session: BackendSession
    run_dir: RunDirectory
    sink: MetricSink
    progress: Progress
    stop: StopRequest
    tokenizer: Tokenizer
    step: int = 0
    warmstart_steps: int = 0
    iteration: int = 0
    last_checkpoint: int | None = None
    opponent: Callable[[], Awaitable[SamplingClientLike]] | None = None
    """Opens the fixed opponent of role-averaged evaluation (resolved once, at the start of the run)."""
    lost_history: LostHistory = attrs.field(factory=LostHistory)
    """What a resume found gone of the run's records (kept in ``summary.json``)."""
    _names_used: set[str] = attrs.field(factory=set)
    """Checkpoint names saved (or tried) on this training client: a retry after a half-written
    checkpoint takes a fresh name, so the backend never sees one name twice."""
    _warned_best: bool = False
    """True once the run said that ``training.keep_best_by`` names no evaluation metric."""
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
            pending_eval = await self._evaluate("start", 0)
        try:
            await self._warmstart(pending_eval)
            await self._reinforce(pending_eval)
        except _Abandoned:
            pass
        except (ComponentFailure, BackendError, OutputWriteError) as exc:
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
            evaluations=latest_by_label(self.run_dir.evaluations),
            lost_history=self.lost_history.to_json(),
        )
        self.run_dir.write_summary(outcome.to_json())
        return outcome

    async def _checkpoint_before_exit(self, error: BaseException) -> None:
        """Checkpoint when the weights are those of a finished step, then let the error go."""
        where = f"step {self.last_checkpoint}" if self.last_checkpoint is not None else "no checkpoint yet"
        if self._uncommitted:
            self.progress.message(
                f"debate: step {self.step + 1} failed before it was recorded; last checkpoint: {where}"
            )
            return
        if self.last_checkpoint == self.step:
            return
        if isinstance(error, BackendTimeout):
            self.progress.message(
                f"debate: the backend does not answer: no checkpoint attempted; last checkpoint: {where}"
            )
            return
        try:
            await self._checkpoint(f"failure: {type(error).__name__}", keep=True)
        except (DebateError, OSError) as exc:  # the backend, or the disk, may be the thing that failed
            self.progress.message(f"debate: could not checkpoint before exiting: {exc}; last checkpoint: {where}")

    # ------------------------------------------------------------------ warm-start
    async def _warmstart(self, pending_eval: dict[str, float]) -> None:
        settings = self.config.warmstart
        if not settings.enabled or self.warmstart_steps >= settings.steps:
            return
        data = WarmstartData.prepare(
            self.components.stages[0].dataset,
            self.components.grader,
            settings,
            self.config.run.seed,
            self.config.debate.num_agents,
            self.tokenizer,
            self.components.contract,
        )
        self.progress.phase("warm-start", settings.steps, "steps", done=self.warmstart_steps)
        while self.warmstart_steps < settings.steps:
            if self.stop.requested:
                raise _Abandoned
            metrics: dict[str, MetricValue] = dict(pending_eval)
            pending_eval.clear()
            metrics.update(await self._warmstart_step(data, self.warmstart_steps))
            self.warmstart_steps += 1
            last = self.warmstart_steps == settings.steps
            if last and self.config.evaluation.after_warmstart:
                metrics.update(await self._evaluate("warmstart", self.step + 1))
            self._write(metrics)
            if last or self._due(self.warmstart_steps, self.config.training.save_every):
                await self._checkpoint(
                    "warm-start" if last else "scheduled",
                    keep=last and not self.components.total_iterations,
                    periodic=not last,
                )

    async def _warmstart_step(self, data: WarmstartData, index: int) -> dict[str, MetricValue]:
        settings = self.config.warmstart
        started = time.perf_counter()
        jobs = data.jobs(index)
        self.progress.start(f"{self._step_label(self.step + 1)} warm-start {index + 1}/{settings.steps}", len(jobs))
        episodes = await run_debates(
            self.components.runner(),
            jobs,
            self.config.training.max_debates_in_flight,
            lambda e: self.progress.debate_done(sampled_tokens(e)),
        )
        datums = warmstart_datums(episodes, jobs)
        built = time.perf_counter()
        lr = learning_rate_at(settings.learning_rate, settings.lr_schedule, index, settings.steps)
        update = await self._update(datums, "cross_entropy", None, lr, 1)
        done = time.perf_counter()
        trained_tokens = int(sum(sum(d.datum.loss_fn_inputs["weights"].data) for d in datums))
        loss = sum(float(o.metrics.get("loss:sum", 0.0)) for o in update.outputs)
        metrics: dict[str, MetricValue] = {
            "phase": "warmstart",
            "warmstart/step": index,
            "warmstart/lr": lr,
            "warmstart/num_datums": len(datums),
            "warmstart/action_tokens": trained_tokens,
            "warmstart/loss_per_token": loss / trained_tokens if trained_tokens else 0.0,
            "warmstart/truncated_responses": truncated_responses(jobs),
            "warmstart/flawed_first_answers": flawed_first_answers(jobs),
            "time/rollouts": built - started,
            "time/training": done - built,
            "time/total": done - started,
        }
        self.progress.finish({"loss/token": float(metrics["warmstart/loss_per_token"]), "lr": lr})
        return metrics

    # ------------------------------------------------------------------ RL
    async def _reinforce(self, pending_eval: dict[str, float]) -> None:
        total = self.components.total_iterations
        training = self.config.training
        evaluation = self.config.evaluation
        self.progress.phase("RL", total, "iterations", done=self.iteration)
        while self.iteration < total:
            if self.stop.requested:
                raise _Abandoned
            metrics: dict[str, MetricValue] = dict(pending_eval)
            pending_eval.clear()
            metrics.update(await self._iteration(self.iteration))
            self.iteration += 1
            last = self.iteration == total
            if self._due(self.iteration, training.eval_every) or (last and evaluation.at_end):
                metrics.update(await self._evaluate("final" if last else f"iteration_{self.iteration}", self.step + 1))
            self._write(metrics)
            if last or self._due(self.iteration, training.save_every) or self.stop.requested:
                stopped = self.stop.requested and not last
                reason = "final" if last else (f"stopped by {self.stop.name}" if stopped else "scheduled")
                await self._checkpoint(reason, keep=last or self.stop.requested, periodic=reason == "scheduled")

    @staticmethod
    def _due(count: int, every: int) -> bool:
        return every > 0 and count % every == 0

    def _batch(self, iteration: int) -> tuple[int, str, list[Problem]]:
        stage_index, within = self.components.stage_at(iteration)
        stage = self.components.stages[stage_index]
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
                self.components.runner(),
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
            self.progress.message(f"debate: sampling of step {self.step + 1} abandoned (stop requested)")
            raise _Abandoned
        return rollouts.result()

    async def _iteration(self, iteration: int) -> dict[str, MetricValue]:
        config = self.config
        training = config.training
        n = config.debate.num_agents
        stage_index, dataset_name, problems = self._batch(iteration)
        step = self.step + 1
        started = time.perf_counter()
        sampler = self.session.sampler()
        policy = self.components.make_policy(sampler)
        jobs = [
            DebateJob(p, (policy,) * n, derive_seed(config.run.seed, "train", iteration, i), f"step{step}-debate{i}")
            for i, p in enumerate(problems)
        ]
        self.progress.start(
            f"{self._step_label(step)} iter {iteration + 1}/{self.components.total_iterations}", len(jobs)
        )
        episodes = await self._sample(jobs)
        raise_backend_failure(sampler, episodes, self.config)
        sampled = time.perf_counter()

        records = [e.record for e in episodes]
        results = [self.components.score(e.record, p) for e, p in zip(episodes, problems, strict=True)]
        results = await self._judged(records, results, iteration)
        advantages = self._advantages(records, results)
        datums = [
            d
            for index, (episode, advantage) in enumerate(zip(episodes, advantages, strict=True))
            if advantage is not None
            for trajectory in episode.trajectories
            for d in trajectory_datums(trajectory, advantage, debate_index=index)
        ]
        trainable = [d for d in datums if d.has_signal()] if training.skip_zero_advantage_updates else datums
        # before the update: a transcript that cannot be written leaves the weights of a finished step
        self._log_transcripts(step, records, results, advantages)
        scored = time.perf_counter()

        lr = learning_rate_at(training.learning_rate, training.lr_schedule, iteration, self.components.total_iterations)
        update = await self._update(trainable, training.loss_fn, training.loss_fn_config, lr, training.num_substeps)
        trained = time.perf_counter()

        metrics: dict[str, MetricValue] = {"phase": "rl", "iteration": iteration, "stage": stage_index, "optim/lr": lr}
        returns = [total_returns(r, res) for r, res in zip(records, results, strict=True)]
        rewards = [float(x) for res in results for x in res.agent_rewards]
        metrics.update(turn_metrics(records))
        metrics.update(reward_metrics(results))
        metrics.update(episode_metrics(episodes, returns))
        metrics.update(debate_metrics(records))
        if self.components.grader is not None:
            graded = [
                g
                for g in (
                    grade_debate(r, self.components.grader, p.answer) for r, p in zip(records, problems, strict=True)
                )
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
        metrics["reward/configured"] = mean(rewards)
        metrics["reward/failure_penalty"] = mean(rewards) - float(metrics["env/all/reward/total"])
        headline = {
            "reward": float(metrics["reward/configured"]),
            "fail_penalty": float(metrics["reward/failure_penalty"]),
            "parse_err": float(metrics["parse_error"]),
            "tok/s": float(metrics["throughput/sampled_tokens_per_s"]),
        }
        if f"train_{dataset_name}/format" in metrics:
            headline["format"] = float(metrics[f"train_{dataset_name}/format"])
            headline["correct"] = float(metrics[f"train_{dataset_name}/correct"])
        self.progress.finish(headline)
        return metrics

    async def _judged(
        self, records: Sequence[DebateRecord], results: Sequence[RewardResult], iteration: int
    ) -> list[RewardResult]:
        """The results with the external judge's verdicts mixed in while its weight lasts
        (docs/rewards.md#a-stronger-judge-phased-out)."""
        judge = self.components.judge
        settings = self.config.judge
        weight = judge_weight(settings.weight, settings.decay_iterations, iteration)
        if judge is None or weight <= 0.0:
            return list(results)
        host = BackendJudgeHost(self.session, self.components)
        mixed: list[RewardResult] = []
        for record, result in zip(records, results, strict=True):
            pairs = compared_pairs(record)
            call = PluginCall("judge", settings.name, "compare", f"{len(pairs)} pairs of debate '{record.debate_id}'")
            shown = judge_pairs(record, pairs)
            answer = await call_async_plugin(call, partial(judge.compare, shown, host))
            by_pair = dict(zip(pairs, check_judge_verdicts(call, answer, len(pairs)), strict=True))
            mixed.append(judge_mixed_reward(record, result, self.components.checked_reward, by_pair, weight))
        return mixed

    def _advantages(
        self, records: Sequence[DebateRecord], results: Sequence[RewardResult]
    ) -> list[DebateAdvantages | None]:
        training = self.config.training
        options = AdvantageOptions(
            normalisation=training.advantage_normalisation, drop_uniform=training.drop_uniform_groups
        )
        try:
            return compute_advantages(records, results, options)
        except DebateError as exc:
            raise ComponentFailure(f"reward plugin '{self.components.reward_name}': {exc}") from exc

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
    async def _update(
        self,
        datums: Sequence[AssembledDatum],
        loss_fn: types.LossFnType,
        loss_config: Mapping[str, float] | None,
        lr: float,
        substeps: int,
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
        retry = self.session.retry
        update_call = pipelined_update(
            self.session.require_training_client(),
            datums,
            loss_fn=loss_fn,
            loss_fn_config=loss_config,
            adam_params=adam,
            num_substeps=substeps,
            backend_name=self.session.backend_name,
        )
        what = f"the update of step {self.step + 1} (forward_backward, optim_step)"
        update = await (
            watched(what, update_call, retry.timeout_s, self.session.backend_name) if retry.watched else update_call
        )
        problems = update.non_finite()
        if problems:
            raise NonFiniteUpdateError(
                f"the update of step {self.step + 1} is not finite ({'; '.join(problems)}): the run stops before "
                f"any checkpoint of these weights, so resuming starts from the last good one "
                f"(step {self.last_checkpoint if self.last_checkpoint is not None else 0}); lower "
                "training.learning_rate or set training.grad_clip_norm, and check the reward's scale"
            )
        await self.session.refresh_sampling_client()
        return update

    def _step_label(self, step: int) -> str:
        """``step 21/210``: the step of the update under way, out of every step of the run."""
        total = self.components.total_iterations
        if self.config.warmstart.enabled:
            total += self.config.warmstart.steps
        return f"step {step}/{total}"

    async def _checkpoint(self, reason: str, *, keep: bool, periodic: bool = False) -> None:
        """Save the training state and the sampler weights, then the manifest. ``keep``: the last
        checkpoint of the run, or one written on a stop or a failure (it never expires on the
        backend); the others live ``session.checkpoint_ttl_seconds``. A ``periodic`` one may be
        pruned later (``training.keep_last``); phase ends, stops and failures are kept."""
        started = time.perf_counter()
        ttl = None if keep else self.session.checkpoint_ttl_seconds
        saved = await self.session.save_checkpoint(self._checkpoint_name(), ttl)
        if self.iteration < self.components.total_iterations:
            stage, within = self.components.stage_at(self.iteration)
        else:
            stage, within = (
                len(self.components.stages) - 1,
                self.components.stages[-1].iterations if self.components.stages else 0,
            )
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
            periodic=periodic,
        )
        write_checkpoint(self.run_dir.checkpoints, checkpoint)
        self.last_checkpoint = self.step
        self.progress.message(
            f"checkpoint step {self.step} ({reason}) in {time.perf_counter() - started:.1f}s: {saved.state}"
        )
        training = self.config.training
        best = best_steps(self.run_dir.evaluations, training.keep_best_by)
        unknown = training.keep_last and training.keep_best_by and not best and not self._warned_best
        if unknown and read_evaluation_records(self.run_dir.evaluations):
            self._warned_best = True
            self.progress.message(
                f"warning: training.keep_best_by = {training.keep_best_by!r} names no metric of the evaluations "
                "(e.g. 'debate/cons@k', 'direct/correct'); no best checkpoint is kept"
            )
        for pruned in prune_checkpoints(
            self.run_dir.checkpoints, training.keep_last, best, self.run_dir.backend_states
        ):
            self.progress.message(f"checkpoint step {pruned.step} pruned (keep_last = {training.keep_last})")

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
        """The metrics record of the step just done (steps count from 1)."""
        self.sink.write(self.step + 1, metrics)
        self.step += 1
        self._uncommitted = False

    def _log_transcripts(
        self,
        step: int,
        records: Sequence[DebateRecord],
        results: Sequence[RewardResult],
        advantages: Sequence[DebateAdvantages | None],
    ) -> None:
        """The first ``num_groups_to_log`` debates of a step, each with its rewards and advantages beside it."""
        logged = zip(records, results, advantages, strict=True)
        for index, (record, result, advantage) in enumerate(list(logged)[: self.config.logging.num_groups_to_log]):
            path = self.run_dir.transcript_path(step, index)
            with output_write_errors(path):
                path.parent.mkdir(parents=True, exist_ok=True)
                self.components.write_transcript(record, path)
            write_sidecar(path, reward_summary(self.components.reward_name, record, result, advantage))

    def _save_evaluation_debates(self, evaluator: Evaluator, step: int, label: str) -> None:
        """Every debate of an evaluation under ``eval/step_NNNNNN_<label>/``, named by its debate
        id, with its rewards beside it (``debate show`` reads them), so each judgement can be traced
        to the prompt it answered."""
        folder = self.run_dir.evaluation_debates(step, label)
        with output_write_errors(folder):
            folder.mkdir(parents=True, exist_ok=True)
        for episode, problem in zip(evaluator.episodes, evaluator.problems_of_episodes, strict=True):
            record = episode.record
            path = folder / f"{record.debate_id}.json"
            with output_write_errors(path):
                self.components.write_transcript(record, path)
            result = self.components.score(record, problem)
            write_sidecar(path, reward_summary(self.components.reward_name, record, result, None))

    async def _evaluate(self, label: str, step: int) -> dict[str, float]:
        """Evaluate the current weights, the state after ``step`` updates."""
        if self.config.evaluation.num_problems == 0:
            return {}
        started = time.perf_counter()
        evaluator = Evaluator(
            self.components,
            self.config.evaluation,
            self.config.run.seed,
            self.config.training.max_debates_in_flight,
            self.progress,
        )
        sampler = self.session.sampler()
        metrics = await evaluator.evaluate(sampler, self.opponent, label=f"eval {label}")
        raise_evaluation_failure(sampler, evaluator.episodes, self.config, label)
        metrics["time/eval"] = time.perf_counter() - started
        baseline = first_evaluation(self.run_dir.evaluations)
        if baseline is not None:
            metrics.update(paired_changes(baseline.get("per_problem"), evaluator.per_problem))
        record = {
            "label": label,
            "step": step,
            "iteration": self.iteration,
            "warmstart_steps": self.warmstart_steps,
            "metrics": metrics,
            "per_problem": evaluator.per_problem,
            "baseline": None if baseline is None else baseline.get("label"),
        }
        self._save_evaluation_debates(evaluator, step, label)
        atomic_write_json(self.run_dir.evaluation_path(step, label), record)
        shown = {
            k.split("/", 1)[1]: v
            for k, v in metrics.items()
            if (k.endswith(("/correct", "/judge_accuracy", "/comparison_rate", "/format")) or "/cons@" in k)
            and not k.endswith(("_se", "_change"))
        }
        self.progress.finish(shown)
        return metrics


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
    config: RunConfig,
    registry: Registry,
    run_dir: RunDirectory,
    *,
    resume: bool = False,
    progress: Progress | None = None,
    stop: StopRequest | None = None,
    components_factory: ComponentsFactory = build_run_components,
    handle_signals: bool = True,
) -> RunOutcome:
    """Start a run in ``run_dir`` (or continue the one there with ``resume=True``) and train.

    The run directory's lock is held throughout (``training.run_lock``): a second writer is refused.

    Raises:
        RunLockedError: another live process writes ``run_dir``; the message names it.
        ComponentFailure: a plugin raised; the message names it and the debate, and the run
            was checkpointed first (when its weights were those of a finished step).
        BackendError: the backend failed for good (after retries).
        OutputWriteError: a file of the run could not be written (a full disk); the message names
            it, and the run was checkpointed first as for a ComponentFailure, where it could be.
    """
    progress = progress or Progress(config.logging.progress, line_interval_s=config.logging.progress_interval_s)
    # the fixed opponent is resolved once: a wrong checkpoint fails before any work, and a run
    # directory named as the opponent cannot change it halfway
    fixed_opponent = resolve_opponent(config.evaluation.opponent) if config.evaluation.role_averaged else None
    with run_directory_lock(run_dir.root, progress.message):
        return await _train_locked(
            config,
            registry,
            run_dir,
            resume,
            progress,
            stop or StopRequest(),
            components_factory,
            handle_signals,
            fixed_opponent,
        )


async def _train_locked(
    config: RunConfig,
    registry: Registry,
    run_dir: RunDirectory,
    resume: bool,
    progress: Progress,
    stop: StopRequest,
    components_factory: ComponentsFactory,
    handle_signals: bool,
    fixed_opponent: PolicyWeights | None,
) -> RunOutcome:
    """``run_training`` once the run directory's lock is held."""
    start: Checkpoint | None = None
    if resume:
        point = choose_resume_point(run_dir, config)
        for line in point.messages():
            progress.message(line)
        start = point.checkpoint
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
        config = resolve_init_from(config)
        if config.model.init_from:
            progress.message(f"starting from the trained weights {config.model.init_from}")
        write_resolved_config(config, run_dir.config_path, registry)
        run_dir.write_plugins(installed_distributions())
    run_dir.create()
    repair = run_dir.repair_metrics(start.step if start else 0)
    for line in repair.messages():
        progress.message(line)
    gone_transcripts: tuple[int, ...] = ()
    if start is not None and config.logging.num_groups_to_log > 0:
        gone_transcripts = lost_transcripts(run_dir, start.warmstart_steps + 1, start.step)
        if gone_transcripts:
            progress.message(transcripts_message(run_dir, gone_transcripts, start.step))
    lost = LostHistory(repair.missing, gone_transcripts)
    session = await open_session_async(
        config,
        registry,
        state_path=start.backend_state if start else (config.model.init_from or None),
        with_optimizer=start is not None,
        state_directory=run_dir.backend_states,
        retry=retry_policy(config.training),
    )
    status = "errored"
    try:
        opponent = opponent_client(session, fixed_opponent) if config.evaluation.role_averaged else None
        if start is not None:
            restore_rng_state(start.rng)
        components = components_factory(config, registry, session.tokenizer)
        sink = open_sinks(config.logging, registry, run_dir.root)
        trainer = Trainer(
            config,
            components,
            session,
            run_dir,
            sink,
            progress,
            stop,
            session.tokenizer,
            opponent=opponent,
            lost_history=lost,
        )
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
