"""One RL iteration (docs/training.md#one-iteration), as one short function over named steps:
take the batch, sample its debates, score them, turn rewards into advantages and the debates
into Datums, log transcripts, update, and describe it all in one metrics record."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from debate_core.errors import ComponentFailure, DebateError
from debate_core.records import DebateEpisode, RewardResult, TrainingRound
from debate_core.records.metrics import MetricValue
from debate_core.rewards.advantages import AdvantageOptions, compute_advantages
from debate_core.runtime.sampling_failures import raise_backend_failure
from debate_core.runtime.token_meter import TokenMeter
from debate_core.training.kernel.datum import AssembledDatum, trajectory_datums
from debate_core.training.kernel.policy_update import update_policy
from debate_core.training.kernel.rollouts import DebateJob, run_debates, sampled_tokens
from debate_core.training.rl.batch import Batch, ScoredDebates, TrainedBatch
from debate_core.training.rl.external_judge_host import BackendJudgeHost
from debate_core.training.rl.kl_penalty import penalise
from debate_core.training.rl.metrics import IterationClock, iteration_headline, iteration_metrics, rollout_metrics
from debate_core.training.rl.rollout_queue import RolloutQueue, Sampled, SampledBatch
from debate_core.training.rl.transcript_log import log_transcripts
from debate_core.training.run_context import RunContext, RunPosition
from debate_core.training.schedule import learning_rate_at
from debate_core.training.seeding import batch_indices, derive_seed


async def rl_iteration(
    context: RunContext, position: RunPosition, iteration: int, rollouts: RolloutQueue
) -> dict[str, MetricValue]:
    """RL iteration ``iteration`` (from 0), the update of step ``position.step + 1``: its metrics.
    Its debates come from ``rollouts`` when they were sampled ahead (``training.max_steps_off_policy``)."""
    step = position.step + 1
    batch = training_batch(context, iteration)
    clock = IterationClock(started=time.perf_counter())
    sampled = await sample_debates(context, rollouts, batch, iteration, step)
    clock.sampled = time.perf_counter()
    scored = await score_debates(context, batch, sampled.episodes, iteration)
    datums = policy_datums(scored)
    penalty = await penalise(context, datums, iteration, position.step) if _penalised(context) else None
    if penalty is not None:
        datums = penalty.datums
    # before the update: a transcript that cannot be written leaves the weights of a finished step
    log_transcripts(context, step, scored.records, scored.results, scored.advantages)
    clock.scored = time.perf_counter()
    trained = await train_batch(context, position, datums, iteration)
    clock.trained = time.perf_counter()
    metrics = iteration_metrics(context, iteration, batch, scored, trained, clock)
    metrics.update(rollout_metrics(sampled, rollouts))
    if penalty is not None:
        metrics["optim/kl_policy_reference"] = penalty.mean_divergence
    alarms, lines = context.alarms.check(iteration, metrics)
    metrics.update(alarms)
    silence = judge_silence(scored.results, context.config.reward.options, iteration)
    if silence is not None:
        metrics["judge/silent"] = 1.0
        lines.append(silence)
    context.progress.finish(iteration_headline(metrics, batch.dataset_name), context.costs.step_note())
    for line in lines:
        context.progress.message(line)
    return metrics


def judge_silence(results: Sequence[RewardResult], options: Mapping[str, object], iteration: int) -> str | None:
    """One line when an external judge was asked about pairs in this iteration and gave a verdict
    on none of them (``judge_mix`` with ``on_unavailable = "peer"``: every debate got the peer
    reward alone); ``None`` otherwise. The iteration's record then carries ``judge/silent`` = 1."""
    pairs = sum(float(r.metrics.get("judge/pairs", 0.0)) for r in results)
    abstained = sum(float(r.metrics.get("judge/abstained", 0.0)) for r in results)
    if pairs <= 0 or abstained < pairs:
        return None
    judge = options.get("judge")
    name = judge.get("name") if isinstance(judge, Mapping) else None
    counted = ("failed", "skipped", "unreadable")
    why = ", ".join(
        f"{key} {total:g}"
        for key in counted
        if (total := sum(float(r.metrics.get(f"judge/{key}", 0.0)) for r in results))
    )
    return (
        f"debate: warning: RL iteration {iteration + 1}: judge '{name or '?'}' gave no verdict on any of its "
        f"{pairs:g} pairs{f' ({why})' if why else ''}; every debate got the peer reward alone (judge/silent)"
    )


def _penalised(context: RunContext) -> bool:
    """True when ``training.kl_penalty_coef`` asks for the KL penalty (docs/training.md#kl-penalty)."""
    return context.config.training.kl_penalty_coef > 0


def training_batch(context: RunContext, iteration: int) -> Batch:
    """``training.batch_size`` problems of the iteration's curriculum stage, in the seeded order."""
    components = context.components
    stage_index, within = components.stage_at(iteration)
    stage = components.stages[stage_index]
    problems = stage.dataset.problems("train")
    if not problems:
        raise ComponentFailure(f"dataset plugin '{stage.dataset.name}' has no 'train' problems")
    indices = batch_indices(
        context.config.run.seed, stage_index, within, context.config.training.batch_size, len(problems)
    )
    return Batch(stage_index, stage.dataset.name, [problems[i] for i in indices])


async def sample_debates(
    context: RunContext, rollouts: RolloutQueue, batch: Batch, iteration: int, step: int
) -> SampledBatch:
    """The batch's debates, one self-play debate per problem: those sampled ahead when there are,
    else sampled now by the current weights; meanwhile the batches that ``rollouts`` lets start
    from the current weights start (docs/training.md#asynchronous-rollouts).

    Raises:
        SamplingAbandoned: a stop was requested before the debates finished.
    """
    if not rollouts.started(iteration):
        rollouts.start(iteration, iteration, _sampling(context, rollouts, batch, iteration, step))
    for later in rollouts.ahead_of(iteration, context.components.total_iterations):
        later_batch = training_batch(context, later)
        rollouts.start(later, iteration, _sampling(context, rollouts, later_batch, later, step + later - iteration))
    label = f"{context.step_label(step)} iter {iteration + 1}/{context.components.total_iterations}"
    context.progress.start(label, len(batch.problems), *rollouts.show(iteration))
    sampled = await rollouts.take(iteration, context.stop.wait)
    if sampled is None:  # older than the bound: dropped, sampled again by the current weights
        rollouts.start(iteration, iteration, _sampling(context, rollouts, batch, iteration, step))
        sampled = await rollouts.take(iteration, context.stop.wait)
        assert sampled is not None
    context.session.tokens.add(sampled.tokens)
    return sampled


async def _sampling(context: RunContext, rollouts: RolloutQueue, batch: Batch, iteration: int, step: int) -> Sampled:
    """Sample the batch's debates with the sampling client current when this is called (the
    client is taken before the first await, so later updates never reach these debates), and
    count their tokens apart (the run counts them when the trainer takes the batch)."""
    config, components, progress = context.config, context.components, context.progress
    sampler, meter = context.session.sampler(), TokenMeter()
    sampler.meter = meter
    policy = components.make_policy(sampler)
    n = config.debate.num_agents
    jobs = [
        DebateJob(p, (policy,) * n, derive_seed(config.run.seed, "train", iteration, i), f"step{step}-debate{i}")
        for i, p in enumerate(batch.problems)
    ]

    def done(episode: DebateEpisode) -> None:
        tokens = sampled_tokens(episode)
        if rollouts.counted(iteration, tokens):
            progress.debate_done(tokens)

    episodes = await run_debates(components.runner(), jobs, rollouts.slots, done)
    raise_backend_failure(sampler, episodes, config)
    return episodes, meter.reading()


async def score_debates(
    context: RunContext, batch: Batch, episodes: Sequence[DebateEpisode], iteration: int
) -> ScoredDebates:
    """Each debate's reward at this training round, and the advantages of the batch."""
    components = context.components
    round = TrainingRound(iteration, BackendJudgeHost(context.session, components, context.run_dir.judges))
    results = [
        await components.score_in_training(e.record, p, round) for e, p in zip(episodes, batch.problems, strict=True)
    ]
    training = context.config.training
    options = AdvantageOptions(
        normalisation=training.advantage_normalisation, drop_uniform=training.drop_uniform_groups
    )
    try:
        advantages = compute_advantages([e.record for e in episodes], results, options)
    except DebateError as exc:
        raise ComponentFailure(f"reward plugin '{components.reward_name}': {exc}") from exc
    return ScoredDebates(list(episodes), results, advantages)


def policy_datums(scored: ScoredDebates) -> list[AssembledDatum]:
    """The policy-gradient Datums of every trajectory of every debate kept for training."""
    return [
        d
        for index, (episode, advantage) in enumerate(zip(scored.episodes, scored.advantages, strict=True))
        if advantage is not None
        for trajectory in episode.trajectories
        for d in trajectory_datums(trajectory, advantage, debate_index=index)
    ]


async def train_batch(
    context: RunContext, position: RunPosition, datums: list[AssembledDatum], iteration: int
) -> TrainedBatch:
    """The iteration's update at its learning rate, on the Datums that carry a signal (all of them
    unless ``training.skip_zero_advantage_updates``)."""
    training = context.config.training
    trainable = [d for d in datums if d.has_signal()] if training.skip_zero_advantage_updates else datums
    lr = learning_rate_at(training.learning_rate, training.lr_schedule, iteration, context.components.total_iterations)
    update = await update_policy(
        context, position, trainable, training.loss_fn, training.loss_fn_config, lr, training.num_substeps
    )
    return TrainedBatch(datums, trainable, update, lr)
