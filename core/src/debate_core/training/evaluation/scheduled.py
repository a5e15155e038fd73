"""An evaluation the loop schedules (at the start, after the warm-start, every ``eval_every``
iterations, at the end): run it, save its record and every debate it ran, and say its headline
(docs/training.md#evaluation)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from debate_core.backends.contract import SamplingClientLike
from debate_core.files import atomic_write_json, output_write_errors
from debate_core.records.json_values import JsonObject
from debate_core.rundir.evaluation_headline import headline_figures
from debate_core.rundir.evaluation_records import first_evaluation, paired_changes
from debate_core.rundir.reward_sidecars import reward_summary, write_sidecar
from debate_core.runtime.sampling_failures import raise_evaluation_failure
from debate_core.training.costs import price
from debate_core.training.evaluation.evaluator import Evaluator
from debate_core.training.run_components import RunComponents
from debate_core.training.run_context import RunContext, RunPosition

OpponentClient = Callable[[], Awaitable[SamplingClientLike]]
"""Opens the fixed opponent of evaluation (``evaluation.uses_opponent``; resolved once, at the start of the run)."""


async def evaluate_weights(
    context: RunContext, position: RunPosition, opponent: OpponentClient | None, label: str, step: int
) -> dict[str, float]:
    """Evaluate the current weights, the state after ``step`` updates; ``{}`` when
    ``evaluation.num_problems`` is 0. Changes are paired against the run's first evaluation."""
    config = context.config
    if config.evaluation.num_problems == 0:
        return {}
    started = time.perf_counter()
    evaluator = Evaluator(
        context.components,
        config.evaluation,
        config.run.seed,
        config.training.max_debates_in_flight,
        context.progress,
    )
    sampler = context.session.sampler()
    context.costs.begin_evaluation()
    metrics = await evaluator.evaluate(sampler, opponent, label=f"eval {label}")
    spent = context.costs.end_evaluation()
    raise_evaluation_failure(sampler, evaluator.episodes, config, label)
    metrics["time/eval"] = time.perf_counter() - started
    metrics.update({f"time/eval_{mode}": seconds for mode, seconds in evaluator.seconds.items()})
    baseline = first_evaluation(context.run_dir.evaluations)
    if baseline is not None:
        metrics.update(paired_changes(baseline.get("per_problem"), evaluator.per_problem))
    record: JsonObject = {
        "label": label,
        "step": step,
        "iteration": position.iteration,
        "warmstart_steps": position.warmstart_steps,
        "metrics": metrics,
        "per_problem": evaluator.per_problem,
        "baseline": None if baseline is None else baseline.get("label"),
        "tokens": spent.to_json(),
    }
    if config.pricing.priced:
        record["cost"] = price(spent, config.pricing)
    save_evaluation_debates(context.components, context.run_dir.evaluation_debates(step, label), evaluator)
    atomic_write_json(context.run_dir.evaluation_path(step, label), record)
    context.progress.finish(headline_figures(metrics), context.costs.evaluation_note(spent), label=f"eval {label}")
    return metrics


def save_evaluation_debates(components: RunComponents, folder: Path, evaluator: Evaluator) -> None:
    """Every debate of an evaluation in ``folder`` (``eval/step_NNNNNN_<label>/``), named by its
    debate id, with its rewards beside it (``debate show`` reads them), so each judgement can be
    traced to the prompt it answered."""
    with output_write_errors(folder):
        folder.mkdir(parents=True, exist_ok=True)
    for episode, problem in zip(evaluator.episodes, evaluator.problems_of_episodes, strict=True):
        record = episode.record
        path = folder / f"{record.debate_id}.json"
        with output_write_errors(path):
            components.write_transcript(record, path)
        result = components.score(record, problem)
        write_sidecar(path, reward_summary(components.reward_name, record, result, None))
