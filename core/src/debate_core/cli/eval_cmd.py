"""``debate eval CONFIG [section.key=value ...] [--checkpoint PATH] [--mode MODE ...] [--json]
[--out FILE [--label NAME]]``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path

from debate_core.config.sections import EVALUATION_MODES
from debate_core.rundir.evaluation_records import EVALUATION_FILE_LABEL
from debate_core.runtime.interrupts import run_interruptibly


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate a checkpoint (or the base model) on held-out problems",
        description=(
            "Evaluate a policy as the run file's [evaluation] section says: direct answers, self-play "
            "debates and, with evaluation.role_averaged = true, debates against a fixed opponent "
            "(evaluation.opponent: the base model or a checkpoint) in every role. "
            "Reports format, correct, pass@k, avg@k, cons@k and judge accuracy; --mode judge runs the judge "
            "benchmark (docs/training.md#the-judge-benchmark)."
        ),
    )
    parser.add_argument("config", type=Path, help="the run file (TOML)")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="override keys of the run file")
    parser.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="a checkpoint manifest (checkpoints/step_*.json), a run directory (its latest checkpoint), "
        "or a backend path such as tinker://...; its weights saved for sampling are opened (no training "
        "model is started); without it the base model is evaluated",
    )
    parser.add_argument(
        "--mode",
        action="append",
        choices=EVALUATION_MODES,
        help="an evaluation mode to run instead of evaluation.modes (repeat for several): direct, debate, "
        "runoff (docs/answer-rules.md#the-runoff) or judge (the judge benchmark)",
    )
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    parser.add_argument(
        "--all", action="store_true", help="print every metric before the headline table (default: the table only)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="also write the evaluation to FILE as JSON: its metrics, each problem's values and the resolved "
        "run file, so that `debate compare` can set it beside runs, paired per problem where they evaluate "
        "the same problems",
    )
    parser.add_argument(
        "--label",
        default=EVALUATION_FILE_LABEL,
        metavar="NAME",
        help=f"the evaluation's label in the --out file, as `debate compare --column` names it "
        f"(default: {EVALUATION_FILE_LABEL})",
    )
    parser.set_defaults(handler=run)


def format_metrics(metrics: Mapping[str, float]) -> list[str]:
    """One line per metric as it may be stated (docs/training.md#reading-the-figures): a proportion
    with its Wilson interval, a figure over fewer than 20 observations with its count and no SE;
    a metric's SE and count (``_se``, ``_n``) go on its own line."""
    from debate_core.rundir.evaluation_figures import read_figure

    companions = {f"{name}{suffix}" for name in metrics for suffix in ("_se", "_n")}
    shown = [name for name in metrics if name not in companions]
    width = max((len(k) for k in shown), default=0)
    lines = []
    for name in shown:
        figure = read_figure(metrics, name)
        lines.append(f"  {name:<{width}}  {figure.text() if figure is not None else metrics[name]}")
    return lines


def run(args: argparse.Namespace) -> int:
    from debate_core.config import load_run_config, resolved_config_toml
    from debate_core.files import atomic_write_text
    from debate_core.plugin import get_registry
    from debate_core.runtime.context_guard import check_run_fits_context
    from debate_core.training.evaluation.evaluator import evaluate_policy
    from debate_core.training.policy_weights import resolve_policy_weights
    from debate_core.training.progress import Progress

    overrides = list(args.overrides)
    if args.mode:
        overrides.append("evaluation.modes=" + json.dumps(list(dict.fromkeys(args.mode))))
    config = load_run_config(args.config, overrides, registry=get_registry())
    check_run_fits_context(config, get_registry())
    weights = resolve_policy_weights(args.checkpoint, "--checkpoint") if args.checkpoint else None
    progress = Progress(config.logging.progress, line_interval_s=config.logging.progress_interval_s)
    if weights is not None:
        progress.message(f"debate: {weights.describe(args.checkpoint)}")  # which weights, before the wait
    evaluation = run_interruptibly(evaluate_policy(config, get_registry(), weights=weights, progress=progress))
    metrics = evaluation.metrics
    report = {
        "checkpoint": weights.path if weights else None,
        "step": weights.step if weights else None,
        "metrics": metrics,
        "seconds": evaluation.seconds,
    }
    if args.out is not None:
        record = {
            **report,
            "label": args.label,
            "per_problem": evaluation.per_problem,
            "config": resolved_config_toml(config, get_registry()),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out, json.dumps(record, indent=2) + "\n")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"policy: {weights.describe(args.checkpoint) if weights else 'base model ' + config.model.base_model}")
        if args.all:
            print("\n".join(format_metrics(metrics)))
        print("\n".join(headline_lines(metrics)))
        if any(name.endswith("/debate/answer_correct") for name in metrics):
            print(f"the debate's answer: by {config.debate.final_answer.name} (debate.final_answer)")
        if not args.all:
            print(f"every metric ({len(metrics)}): --all prints them, --json or --out FILE keeps them")
    return 0


def headline_lines(metrics: Mapping[str, float]) -> list[str]:
    """The evaluation's headline table (direct, the debate's answer, cons@k, judge accuracy; each
    as it may be stated), under the number of problems: the figures to read first."""
    from debate_core.rundir.evaluation_headline import headline_table

    table = headline_table({"eval": metrics})
    head = f"headline ({table.problems} problems):" if table.problems is not None else "headline:"
    return [head, *table.text_lines()]
