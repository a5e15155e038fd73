"""What an evaluation costs for the precision it gives: seconds per mode, and seconds for a paired
standard error of one point on ``debate_minus_direct`` (the main job's headline comparison),
for evaluation designs measured side by side in one run (docs/training.md#evaluation).

    python benchmarks/eval_cost.py                         # the main job's start, 100 problems
    python benchmarks/eval_cost.py --problems 200 --run-file examples/arithmetic.toml

Each design is ``debate eval RUN_FILE --json`` with overrides (the run file's own evaluation
first). For each it prints the wall time of each mode (``time/eval_direct``, ``time/eval_debate``,
``time/eval_judge``), the paired SE of ``debate_minus_direct``, and the **cost of a point**:
``seconds x (SE / 1 point)²`` (``debate eval --json`` gives each mode's seconds), the seconds an
evaluation of this design would need for a paired SE of one point (the SE falls as the square
root of the problems; the time grows with them).
Lower is cheaper. The judge benchmark is timed but adds nothing to that SE: its own figure is
its seconds per judgement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DESIGNS: dict[str, list[str]] = {
    "the run file's": [],
    "3 direct samples": ["evaluation.num_samples=3"],
    "no judge benchmark": ["evaluation.modes=['direct', 'debate']"],
}


def evaluate(run_file: Path, problems: int, overrides: list[str]) -> dict[str, float]:
    command = [
        sys.executable,
        "-m",
        "debate_core.cli",
        "eval",
        str(run_file),
        f"evaluation.num_problems={problems}",
        "logging.progress=off",
        *overrides,
        "--json",
    ]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    report = json.loads(done.stdout)
    metrics: dict[str, float] = report["metrics"]
    metrics.update({f"time/eval_{mode}": seconds for mode, seconds in report["seconds"].items()})
    return metrics


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-file", type=Path, default=ROOT / "examples" / "arithmetic.toml")
    parser.add_argument("--problems", type=int, default=100)
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {args.run_file.name}, {args.problems} problems")
    header = f"{'design':<20}{'direct s':>9}{'debate s':>9}{'judge s':>9}{'SE (pt)':>9}{'s per 1-pt SE':>15}"
    print(header)
    for name, overrides in DESIGNS.items():
        metrics = evaluate(args.run_file, args.problems, overrides)
        se_key = next(k for k in metrics if k.endswith("/debate_minus_direct_se"))
        se = 100 * metrics[se_key]
        times = [metrics.get(f"time/eval_{mode}", 0.0) for mode in ("direct", "debate", "judge")]
        point = (times[0] + times[1]) * se**2
        print(f"{name:<20}{times[0]:>9.1f}{times[1]:>9.1f}{times[2]:>9.1f}{se:>9.2f}{point:>15.0f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
