"""``debate report``: one self-contained HTML page of a run directory.

The page holds the resolved config, the evaluation table with standard errors and changes, the
curves over steps (inline SVG), and sampled debates with their sections, per-step rewards and
advantages and vote matrices. It has no script and loads nothing: it opens offline, can be
mailed, and works on a run that is still going or stopped early (damaged metrics lines are
listed and skipped).
"""

from __future__ import annotations

from pathlib import Path

from debate_core.files import atomic_write_text
from debate_core.report.page import report_html
from debate_core.report.run_data import ReportError, RunData, read_run

__all__ = ["ReportError", "RunData", "read_run", "report_html", "write_report"]

DEFAULT_NAME = "report.html"


def write_report(run_dir: Path, out: Path | None = None, max_debates: int = 8) -> tuple[Path, RunData]:
    """Read ``run_dir``, write its report (default ``RUN_DIR/report.html``) and return the path
    with what was read (its ``notes`` list what was skipped)."""
    run = read_run(run_dir, max_debates)
    target = out or run_dir / DEFAULT_NAME
    atomic_write_text(target, report_html(run))
    return target, run
