"""Warm-start steps per second of this checkout against another (a baseline commit), side by side.

    git worktree add /tmp/base 291983e
    python benchmarks/warmstart_speed.py --baseline /tmp/base               # 12 steps, 3 rounds
    python benchmarks/warmstart_speed.py --baseline /tmp/base --steps 20 --rounds 5 --threads 1

Each round runs the addition job's warm-start (``examples/addition.toml`` with ``warmstart.steps``
steps, no RL, no evaluation) once from each checkout, baseline first, alternating, each in its
own process with ``PYTHONPATH`` at that checkout's ``core/src`` and this repository's run file,
and reads the step times the trainer writes to ``metrics.jsonl`` (``time/total``: the step's
reference debates and its update; the first step, which warms up, is left out). It prints, per
round, the steps per second of each and their ratio, then the median ratio against the target
(x2, the issue's), the CPU seconds of each whole process (start-up and model loading included;
a loaded machine disturbs them less than wall time), and whether the two checkouts' warm-start
losses agree at every step (the same-seed check of the warm-start: equal, or the largest
relative difference). The load average is printed at the start and the end: on a shared
machine, read the ratios, measured back to back, not the rates.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2.0


def run_warmstart(checkout: Path, steps: int, threads: int, scratch: Path) -> tuple[list[dict[str, float]], float]:
    """The warm-start records of one run from ``checkout``, and the process's CPU seconds."""
    run_dir = scratch / "run"
    command = [
        sys.executable,
        "-m",
        "debate_core.cli",
        "train",
        str(ROOT / "examples" / "addition.toml"),
        f"warmstart.steps={steps}",
        "training.num_iterations=0",
        "evaluation.num_problems=0",
        "training.save_every=0",
        "logging.progress=off",
        f"backend.options.num_threads={threads}",
        "--run-dir",
        str(run_dir),
    ]
    environment = {**os.environ, "PYTHONPATH": str(checkout / "core" / "src")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=scratch, env=environment, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: debate train failed ({done.returncode}):\n{done.stderr[-2000:]}")
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    records = [r for r in map(json.loads, lines) if r.get("phase") == "warmstart"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return records, cpu


def steps_per_second(records: list[dict[str, float]]) -> float:
    timed = [float(r["time/total"]) for r in records[1:]]
    return len(timed) / sum(timed)


def loss_difference(a: list[dict[str, float]], b: list[dict[str, float]]) -> float:
    """The largest relative difference of the per-token losses, step by step (0: equal)."""
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        p, q = float(x["warmstart/loss_per_token"]), float(y["warmstart/loss_per_token"])
        if p != q:
            worst = max(worst, abs(p - q) / max(abs(q), 1e-30))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout (git worktree) of the baseline")
    parser.add_argument("--steps", type=int, default=12, help="warm-start steps a run (the first warms up)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="backend.options.num_threads (0: every core)")
    args = parser.parse_args()
    checkouts = {"baseline": args.baseline.resolve(), "this": ROOT}
    print(f"warm-start speed: {args.steps} steps a run, {args.rounds} rounds, threads {args.threads or 'all'}")
    print(f"  baseline {checkouts['baseline']}, this {ROOT}; load average at the start {os.getloadavg()[0]:.2f}")
    ratios, cpu_ratios, worst = [], [], 0.0
    for round_index in range(args.rounds):
        results = {}
        for name, checkout in checkouts.items():
            with tempfile.TemporaryDirectory() as scratch:
                results[name] = run_warmstart(checkout, args.steps, args.threads, Path(scratch))
        rate = {name: steps_per_second(records) for name, (records, _) in results.items()}
        cpu = {name: seconds for name, (_, seconds) in results.items()}
        ratios.append(rate["this"] / rate["baseline"])
        cpu_ratios.append(cpu["baseline"] / cpu["this"])
        worst = max(worst, loss_difference(results["this"][0], results["baseline"][0]))
        print(
            f"  round {round_index + 1}: steps/s baseline {rate['baseline']:.3f}, this {rate['this']:.3f}: "
            f"{ratios[-1]:.2f}x; process CPU s baseline {cpu['baseline']:.1f}, this {cpu['this']:.1f}: "
            f"{cpu_ratios[-1]:.2f}x; load {os.getloadavg()[0]:.2f}"
        )
    ratio = statistics.median(ratios)
    verdict = "PASS" if ratio >= TARGET else "MISS"
    print(
        f"warm-start steps per second, this / baseline: {ratio:.2f}x (median of {len(ratios)}), "
        f"target >= x{TARGET:g} {verdict}"
    )
    print(f"process CPU seconds, baseline / this: {statistics.median(cpu_ratios):.2f}x (start-up and loading included)")
    same = "equal at every step" if worst == 0.0 else f"largest relative difference {worst:.2e}"
    print(f"warm-start losses, this against baseline: {same}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
