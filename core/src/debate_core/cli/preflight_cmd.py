"""``debate preflight CONFIG [section.key=value ...] [--num-problems N] [--json]``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from debate_core.runtime.interrupts import run_interruptibly


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "preflight",
        help="run the pre-training checklist on the base model",
        description=(
            "Evaluate the base model on held-out problems and check what self-play needs: direct accuracy "
            ">= 5%%, valid comparisons > 80%%, pass@N > 20%%, judge accuracy > 50%%. Each failing check says "
            "what to change. Exit status 1 when a check fails."
        ),
    )
    parser.add_argument("config", type=Path, help="the run file (TOML)")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="override keys of the run file")
    parser.add_argument("--num-problems", metavar="N", help="problems to evaluate (default: evaluation.num_problems)")
    parser.add_argument("--json", action="store_true", help="print the checks and metrics as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import attrs

    from debate_core.config import load_run_config, option_value
    from debate_core.errors import ConfigError
    from debate_core.plugin import get_registry
    from debate_core.runtime.context_guard import check_run_fits_context
    from debate_core.training.evaluation.evaluator import evaluate_policy
    from debate_core.training.preflight import format_checklist, run_checklist
    from debate_core.training.progress import Progress

    config = load_run_config(args.config, args.overrides, registry=get_registry())
    check_run_fits_context(config, get_registry())
    settings = attrs.evolve(config.evaluation, modes=("direct", "debate"), role_averaged=False)
    if args.num_problems is not None:
        args.num_problems = option_value("--num-problems", args.num_problems, "evaluation.num_problems")
        if args.num_problems < 1:
            raise ConfigError(f"--num-problems: must be at least 1, got {args.num_problems}")
        settings = attrs.evolve(settings, num_problems=args.num_problems)
    if settings.num_problems < 1:
        raise ConfigError("evaluation.num_problems: preflight needs at least 1 problem (or pass --num-problems)")
    progress = Progress(config.logging.progress, line_interval_s=config.logging.progress_interval_s)
    metrics = run_interruptibly(evaluate_policy(config, get_registry(), settings=settings, progress=progress)).metrics
    results = run_checklist(metrics, config.dataset.name, config.debate.num_agents)
    if args.json:
        print(json.dumps({"checks": [attrs.asdict(r) for r in results], "metrics": metrics}, indent=2))
    else:
        print(f"preflight of {config.model.base_model} on {config.dataset.name} ({settings.num_problems} problems)")
        print(format_checklist(results))
    return 1 if any(r.status == "fail" for r in results) else 0
