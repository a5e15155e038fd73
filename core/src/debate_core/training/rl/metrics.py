"""The metrics record of one RL iteration (docs/training.md#metrics) and its progress headline."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from debate_core.records import Grader
from debate_core.records.metrics import MetricValue
from debate_core.stats import mean
from debate_core.training.collapse.monitor import ground_truth_metrics, label_free_metrics
from debate_core.training.correctness import grade_debate, verifiable_metrics
from debate_core.training.kernel.chunked_update import UpdateResult
from debate_core.training.kernel.debate_metrics import (
    backend_metrics,
    debate_metrics,
    episode_metrics,
    reward_metrics,
    sample_train_metrics,
    total_returns,
    turn_metrics,
)
from debate_core.training.kernel.rollouts import sampled_tokens
from debate_core.training.rl.batch import Batch, ScoredDebates, TrainedBatch
from debate_core.training.rl.rollout_queue import RolloutQueue, SampledBatch


@attrs.define
class IterationClock:
    """When an iteration's phases ended (``time.perf_counter`` seconds)."""

    started: float
    sampled: float = 0.0
    scored: float = 0.0
    trained: float = 0.0


def iteration_metrics(
    grader: Grader | None,
    num_agents: int,
    iteration: int,
    batch: Batch,
    scored: ScoredDebates,
    trained: TrainedBatch,
    clock: IterationClock,
) -> dict[str, MetricValue]:
    """The record of RL iteration ``iteration``: its debates, rewards, grades (by ``grader``, the
    run's, when it has one), update and timings."""
    records = scored.records
    metrics: dict[str, MetricValue] = {
        "phase": "rl",
        "iteration": iteration,
        "stage": batch.stage_index,
        "optim/lr": trained.lr,
    }
    returns = [total_returns(r, res) for r, res in zip(records, scored.results, strict=True)]
    metrics.update(turn_metrics(records))
    metrics.update(reward_metrics(scored.results))
    metrics.update(episode_metrics(scored.episodes, returns))
    metrics.update(debate_metrics(records))
    if grader is not None:
        graded = [grade_debate(r, grader, p.answer) for r, p in zip(records, batch.problems, strict=True)]
        name = f"train_{batch.dataset_name}"
        metrics.update(verifiable_metrics([g for g in graded if g is not None], name, num_agents))
    metrics.update(label_free_metrics(records, batch.problems, scored.advantages, grader))
    metrics.update(ground_truth_metrics(records, batch.problems, scored.results, grader))
    metrics.update(optim_metrics(scored, trained))
    metrics.update(timing_metrics(trained.update, clock))
    rewards = [float(x) for res in scored.results for x in res.agent_rewards]
    metrics["reward/configured"] = mean(rewards)
    metrics["reward/failure_penalty"] = mean(rewards) - float(metrics["env/all/reward/total"])
    return metrics


def optim_metrics(scored: ScoredDebates, trained: TrainedBatch) -> dict[str, MetricValue]:
    """What was trained: Datums built, trained and skipped, updates, and the advantages' size."""
    datums, trainable, update = trained.datums, trained.trainable, trained.update
    out: dict[str, MetricValue] = {
        "optim/num_datums": len(datums),
        "optim/num_datums_trained": len(update.datums),
        "optim/num_datums_zero_advantage": len(datums) - len(trainable),
        "optim/num_updates": len(update.outputs),
        "optim/update_skipped": float(not update.updated),
        "optim/trained_tokens": sum(d.num_tokens for d in update.datums),
        "advantages/dropped_debates": sum(1 for a in scored.advantages if a is None),
        "advantages/mean_abs": mean(action_advantages(scored)),
    }
    if update.updated:
        out.update(sample_train_metrics(update.datums, update.outputs))
        out.update(backend_metrics(update.outputs))
    return out


def action_advantages(scored: ScoredDebates) -> list[float]:
    """The size of the advantage of every action token of the debates kept for training, in
    trajectory order, from the advantages themselves (not read back from the Datums), at the
    precision the update receives them: a Datum's arrays are float32 on the wire."""
    values = [
        a
        for episode, advantage in zip(scored.episodes, scored.advantages, strict=True)
        if advantage is not None
        for trajectory in episode.trajectories
        for transition in trajectory.transitions
        for a in advantage.token_advantages(trajectory.agent, transition.step, transition.action_sections)
    ]
    return [abs(float(a)) for a in np.asarray(values, dtype=np.float32)]


def timing_metrics(update: UpdateResult, clock: IterationClock) -> dict[str, MetricValue]:
    """Seconds per phase of the iteration as the trainer lived it, and tokens per second trained."""
    trained_tokens = sum(d.num_tokens for d in update.datums)
    training = clock.trained - clock.scored
    return {
        "time/rewards": clock.scored - clock.sampled,
        "time/training": training,
        "time/total": clock.trained - clock.started,
        "throughput/trained_tokens_per_s": trained_tokens / max(training, 1e-9) if trained_tokens else 0.0,
    }


def rollout_metrics(sampled: SampledBatch, rollouts: RolloutQueue) -> dict[str, MetricValue]:
    """How the iteration's debates were sampled (docs/training.md#asynchronous-rollouts): the
    batch's own sampling time and speed, how long the trainer waited for it (all of the sampling
    time unless it was sampled ahead), its staleness in updates, and the batches dropped as too
    stale so far in the run."""
    action_tokens = sum(sampled_tokens(e) for e in sampled.episodes)
    return {
        "time/sampling": sampled.sampling_s,
        "time/sampling_wait": sampled.waited_s,
        "throughput/sampled_tokens_per_s": action_tokens / max(sampled.sampling_s, 1e-9),
        "async/staleness": sampled.staleness,
        "async/stale_dropped": rollouts.stale_dropped,
    }


def iteration_headline(metrics: Mapping[str, MetricValue], dataset_name: str) -> dict[str, float]:
    """The figures of an iteration's progress line, short enough for one line of a terminal: the
    reward, failed turns' penalty and parse errors when there are any, the training problems'
    correctness, the collapse figures of :data:`HEADLINE_MONITORS` and the sampling rate. The
    other monitors are in the metrics file and the report, and an alarm says when one trips."""
    headline = {"reward": float(metrics["reward/configured"])}
    for short, name in (("fail_penalty", "reward/failure_penalty"), ("parse_err", "parse_error")):
        if float(metrics[name]) != 0.0:
            headline[short] = float(metrics[name])
    if f"train_{dataset_name}/correct" in metrics:
        headline["correct"] = float(metrics[f"train_{dataset_name}/correct"])
    for short, name in HEADLINE_MONITORS:
        value = metrics.get(name)
        if isinstance(value, int | float):
            headline[short] = float(value)
    headline["tok/s"] = float(metrics["throughput/sampled_tokens_per_s"])
    return headline


HEADLINE_MONITORS: tuple[tuple[str, str], ...] = (
    ("no_signal", "monitor/no_signal"),
    ("agree_r1", "monitor/degenerate_consensus"),
    ("entropy", "optim/entropy"),
)
"""The collapse figures of an iteration's progress line (docs/training.md#collapse-alarms), by
their short names there."""
