"""``debate report RUN_DIR``: one self-contained HTML page of a run (finished, stopped or still going)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write an HTML report of a run directory (config, evaluations, curves, debates)",
        description=(
            "Write one self-contained HTML file (inline SVG plots, no script, nothing loaded from the network) "
            "with the run's resolved config, the evaluation table with standard errors, curves over steps and "
            "sampled debates with their rewards, advantages and votes; print its path. Works while the run goes on."
        ),
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory (runs/<name>)")
    parser.add_argument("--out", type=Path, metavar="FILE", help="where to write it (default: RUN_DIR/report.html)")
    parser.add_argument(
        "--debates", type=int, default=8, metavar="N", help="logged debates to show, spread over the run (default 8)"
    )
    parser.add_argument(
        "--screenshot",
        type=Path,
        metavar="PNG",
        help="also save a screenshot of the page taken in headless Chromium (needs Debian's chromium package)",
    )
    parser.add_argument("--width", type=int, default=1400, help="screenshot width in pixels (default 1400)")
    parser.add_argument("--height", type=int, default=0, help="screenshot height in pixels (default 0: the whole page)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from debate_core.errors import DebateError
    from debate_core.report import write_report

    if args.debates < 0:
        raise DebateError(f"--debates must be at least 0, got {args.debates}")
    path, data = write_report(args.run_dir, args.out, args.debates)
    for note in data.notes:
        print(f"debate: warning: {note}", file=sys.stderr)
    print(path)
    if args.screenshot is not None:
        from debate_core.files import atomic_file
        from debate_core.report.browser import visit

        page = visit(path, width=args.width, height=args.height or 900, full_page=args.height == 0)
        for error in page.console_errors:
            print(f"debate: warning: the page logged: {error}", file=sys.stderr)
        with atomic_file(args.screenshot, "wb") as handle:
            handle.write(page.screenshot)
        print(args.screenshot)
    return 0
