"""One warm-start step: the reference debates of a batch, and a cross-entropy update on the
responses they teach (docs/training.md#warm-start)."""

from __future__ import annotations

import time

from debate_core.records.metrics import MetricValue
from debate_core.training.kernel.policy_update import adam_params, update_policy
from debate_core.training.kernel.rollouts import run_debates, sampled_tokens
from debate_core.training.run_context import RunContext, RunPosition
from debate_core.training.schedule import learning_rate_at
from debate_core.training.warmstart.data import (
    WarmstartData,
    flawed_first_answers,
    trained_first_answers,
    truncated_responses,
    warmstart_datums,
)


async def warmstart_step(
    context: RunContext, position: RunPosition, data: WarmstartData, index: int
) -> dict[str, MetricValue]:
    """Warm-start step ``index`` (from 0): its debates, its update, and its metrics record."""
    settings = context.config.warmstart
    progress = context.progress
    started = time.perf_counter()
    jobs = data.jobs(index)
    progress.start(f"{context.step_label(position.step + 1)} warm-start {index + 1}/{settings.steps}", len(jobs))
    episodes = await run_debates(
        context.components.runner(),
        jobs,
        context.config.training.max_debates_in_flight,
        lambda e: progress.debate_done(sampled_tokens(e)),
    )
    datums = warmstart_datums(episodes, jobs)
    built = time.perf_counter()
    lr = learning_rate_at(settings.learning_rate, settings.lr_schedule, index, settings.steps)
    update = await update_policy(
        context.session, position, datums, adam_params(context.config.training, lr), "cross_entropy"
    )
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
        "warmstart/trained_first_answers": trained_first_answers(jobs),
        "time/rollouts": built - started,
        "time/training": done - built,
        "time/total": done - started,
    }
    progress.finish({"loss/token": float(metrics["warmstart/loss_per_token"]), "lr": lr}, context.costs.step_note())
    return metrics
