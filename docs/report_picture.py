"""Regenerate the README's picture of the report, docs/images/report.png, from a run directory:

    python docs/report_picture.py runs/main

It writes the report's first screen (1400 by 900 pixels, what a reader sees on opening the page,
taken in headless Chromium: Debian's ``chromium`` package, or the binary ``DEBATE_CHROMIUM``
names) to docs/images/report.png, records what the picture shows in docs/images/report.json (the
run's RL iterations, its evaluations' problems, the day and the commit it was made at) and writes
the README's caption from that record. ``tests/meta/test_report_picture.py`` fails when the
caption and the record disagree, so a new picture cannot keep an old caption, nor the caption
claim another run than the one pictured.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "images" / "report.png"
RECORD = ROOT / "docs" / "images" / "report.json"
README = ROOT / "README.md"
WIDTH, HEIGHT = 1400, 900
IMAGE_LINE = re.compile(r"^!\[[^\]]*\]\(docs/images/report\.png\)$", re.M)


def caption(record: dict[str, object]) -> str:
    """The README's image line for a picture with ``record``."""
    return (
        f"![The report's first screen: a run of {record['iterations']} RL iterations evaluated on "
        f"{record['problems']} held-out problems, pictured on {record['date']} at commit {record['commit']}]"
        "(docs/images/report.png)"
    )


def record_of(run_dir: Path) -> dict[str, object]:
    """What the picture of ``run_dir``'s report shows, and when and from which commit it was made."""
    from debate_core.report.run_data import read_run
    from debate_core.rundir.evaluation_headline import headline_table

    run = read_run(run_dir, max_debates=0)
    if not run.evaluations:
        sys.exit(f"{run_dir}: no evaluation yet: the picture would show no headline table")
    last = run.evaluations[-1]
    table = headline_table({str(e["label"]): e["metrics"] for e in run.evaluations})
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    return {
        "run": run_dir.name,
        "iterations": int(last.get("iteration", 0)),
        "problems": table.problems,
        "date": datetime.date.today().isoformat(),
        "commit": commit,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.exit("usage: python docs/report_picture.py RUN_DIR")
    from debate_core.files import atomic_file
    from debate_core.report import write_report
    from debate_core.report.browser import visit

    run_dir = Path(argv[0])
    record = record_of(run_dir)
    page, _ = write_report(run_dir)
    visited = visit(page, width=WIDTH, height=HEIGHT, full_page=False)
    if visited.console_errors:
        sys.exit("the report logged errors: " + "; ".join(visited.console_errors))
    with atomic_file(PICTURE, "wb") as handle:
        handle.write(visited.screenshot)
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    if len(IMAGE_LINE.findall(text)) != 1:
        sys.exit("README.md: expected one line showing docs/images/report.png")
    README.write_text(IMAGE_LINE.sub(caption(record), text), encoding="utf-8")
    print(f"{PICTURE.relative_to(ROOT)}, {RECORD.relative_to(ROOT)} and README.md's caption: {caption(record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
