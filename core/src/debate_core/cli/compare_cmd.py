"""``debate compare RUN_DIR... [--out FILE] [--markdown [--percent]] [--column TITLE=RUN:WHICH ...] [--rows NAMES]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from debate_core.terminal import visible

if TYPE_CHECKING:
    from debate_core.report.compare import ComparedRun

DEFAULT_NAME = "compare.html"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare runs side by side: config differences, evaluations with changes, curves overlaid",
        description=(
            "Write one self-contained HTML page (no script, nothing loaded from the network) comparing run "
            "directories: the resolved-config keys that differ, the evaluations side by side with each change "
            "since the first column (paired per problem where the runs evaluate the same problems), and the "
            "curves overlaid, one colour per run; print its path. An evaluation file of `debate eval --out` "
            "counts as a run with one evaluation. --markdown prints the table instead. "
            "Columns default to the first run's first evaluation, then each run's last."
        ),
    )
    parser.add_argument(
        "run_dirs",
        type=Path,
        nargs="+",
        metavar="RUN_DIR",
        help="run directories (runs/<name>), or evaluation files written by `debate eval --out`",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help=f"where to write the page (default: {DEFAULT_NAME} beside the first run directory)",
    )
    parser.add_argument("--markdown", action="store_true", help="print the evaluation table as Markdown, no page")
    parser.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="TITLE=RUN:WHICH",
        help=(
            "a column: TITLE over run RUN's (1 for the first named) evaluation WHICH (first, last, or a label "
            "such as warmstart or final); repeat for more, in order; changes are against the first column"
        ),
    )
    parser.add_argument(
        "--rows",
        metavar="NAMES",
        help="comma-separated metrics to show, in order, without eval_<dataset>/ (a trailing @k: any k), "
        "e.g. direct/correct,debate/cons@k (default: the headline metrics, then every other)",
    )
    parser.add_argument(
        "--percent",
        action="store_true",
        help="with --markdown: rates in percent and their changes in percentage points",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from debate_core.errors import DebateError
    from debate_core.files import atomic_write_text
    from debate_core.report.compare import compare_runs
    from debate_core.report.compare_page import compare_html, compare_markdown

    runs, columns = compare_runs(args.run_dirs, args.column)
    rows = [name.strip() for name in (args.rows or "").split(",") if name.strip()]
    if args.markdown:
        _warn(runs)
        if not columns:
            raise DebateError("no run named holds an evaluation yet (eval/step_*.json): no table to print")
        print(visible(compare_markdown(runs, columns, rows, args.percent)), end="")
        return 0
    target = args.out or default_page(args.run_dirs[0])
    atomic_write_text(target, compare_html(runs, columns, rows))
    print(target, flush=True)  # the first line: where the page is
    _warn(runs)
    return 0


def default_page(first_run: Path) -> Path:
    """``compare.html`` beside the first run directory (``runs/compare.html`` for ``runs/a``), not in
    whatever folder the command runs from."""
    if first_run.name in ("", ".", ".."):
        first_run = first_run.resolve()
    return first_run.parent / DEFAULT_NAME


def _warn(runs: list[ComparedRun]) -> None:
    """What reading each run noted (a damaged line, a missing file), one warning line each."""
    for compared in runs:
        for note in compared.data.notes:
            print(visible(f"debate: warning: {compared.name}: {note}"), file=sys.stderr)
