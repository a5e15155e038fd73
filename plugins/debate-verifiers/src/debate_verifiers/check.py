"""``debate-verifiers-check RUN_DIR ...``: whether ``vf-eval`` runs' episodes succeeded, as an exit
status (``vf-eval`` exits 0 even when every episode failed): 1 when every episode of a run failed
(or, with ``--strict``, when any did), with one line per run naming its first error."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs


@attrs.frozen
class RunOutcome:
    """A run's episodes: how many, how many failed, and the first failure's message."""

    episodes: int
    failed: int
    first_error: str | None = None


def read_outcome(run_dir: Path) -> RunOutcome:
    """The outcome of the run whose ``traces.jsonl`` is in ``run_dir`` (or is ``run_dir``).

    Raises:
        FileNotFoundError: there is no ``traces.jsonl``.
    """
    path = run_dir if run_dir.is_file() else run_dir / "traces.jsonl"
    episodes = failed = 0
    first: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        episode = json.loads(line)
        episodes += 1
        errors = [*episode.get("errors", []), *(e for t in episode.get("traces", []) for e in t.get("errors", []))]
        if not episode.get("ok") or errors:
            failed += 1
            if first is None and errors:
                first = f"{errors[0].get('type')}: {errors[0].get('message')}"
    return RunOutcome(episodes, failed, first)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="debate-verifiers-check", description=__doc__)
    parser.add_argument("run_dirs", nargs="+", type=Path, help="vf-eval run directories (or their traces.jsonl)")
    parser.add_argument("--strict", action="store_true", help="fail when any episode failed")
    args = parser.parse_args(argv)
    status = 0
    for run_dir in args.run_dirs:
        try:
            outcome = read_outcome(run_dir)
        except (OSError, ValueError) as exc:
            print(f"debate-verifiers-check: {run_dir}: {exc}", file=sys.stderr)
            status = 1
            continue
        bad = outcome.failed > 0 if args.strict else outcome.failed == outcome.episodes
        line = f"{outcome.episodes - outcome.failed} of {outcome.episodes} episodes succeeded"
        if outcome.first_error:
            line += f"; first error: {outcome.first_error}"
        print(f"debate-verifiers-check: {run_dir}: {line}", file=sys.stderr if bad else sys.stdout)
        status = max(status, int(bad))
    return status
