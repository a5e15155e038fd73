"""One RL iteration (docs/training.md#one-iteration), as one short function over named steps:
take the batch, sample its debates, score them, turn rewards into advantages and the debates
into Datums, log transcripts, update, and describe it all in one metrics record."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from debate_core.config import RunConfig, TrainingSettings
from debate_core.errors import ComponentFailure, DebateError
from debate_core.records import DebateEpisode, JudgeHost, RewardResult, TrainingRound
from debate_core.records.metrics import MetricValue
from debate_core.rewards.advantages import AdvantageOptions, compute_advantages
from debate_core.runtime.sampling_failures import raise_backend_failure
from debate_core.runtime.session import BackendSession
from debate_core.runtime.token_meter import TokenMeter
from debate_core.training.kernel.datum import AssembledDatum, trajectory_datums
from debate_core.training.kernel.policy_update import adam_params, update_policy
from debate_core.training.kernel.rollouts import DebateJob, run_debates, sampled_tokens
from debate_core.training.progress import Progress
from debate_core.training.rl.batch import Batch, ScoredDebates, TrainedBatch
from debate_core.training.rl.external_judge_host import BackendJudgeHost
from debate_core.training.rl.kl_penalty import penalise
from debate_core.training.rl.metrics import IterationClock, iteration_headline, iteration_metrics, rollout_metrics
from debate_core.training.rl.rollout_queue import RolloutQueue, Sampled, SampledBatch
from debate_core.training.rl.transcript_log import log_transcripts
from debate_core.training.run_components import RunComponents
from debate_core.training.run_context import RunContext, RunPosition
from debate_core.training.schedule import learning_rate_at
from debate_core.training.seeding import batch_indices, derive_seed


async def rl_iteration(
    context: RunContext, position: RunPosition, iteration: int, rollouts: RolloutQueue
) -> dict[str, MetricValue]:
    """RL iteration ``iteration`` (from 0), the update of step ``position.step + 1``: its metrics.
    Its debates come from ``rollouts`` when they were sampled ahead (``training.max_steps_off_policy``)."""
    step = position.step + 1
    config, components, session = context.config, context.components, context.session
    batch = training_batch(components, config.run.seed, config.training.batch_size, iteration)
    clock = IterationClock(started=time.perf_counter())
    sampled = await sample_debates(context, rollouts, batch, iteration, step)
    clock.sampled = time.perf_counter()
    judges = BackendJudgeHost(session, components, context.run_dir.judges)
    scored = await score_debates(
        components, judges, advantage_options(config.training), batch, sampled.episodes, iteration
    )
    datums = policy_datums(scored)
    penalty = None
    if (coefficient := config.training.kl_penalty_coef) > 0:
        penalty = await penalise(session, context.run_dir, datums, coefficient, iteration, position.step)
        datums = penalty.datums
    # before the update: a transcript that cannot be written leaves the weights of a finished step
    logged = config.logging.num_groups_to_log
    log_transcripts(components, context.run_dir, logged, step, scored.records, scored.results, scored.advantages)
    clock.scored = time.perf_counter()
    trained = await train_batch(session, position, datums, config.training, components.total_iterations, iteration)
    clock.trained = time.perf_counter()
    metrics = iteration_metrics(components.grader, config.debate.num_agents, iteration, batch, scored, trained, clock)
    metrics.update(rollout_metrics(sampled, rollouts))
    if penalty is not None:
        metrics["optim/kl_policy_reference"] = penalty.mean_divergence
    alarms, lines = context.alarms.check(iteration, metrics)
    metrics.update(alarms)
    silence = judge_silence(scored.results, config.reward.options, iteration)
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


def training_batch(components: RunComponents, seed: int, batch_size: int, iteration: int) -> Batch:
    """``batch_size`` problems (``training.batch_size``) of the iteration's curriculum stage, in the
    order ``seed`` (``run.seed``) gives."""
    stage_index, within = components.stage_at(iteration)
    stage = components.stages[stage_index]
    problems = stage.dataset.problems("train")
    if not problems:
        raise ComponentFailure(f"dataset plugin '{stage.dataset.name}' has no 'train' problems")
    indices = batch_indices(seed, stage_index, within, batch_size, len(problems))
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
    config, components = context.config, context.components

    def start(later: int) -> None:
        """Start sampling iteration ``later``'s batch by the current weights, those of ``iteration``."""
        size = config.training.batch_size
        later_batch = batch if later == iteration else training_batch(components, config.run.seed, size, later)
        debates = sample_batch(
            context.session,
            components,
            config,
            context.progress,
            rollouts,
            later_batch,
            later,
            step + later - iteration,
        )
        rollouts.start(later, iteration, debates)

    if not rollouts.started(iteration):
        start(iteration)
    for later in rollouts.ahead_of(iteration, components.total_iterations):
        start(later)
    label = f"{context.step_label(step)} iter {iteration + 1}/{components.total_iterations}"
    context.progress.start(label, len(batch.problems), *rollouts.progress.show(iteration))
    sampled = await rollouts.take(iteration, context.stop.wait)
    if sampled is None:  # older than the bound: dropped, sampled again by the current weights
        start(iteration)
        sampled = await rollouts.take(iteration, context.stop.wait)
        assert sampled is not None
    context.session.tokens.add(sampled.tokens)
    return sampled


async def sample_batch(
    session: BackendSession,
    components: RunComponents,
    config: RunConfig,
    progress: Progress,
    rollouts: RolloutQueue,
    batch: Batch,
    iteration: int,
    step: int,
) -> Sampled:
    """Sample the debates of RL iteration ``iteration``'s batch with the sampling client current
    when this is called (the client is taken before the first await, so later updates never reach
    these debates), and count their tokens apart (the run counts them when the trainer takes the
    batch). ``config`` names what to change when a prompt does not fit the model's context."""
    sampler, meter = session.sampler(), TokenMeter()
    sampler.meter = meter
    policy = components.make_policy(sampler)
    n = config.debate.num_agents
    jobs = [
        DebateJob(p, (policy,) * n, derive_seed(config.run.seed, "train", iteration, i), f"step{step}-debate{i}")
        for i, p in enumerate(batch.problems)
    ]

    def done(episode: DebateEpisode) -> None:
        tokens = sampled_tokens(episode)
        if rollouts.progress.counted(iteration, tokens):
            progress.debate_done(tokens)

    episodes = await run_debates(components.runner(), jobs, rollouts.slots, done)
    raise_backend_failure(sampler, episodes, config)
    return episodes, meter.reading()


def advantage_options(training: TrainingSettings) -> AdvantageOptions:
    """How ``[training]`` turns rewards into advantages (docs/rewards.md#advantages)."""
    return AdvantageOptions(normalisation=training.advantage_normalisation, drop_uniform=training.drop_uniform_groups)


async def score_debates(
    components: RunComponents,
    judges: JudgeHost,
    options: AdvantageOptions,
    batch: Batch,
    episodes: Sequence[DebateEpisode],
    iteration: int,
) -> ScoredDebates:
    """Each debate's reward at training round ``iteration`` (an external judge reached through
    ``judges``), and the advantages of the batch by ``options``."""
    round = TrainingRound(iteration, judges)
    results = [
        await components.score_in_training(e.record, p, round) for e, p in zip(episodes, batch.problems, strict=True)
    ]
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
    session: BackendSession,
    position: RunPosition,
    datums: list[AssembledDatum],
    training: TrainingSettings,
    total_iterations: int,
    iteration: int,
) -> TrainedBatch:
    """The update of RL iteration ``iteration`` of ``total_iterations`` at its learning rate, by
    ``[training]``'s loss and optimiser, on the Datums that carry a signal (all of them unless
    ``training.skip_zero_advantage_updates``)."""
    trainable = [d for d in datums if d.has_signal()] if training.skip_zero_advantage_updates else datums
    lr = learning_rate_at(training.learning_rate, training.lr_schedule, iteration, total_iterations)
    adam = adam_params(training, lr)
    update = await update_policy(
        session, position, trainable, adam, training.loss_fn, training.loss_fn_config, training.num_substeps
    )
    return TrainedBatch(datums, trainable, update, lr)
