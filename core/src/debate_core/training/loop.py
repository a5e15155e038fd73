"""The training loop: it schedules an optional warm-start, then debate self-play RL, with
evaluations, metrics records and checkpoints between the steps (docs/training.md#one-iteration).

One RL iteration (``training.rl.iteration``):

1. take ``batch_size`` problems of the current curriculum stage (seeded order, epochs chained);
2. run one self-play debate per problem, at most ``max_debates_in_flight`` at once, every agent
   sampling from the sampling client of the current weights;
3. score each debate with the reward plugin and turn rewards into per-token advantages
   (``rewards.advantages``), then trajectories into Datums (``training.kernel.datum``); write the
   logged debates' transcripts (before the update, so that a full disk there stops the run with
   the weights of a finished step, which it checkpoints);
4. ``forward_backward`` + ``optim_step`` per substep, pipelined (``training.kernel.chunked_update``),
   under the watchdog and the finiteness check of ``training.kernel.policy_update``, which then takes
   a fresh sampling client of the new weights;
5. here: the iteration's garbage freed (``training.memory``); evaluation every ``eval_every``
   (``training.evaluation.scheduled``), after which the next iteration samples from a fresh
   client of the same weights; one metrics record; a checkpoint every ``save_every``
   (``training.checkpointing``).

Steps count updates, warm-start steps first, then RL iterations, from 1: step ``s`` is the
state after ``s`` updates, and everything the run leaves about it carries that number (its
metrics record, the progress line, ``transcripts/step_s``, ``eval/step_s_<label>.json`` and
``checkpoints/step_s.json``; an evaluation before any update is step 0). Metrics are written
before the checkpoint of the same step, so a crash between the two resumes from the earlier
checkpoint and rewrites the record; nothing is lost or repeated.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs

from debate_core.records.json_values import JsonObject
from debate_core.records.metrics import MetricSink, MetricValue
from debate_core.rundir.evaluation_records import latest_by_label
from debate_core.rundir.lost_history import LostHistory
from debate_core.runtime.checkpoint_format import Checkpoint
from debate_core.training.checkpointing import Checkpointer, due
from debate_core.training.costs import CostLedger
from debate_core.training.evaluation.scheduled import OpponentClient, evaluate_weights
from debate_core.training.kernel.rollouts import SamplingAbandoned
from debate_core.training.memory import release_garbage
from debate_core.training.rl.iteration import rl_iteration
from debate_core.training.rl.rollout_queue import RolloutQueue
from debate_core.training.run_context import RunContext, RunPosition
from debate_core.training.warmstart.data import WarmstartData
from debate_core.training.warmstart.step import warmstart_step


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
    costs: JsonObject = attrs.field(factory=dict)
    """The tokens and dollars the run has used, resumes included (``CostLedger.to_json``), with
    ``projected`` while steps are left and the price is known."""
    budget_reached: str | None = None
    """Why the run stopped before its end at ``training.max_cost`` (one line), ``None`` otherwise."""

    def to_json(self) -> JsonObject:
        data = attrs.asdict(self)
        data["run_dir"] = str(self.run_dir)
        return data


@attrs.define
class Trainer:
    """Schedules the steps of one run on an open backend session: warm-start steps, RL
    iterations, the evaluations, metrics records and checkpoints between them."""

    context: RunContext
    sink: MetricSink
    opponent: OpponentClient | None = None
    """Opens the fixed opponent of evaluation (``evaluation.uses_opponent``; resolved once, at the start of the run)."""
    lost_history: LostHistory = attrs.field(factory=LostHistory)
    """What a resume found gone of the run's records (kept in ``summary.json``)."""
    position: RunPosition = attrs.field(factory=RunPosition)
    checkpoints: Checkpointer = attrs.field(init=False)
    fresh_sampler_due: bool = attrs.field(init=False, default=False)
    """An evaluation after step 1 or later sampled from the current sampling client: the next RL
    iteration samples from a fresh one (see :meth:`_evaluate`)."""

    def __attrs_post_init__(self) -> None:
        self.checkpoints = Checkpointer(self.context, self.position)

    async def run(self, start: Checkpoint | None) -> RunOutcome:
        """Run (or continue from ``start``) until done, stopped or failed."""
        position, stop = self.position, self.context.stop
        if start is not None:
            position.step, position.warmstart_steps, position.iteration = (
                start.step,
                start.warmstart_steps,
                start.iteration,
            )
            position.last_checkpoint = start.step
            self.context.costs.resume(CostLedger.from_json(start.costs))
            self.context.alarms.replay(self.context.run_dir.metric_records(start.step))
        self.context.progress.run_note = self.context.costs.run_note
        pending_eval: dict[str, float] = {}
        if position.step == 0 and self.context.config.evaluation.at_start:
            pending_eval = await self._evaluate("start", 0)
        try:
            await self._warmstart(pending_eval)
            await self._reinforce(pending_eval)
        except SamplingAbandoned:
            pass
        except Exception as exc:  # whatever ends the run, a finished step is checkpointed first
            await self.checkpoints.before_exit(exc)
            raise
        if stop.requested and position.last_checkpoint != position.step:
            await self.checkpoints.save(f"stopped by {stop.name}", keep=True)
        elif self._budget_stop() and position.last_checkpoint != position.step:
            await self.checkpoints.save("budget reached: training.max_cost", keep=True)
        return self._outcome()

    def _halting(self) -> bool:
        """A stop was asked for, or the budget is spent: no further step starts."""
        return self.context.stop.requested or self.context.costs.budget_spent

    def _budget_stop(self) -> bool:
        """The budget stopped the run before its last step."""
        context, position = self.context, self.position
        config = context.config
        warmstart_left = config.warmstart.enabled and position.warmstart_steps < config.warmstart.steps
        left = warmstart_left or position.iteration < context.components.total_iterations
        return context.costs.budget_spent and left and not context.stop.requested

    def _outcome(self) -> RunOutcome:
        position = self.position
        outcome = RunOutcome(
            run_dir=self.context.run_dir.root,
            step=position.step,
            iterations=position.iteration,
            warmstart_steps=position.warmstart_steps,
            stopped_by=self.context.stop.name or None,
            last_checkpoint=position.last_checkpoint,
            evaluations=latest_by_label(self.context.run_dir.evaluations),
            lost_history=self.lost_history.to_json(),
            costs=self._costs(),
            budget_reached=self.context.costs.budget_reason() if self._budget_stop() else None,
        )
        self.context.run_dir.write_summary(outcome.to_json())
        return outcome

    def _costs(self) -> JsonObject:
        costs = self.context.costs
        summary = costs.ledger.to_json()
        if not costs.pricing.priced:  # tokens counted, nothing priced
            return {"tokens": summary["tokens"]}
        projected = costs.ledger.projected(self._remaining())
        if projected is not None:
            summary["projected"] = projected
        return summary

    def _remaining(self) -> dict[str, int]:
        """The steps each phase has left."""
        config, position = self.context.config, self.position
        warmstart = config.warmstart.steps - position.warmstart_steps if config.warmstart.enabled else 0
        return {"warmstart": max(warmstart, 0), "rl": self.context.components.total_iterations - position.iteration}

    async def _warmstart(self, pending_eval: dict[str, float]) -> None:
        """Warm-start steps until ``warmstart.steps``, an evaluation after the last."""
        context, position = self.context, self.position
        config = context.config
        settings = config.warmstart
        if not settings.enabled or position.warmstart_steps >= settings.steps:
            return
        components = context.components
        data = WarmstartData.prepare(
            components.stages[0].dataset,
            components.grader,
            settings,
            config.run.seed,
            config.debate.num_agents,
            context.session.tokenizer,
            components.contract,
        )
        context.progress.phase("warm-start", settings.steps, "steps", done=position.warmstart_steps)
        while position.warmstart_steps < settings.steps:
            if self._halting():
                raise SamplingAbandoned
            metrics = self._take(pending_eval)
            metrics.update(await warmstart_step(context, position, data, position.warmstart_steps))
            position.warmstart_steps += 1
            last = position.warmstart_steps == settings.steps
            if last and config.evaluation.after_warmstart:
                metrics.update(await self._evaluate("warmstart", position.step + 1))
            self._write(metrics)
            if last or due(position.warmstart_steps, config.training.save_every):
                await self.checkpoints.save(
                    "warm-start" if last else "scheduled",
                    keep=last and not components.total_iterations,
                    periodic=not last,
                )

    async def _reinforce(self, pending_eval: dict[str, float]) -> None:
        """RL iterations until the last, evaluating every ``eval_every`` and at the end."""
        context, position = self.context, self.position
        training = context.config.training
        context.progress.phase("RL", context.components.total_iterations, "iterations", done=position.iteration)
        rollouts = RolloutQueue(
            training.max_steps_off_policy, self._barrier, asyncio.Semaphore(training.max_debates_in_flight)
        )
        try:
            await self._iterations(pending_eval, rollouts)
        finally:
            await rollouts.cancel()

    async def _iterations(self, pending_eval: dict[str, float], rollouts: RolloutQueue) -> None:
        """Each RL iteration, then its evaluation, metrics record and checkpoint when due."""
        context, position = self.context, self.position
        total = context.components.total_iterations
        training, evaluation = context.config.training, context.config.evaluation
        stop = context.stop
        while position.iteration < total:
            if self._halting():
                raise SamplingAbandoned
            if self.fresh_sampler_due:
                await context.session.refresh_sampling_client()
                self.fresh_sampler_due = False
            metrics = self._take(pending_eval)
            metrics.update(await rl_iteration(context, position, position.iteration, rollouts))
            release_garbage()
            position.iteration += 1
            last = position.iteration == total
            if due(position.iteration, training.eval_every) or (last and evaluation.at_end):
                label = "final" if last else f"iteration_{position.iteration}"
                metrics.update(await self._evaluate(label, position.step + 1))
            self._write(metrics)
            if last or due(position.iteration, training.save_every) or stop.requested:
                stopped = stop.requested and not last
                reason = "final" if last else (f"stopped by {stop.name}" if stopped else "scheduled")
                await self.checkpoints.save(reason, keep=last or stop.requested, periodic=reason == "scheduled")

    def _barrier(self, iterations: int) -> bool:
        """True when the run checkpoints, evaluates or ends after ``iterations`` RL iterations: no
        batch after it is sampled ahead by earlier weights (docs/training.md#asynchronous-rollouts),
        so a run resumed there samples what the uninterrupted run sampled."""
        training = self.context.config.training
        total = self.context.components.total_iterations
        return iterations >= total or due(iterations, training.save_every) or due(iterations, training.eval_every)

    @staticmethod
    def _take(pending_eval: dict[str, float]) -> dict[str, MetricValue]:
        """A new step's metrics, starting with an evaluation that waited for it (the one at the
        start is recorded with the first step)."""
        metrics: dict[str, MetricValue] = dict(pending_eval)
        pending_eval.clear()
        return metrics

    async def _evaluate(self, label: str, step: int) -> dict[str, float]:
        """Evaluate the weights of ``step``. After step 1 or later, RL then samples from a fresh
        sampling client of the same weights, as a run resumed from the checkpoint of ``step`` does:
        a backend may keep what a client computed (the local backend's prefix cache), and the
        logprobs computed through a cached prefix can differ in their last digits from those
        computed afresh, so RL sampling after the evaluation's debates would read figures that a
        resumed run cannot reproduce. (Step 0 has no checkpoint: a resume starts over.)"""
        metrics = await evaluate_weights(self.context, self.position, self.opponent, label, step)
        if metrics and step > 0:
            self.fresh_sampler_due = True
        return metrics

    def _write(self, metrics: dict[str, MetricValue]) -> None:
        """The metrics record of the step just done (steps count from 1), with its tokens and cost,
        and ``backend/retries`` when backend requests failed and were sent again since the previous
        record."""
        ledger = self.context.session.retry.ledger
        retries = ledger.take() if ledger is not None else 0
        if retries:
            metrics["backend/retries"] = retries
        position = self.position
        metrics.update(self.context.costs.step_done(str(metrics.get("phase", "rl")), self._remaining()))
        self.sink.write(position.step + 1, metrics)
        position.step += 1
        position.uncommitted = False
