"""``debate train CONFIG [section.key=value ...] [--run-dir DIR] [--resume RUN_DIR]``."""

from __future__ import annotations

import argparse
import math
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from debate_core.errors import DebateError, OutputWriteError
from debate_core.records.json_values import JsonMapping
from debate_core.runtime.interrupts import run_interruptibly

if TYPE_CHECKING:
    from debate_core.config import RunConfig
    from debate_core.plugin import Registry
    from debate_core.rundir.directory import RunDirectory
    from debate_core.training.loop import RunOutcome

HEADLINE = (
    "format",
    "correct",
    "pass@",
    "cons@",
    "answer_correct",
    "judge_accuracy",
    "comparison_rate",
    "rounds_played",
    "debate_minus_direct",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a policy by debate self-play",
        description=(
            "Train the policy of a run file: optional supervised warm-start, then debate self-play RL, "
            "with evaluations, checkpoints and metrics in a run directory. SIGINT or SIGTERM finish the "
            "update in flight, checkpoint and exit; --resume continues from the last checkpoint, with the "
            "run directory's own resolved config (plus any overrides given) unless a run file is named."
        ),
    )
    parser.add_argument(
        "config",
        type=Path,
        nargs="?",
        help="the run file (TOML); with --resume it may be left out: the run's own config.toml is used",
    )
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="override keys of the run file")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--run-dir", type=Path, metavar="DIR", help="where the run goes (default: runs/<run.name>)")
    where.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR")
    parser.set_defaults(handler=run)


HEADLINE_METRICS = ("judge/accuracy", "judge/consistency")
"""Headline metrics named in full: the judge benchmark's strict accuracy and its consistency."""


def is_headline(name: str) -> bool:
    """True for a headline metric of an evaluation (``eval_<dataset>/debate/cons@3``), not its SE or change."""
    if "/" in name and name.split("/", 1)[1] in HEADLINE_METRICS:
        return True
    return (
        "/" in name
        and any(part in name.rsplit("/", 1)[-1] for part in HEADLINE)
        and not name.endswith(("judge_decidable_votes", "_se", "_n", "_change", "response_correct"))
    )


def format_evaluations(evaluations: Mapping[str, Mapping[str, float]]) -> list[str]:
    """One line per evaluation with its headline metrics, each as the figures may be stated
    (docs/training.md#reading-the-figures: a proportion's interval, a small sample's count)."""
    from debate_core.rundir.evaluation_figures import read_figure

    lines = []
    for label, metrics in evaluations.items():
        shown = [
            f"{name.split('/', 1)[1]} {figure.text()}"
            for name in metrics
            if is_headline(name) and (figure := read_figure(metrics, name)) is not None
        ]
        lines.append(f"  {label}: " + ("  ".join(shown) if shown else "(no graded metrics)"))
    return lines


def format_changes(evaluations: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The change of each metric that has a standard error (``<name>_se``) or a paired change from
    the first evaluation to the last, with the standard error of the change: paired by problem
    when the last evaluation recorded it (``<name>_change``, ``<name>_change_se``), else taking the
    two as independent; no SE below 20 observations, and ``better`` or ``worse`` by the metric's
    declared direction (docs/training.md#reading-the-figures)."""
    from debate_core.rundir.evaluation_figures import change_in, read_figure, recorded_paired

    labels = list(evaluations)
    if len(labels) < 2:
        return []
    first, last = evaluations[labels[0]], evaluations[labels[-1]]
    lines = []
    for name in last:
        if name.endswith(("_se", "_n", "_change")) or name not in first:
            continue
        paired = recorded_paired(last, name)
        if paired is None and not (f"{name}_se" in last and f"{name}_se" in first):
            continue
        before, after, change = read_figure(first, name), read_figure(last, name), change_in(first, last, name, paired)
        if before is None or after is None or change is None:
            continue
        verdict = f", {change.verdict}" if change.verdict else ""
        lines.append(f"  {name.split('/', 1)[1]}: {before.text()} -> {after.text()}: {change.text()}{verdict}")
    return [f"change from {labels[0]} to {labels[-1]}:", *lines] if lines else []


def cost_line(costs: JsonMapping) -> str:
    """``tokens: 1.2M prompt sampled, 80k sampled, 1.1M trained; cost $3.21 (of ~$9.80 projected)``."""
    from debate_core.stats import dollars

    tokens = costs.get("tokens") or {}
    counts = ", ".join(
        f"{_count(int(tokens.get(kind, 0)))} {label}"
        for kind, label in (("prompt_sampled", "prompt sampled"), ("sampled", "sampled"), ("trained", "trained"))
    )
    line = f"tokens: {counts}"
    if "usd" in costs:
        line += f"; cost {dollars(float(costs['usd']))}"
        if "projected" in costs and float(costs["projected"]) > float(costs["usd"]):
            line += f" (of ~{dollars(float(costs['projected']))} projected)"
    return line


def _count(n: int) -> str:
    """``950``, ``12.3k``, ``4.56M``: a token count at a glance."""
    if n >= 1_000_000:
        return f"{n / 1e6:.3g}M"
    if n >= 1000:
        return f"{n / 1e3:.3g}k"
    return str(n)


def next_commands(config: str, run_dir: str, checkpointed: bool) -> list[str]:
    """What to run next: look at the run, evaluate its last checkpoint, debate with it."""
    commands = [(f"debate report {run_dir}", "the run as one HTML page")]
    if checkpointed:
        commands += [
            (f"debate eval {config} --checkpoint {run_dir}", "evaluate the last checkpoint again"),
            (f'debate run {config} --checkpoint {run_dir} --question "..."', "debate with it"),
        ]
    width = max(len(command) for command, _ in commands)
    return ["next:", *(f"  {command.ljust(width)}  # {why}" for command, why in commands)]


def run(args: argparse.Namespace) -> int:
    from debate_core.training.progress import Progress
    from debate_core.training.run import run_training

    registry, config, config_path, resumed = _read_config(args)
    run_dir = _run_directory(args, config, resumed)
    progress = Progress(config.logging.progress, line_interval_s=config.logging.progress_interval_s)
    progress.message(f"run directory: {run_dir.root}")
    created_root = not run_dir.root.exists()
    try:
        outcome = run_interruptibly(
            run_training(config, registry, run_dir, resume=args.resume is not None, progress=progress)
        )
    except BaseException as exc:
        if resumed is None:  # a new run that failed before its first step leaves nothing to block a retry
            run_dir.discard_failed_start(created_root)
        if not isinstance(exc, DebateError):
            raise
        _raise_with_a_way_on(exc, run_dir)
    hints_config = _config_for_hints(config_path, _run_file_and_overrides(args)[1], run_dir, config, registry)
    _print_summary(outcome, hints_config, run_dir)
    if outcome.stopped_by:
        print(
            f"stopped by {outcome.stopped_by}; checkpoint at step {outcome.last_checkpoint}. "
            f"Continue with: debate train --resume {outcome.run_dir}",
            file=sys.stderr,
        )
        return 128 + int(signal.Signals[outcome.stopped_by])
    if outcome.budget_reached:
        spent = float(outcome.costs.get("usd", 0.0))
        print(
            f"stopped at the budget: {outcome.budget_reached}; checkpoint at step {outcome.last_checkpoint}. "
            f"Continue with a larger budget: debate train --resume {outcome.run_dir} "
            f"training.max_cost={_larger_budget(spent)}",
            file=sys.stderr,
        )
    return 0


def _larger_budget(spent: float) -> str:
    """A budget to resume with: twice what has been spent, in whole dollars (at least one more)."""
    return f"{max(math.ceil(2 * spent), math.floor(spent) + 1)}"


def _read_config(args: argparse.Namespace) -> tuple[Registry, RunConfig, Path | None, RunDirectory | None]:
    """The registry, the run's config (its run file or, with ``--resume`` alone, the run's own
    resolved config; overrides applied and checked), the run file read, and the run resumed."""
    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry
    from debate_core.rundir.directory import existing_run_directory
    from debate_core.rundir.resume import check_not_finished
    from debate_core.runtime.context_guard import check_run_fits_context
    from debate_core.training.policy_weights import resolve_init_from
    from debate_core.training.run_needs import check_run_needs

    registry = get_registry()
    config_path, overrides = _run_file_and_overrides(args)
    if config_path is None and args.resume is None:
        raise DebateError("give a run file (debate train CONFIG), or --resume RUN_DIR to continue a run")
    resumed = existing_run_directory(args.resume) if args.resume is not None else None
    if resumed is not None and config_path is None:
        config_path = resumed.config_path  # the run's own resolved config: its overrides included
        if not config_path.is_file():
            raise DebateError(f"--resume {args.resume}: no config.toml in the run directory; name the run file")
    config = load_run_config(config_path, overrides, registry=registry)
    check_run_fits_context(config, registry)
    if resumed is not None:
        check_not_finished(resumed, config)
    else:
        config = resolve_init_from(config)  # a wrong model.init_from fails before a run directory is chosen
        # what config check finds fails here too, before a run directory is chosen or announced:
        # every split of every dataset the run reads included
        for line in check_run_needs(config, registry):
            print(f"debate: {line}", file=sys.stderr)
    return registry, config, config_path, resumed


def _run_file_and_overrides(args: argparse.Namespace) -> tuple[Path | None, list[str]]:
    """The run file named (``None``: none) and the overrides given."""
    overrides = list(args.overrides)
    config_path: Path | None = args.config
    if config_path is not None and "=" in str(config_path) and not config_path.exists():
        overrides.insert(0, str(config_path))  # `debate train --resume DIR key=value`: no run file named
        config_path = None
    return config_path, overrides


def _run_directory(args: argparse.Namespace, config: RunConfig, resumed: RunDirectory | None) -> RunDirectory:
    """The run resumed, the new directory ``--run-dir`` names, or a fresh one under ``runs/``."""
    from debate_core.rundir.directory import default_run_directory, fresh_run_directory

    if resumed is not None:
        return resumed
    if args.run_dir is not None:
        return fresh_run_directory(args.run_dir)
    return default_run_directory(config.run.name)


def _config_for_hints(
    config_path: Path | None, overrides: list[str], run_dir: RunDirectory, config: RunConfig, registry: Registry
) -> Path | None:
    """The run file the next commands name: the one read when no override changed it, else the
    run's own resolved config, which holds the overrides (``config.toml``, or the config a resume
    with different keys wrote beside it)."""
    if not overrides and config_path is not None:
        return config_path
    from debate_core.config import resolved_config_dict
    from debate_core.training.run import resume_differences

    beside = sorted(run_dir.root.glob("config.resumed_step_*.toml"))
    if beside and resume_differences(run_dir, resolved_config_dict(config, registry)):
        return beside[-1]
    return run_dir.config_path


def _print_summary(outcome: RunOutcome, config_path: Path | None, run_dir: RunDirectory) -> None:
    """Where the run is, how far it came, its evaluations and their changes, and what to run next."""
    print(f"run directory: {outcome.run_dir}")
    print(f"steps done: {outcome.step} (warm-start {outcome.warmstart_steps}, RL iterations {outcome.iterations})")
    print(cost_line(outcome.costs))
    if outcome.evaluations:
        print("evaluations:")
        print("\n".join(format_evaluations(outcome.evaluations)))
        changes = format_changes(outcome.evaluations)
        if changes:
            print("\n".join(changes))
    print("\n".join(next_commands(str(config_path), str(outcome.run_dir), outcome.last_checkpoint is not None)))
    print(f"reproduce: debate train {run_dir.config_path} --run-dir NEW_DIR  # the resolved config, overrides included")


def _raise_with_a_way_on(exc: DebateError, run_dir: RunDirectory) -> NoReturn:
    """Re-raise ``exc``; a file that could not be written (a full disk) says how to go on once it
    can, and a backend that failed for good how to go on from the last checkpoint once it works."""
    from debate_core.runtime.retries import BackendError

    if not run_dir.holds_run():
        raise exc
    if _caused_by_an_unwritable_file(exc):
        hint = f"; once it can be written, continue with: debate train --resume {run_dir.root}"
        raise OutputWriteError(f"{exc}{hint}") from exc
    if isinstance(exc, BackendError) and run_dir.recorded_a_step():
        hint = f"; once the backend works, continue from the last checkpoint with: debate train --resume {run_dir.root}"
        raise type(exc)(f"{exc}{hint}") from exc
    raise exc


def _caused_by_an_unwritable_file(error: BaseException | None) -> bool:
    """True when ``error`` is, or was raised from, a file the run could not write."""
    while error is not None:
        if isinstance(error, OutputWriteError):
            return True
        error = error.__cause__
    return False
