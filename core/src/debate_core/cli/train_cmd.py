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


SHORT_RUN_ITERATIONS = 10
"""Fewer RL iterations than this are too few to learn anything measurable (a smoke run's 3 are)."""

ALMOST_NO_SIGNAL = 0.9
"""A run's reward carries almost no signal when more than this share of its debates had none. Half
is not too many: the main job, whose debates agree more often than not (55% without a signal on
2026-12-07), gains 10 points of direct accuracy from the rest."""


def evaluation_summary(evaluations: Mapping[str, Mapping[str, float]], run_dir: str) -> list[str]:
    """The headline table of the run's evaluations (direct, the debate's answer, cons@k, judge
    accuracy; first and last, with the change), and where every other metric is."""
    from debate_core.rundir.evaluation_headline import headline_table

    table = headline_table(evaluations)
    size = f" of {table.problems} problem{'' if table.problems == 1 else 's'}" if table.problems is not None else ""
    return [
        f"evaluations{size}:",
        *table.text_lines(),
        f"  every metric: {run_dir}/eval/ and `debate report {run_dir}`",
    ]


def learning_note(run_dir: RunDirectory, outcome: RunOutcome) -> str | None:
    """One line when the run's reward carried almost no learning signal (nearly all of its debates had
    all their advantages zero, ``monitor/no_signal``) or its RL was too short to learn anything, with
    the reason; ``None`` otherwise."""
    if outcome.iterations < 1:
        return None
    shares = [
        float(record["monitor/no_signal"])
        for record in run_dir.metric_records(outcome.step)
        if record.get("phase") == "rl" and isinstance(record.get("monitor/no_signal"), int | float)
    ]
    no_signal = sum(shares) / len(shares) if shares else None
    said = f"{no_signal:.0%} of debates had no reward signal" if no_signal is not None else ""
    if outcome.iterations < SHORT_RUN_ITERATIONS:
        reason = f"{outcome.iterations} RL iterations are too few to learn anything (by design in a smoke run)"
        return f"learning: {reason}" + (f"; {said}" if said else "")
    if no_signal is not None and no_signal > ALMOST_NO_SIGNAL:
        return (
            f"learning: almost no reward signal: {said}, every agent's reward alike (docs/training.md#collapse-alarms)"
        )
    return None


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
        print("\n".join(evaluation_summary(outcome.evaluations, str(outcome.run_dir))))
    note = learning_note(run_dir, outcome)
    if note:
        print(note)
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
