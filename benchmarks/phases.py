"""The main job's wall time split by phase: warm-start, rollouts, training, evaluation.

    python benchmarks/phases.py examples/arithmetic.toml                 # train it, then split its time
    python benchmarks/phases.py examples/arithmetic.toml training.num_iterations=10
    python benchmarks/phases.py --run-dir runs/arithmetic                # split a finished run's time

It runs ``debate train RUN_FILE [overrides]`` in a fresh run directory (a temporary one unless
``--keep DIR``), times the whole command, and adds up the phase times the trainer writes to
``metrics.jsonl``:

* warm-start: ``time/total`` of the warm-start records (its debates against the gold answers and
  its cross-entropy updates);
* rollouts: ``time/sampling_wait`` + ``time/rewards`` of the RL records (debates, parsing, rewards,
  Datums): what the trainer waited for its debates, which is all of their sampling unless they
  were sampled ahead while it updated (docs/training.md#asynchronous-rollouts; records written
  before ``time/sampling_wait`` existed count ``time/sampling``);
* training: ``time/training`` of the RL records (``forward_backward`` and ``optim_step``);
* evaluation: ``time/eval`` of every record that carries one (at the start, after the warm-start,
  every ``eval_every`` iterations, at the end);
* other: the rest of the wall time (starting Python, loading the model, checkpoints).

With ``--run-dir`` the wall time is taken from the run directory's files (``config.toml`` to the
last write of ``metrics.jsonl``): it leaves out starting Python and counts any pause between a
stop and a ``--resume``.

Each phase is printed with its share of the wall time, with the load average before and after
(figures from a busy machine are not the job's own), then the wall time against its target
(``--target-minutes``, by default the main job's 10 minutes on 2 cores) with PASS or MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = ("warm-start", "rollouts", "training", "evaluation")


def phase_seconds(records: list[dict[str, object]]) -> dict[str, float]:
    """Seconds per phase from a run's metric records."""

    def value(record: dict[str, object], key: str) -> float:
        found = record.get(key, 0.0)
        return float(found) if isinstance(found, int | float) else 0.0

    totals = dict.fromkeys(PHASES, 0.0)
    for record in records:
        totals["evaluation"] += value(record, "time/eval")
        if record.get("phase") == "warmstart":
            totals["warm-start"] += value(record, "time/total")
        elif record.get("phase") == "rl":
            waited = "time/sampling_wait" if "time/sampling_wait" in record else "time/sampling"
            totals["rollouts"] += value(record, waited) + value(record, "time/rewards")
            totals["training"] += value(record, "time/training")
    return totals


def read_records(run_dir: Path) -> list[dict[str, object]]:
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        raise SystemExit(f"phases: {path} does not exist (is {run_dir} a run directory?)")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            print(f"phases: {path}:{number} is not JSON; skipped", file=sys.stderr)
    return records


def _file_span(run_dir: Path) -> float | None:
    """The time from the run directory's config.toml being written to the last metrics record
    (misses the model loading before it and counts any pause between a stop and a resume)."""
    try:
        return (run_dir / "metrics.jsonl").stat().st_mtime - (run_dir / "config.toml").stat().st_mtime
    except OSError:
        return None


def report(
    records: list[dict[str, object]], wall: float | None, *, approximate: bool = False, target_minutes: float = 0.0
) -> None:
    totals = phase_seconds(records)
    counted = sum(totals.values())
    whole = wall if wall is not None else counted
    warmstart = sum(1 for r in records if r.get("phase") == "warmstart")
    iterations = sum(1 for r in records if r.get("phase") == "rl")
    evaluations = sum(1 for r in records if "time/eval" in r)
    print(f"\n{warmstart} warm-start steps, {iterations} RL iterations, {evaluations} evaluations")
    print(f"{'phase':<12}{'seconds':>10}{'share':>9}")
    rows = [*totals.items()]
    if wall is not None:
        rows.append(("other", max(wall - counted, 0.0)))
    for name, seconds in rows:
        print(f"{name:<12}{seconds:>10.1f}{seconds / whole:>9.1%}" if whole else f"{name:<12}{seconds:>10.1f}")
    if wall is None:
        label = "sum of phases"
    else:
        label = "wall time (config.toml to the last record)" if approximate else "wall time"
    print(f"{label:<12}{whole:>10.1f}  ({whole / 60:.1f} min)")
    if target_minutes > 0 and wall is not None:
        verdict = "PASS" if wall <= target_minutes * 60 else "MISS"
        print(f"wall time {wall / 60:.1f} min against the target of at most {target_minutes:g} min: {verdict}")


def _load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"
    except OSError:
        return "unknown"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", nargs="?", help="the run file to train")
    parser.add_argument("overrides", nargs="*", help="section.key=value overrides of the run file")
    parser.add_argument("--run-dir", type=Path, help="split the time of this finished run instead of training")
    parser.add_argument("--keep", type=Path, help="train into this run directory (kept) instead of a temporary one")
    parser.add_argument(
        "--target-minutes",
        type=float,
        default=10.0,
        help="the wall-time target, PASS or MISS (default 10: the main job on 2 cores; 0: none)",
    )
    args = parser.parse_args(argv)
    if args.run_dir is not None:
        if args.config:
            parser.error("give a run file or --run-dir, not both")
        report(
            read_records(args.run_dir), _file_span(args.run_dir), approximate=True, target_minutes=args.target_minutes
        )
        return 0
    if not args.config:
        parser.error("a run file (or --run-dir) is needed")
    with tempfile.TemporaryDirectory(prefix="debate-phases-") as scratch:
        run_dir = args.keep or Path(scratch) / "run"
        command = [
            sys.executable,
            "-m",
            "debate_core.cli",
            "train",
            args.config,
            *args.overrides,
            "--run-dir",
            str(run_dir),
        ]
        print(f"$ {shlex.join(command)}\nload average before: {_load()}", flush=True)
        started = time.perf_counter()
        code = subprocess.call(command)
        wall = time.perf_counter() - started
        print(f"load average after: {_load()}")
        if code != 0:
            print(f"phases: debate train exited with {code}", file=sys.stderr)
            return code
        report(read_records(run_dir), wall, target_minutes=args.target_minutes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
