"""Start-to-exit time of `debate` commands with the interpreter's teardown and without it.

`python -m debate_core.cli` ends the process once output is flushed and exit handlers have run
(`debate_core/cli/process_exit.py`); the baseline is the same `main` ended by `sys.exit`, as the
script did before, so the interpreter frees every object (with torch loaded, seconds). Each
command runs in both forms alternately, `--repeats` times each, in the same run; the table gives
the median wall time of each, the seconds saved and the ratio, and the load average before and
after (run it on a quiet machine, or read the load beside the figures):

    python benchmarks/command_exit.py                 # every command, 3 repeats
    python benchmarks/command_exit.py --repeats 5 --skip-run
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEARDOWN = "import sys; from debate_core.cli import main; sys.exit(main())"
RESPONSE = "<solution>57+8: 7+8=15, 5+0+1=6. The answer is \\boxed{65}.</solution>\n<evaluation>none</evaluation>\n"


def commands(response: Path, with_run: bool) -> dict[str, list[str]]:
    cases = {
        "debate --help": ["--help"],
        "debate parse FILE": ["parse", str(response)],
        "debate config check examples/arithmetic.toml": ["config", "check", "examples/arithmetic.toml"],
    }
    if with_run:
        cases["debate run (one question, embedded:debate-tiny)"] = [
            "run",
            "examples/arithmetic.toml",
            "--question",
            "What is 57+8?",
            "--answer",
            "65",
            "--quiet",
        ]
    return cases


def wall_time(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def measure(arguments: list[str], repeats: int) -> tuple[float, float]:
    """Median seconds with the teardown (the old exit) and without it, alternating."""
    old, new = [], []
    for _ in range(repeats):
        old.append(wall_time([sys.executable, "-c", TEARDOWN, *arguments]))
        new.append(wall_time([sys.executable, "-m", "debate_core.cli", *arguments]))
    return statistics.median(old), statistics.median(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-run", action="store_true", help="leave out the one-question debate run")
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as scratch:
        response = Path(scratch) / "response.txt"
        response.write_text(RESPONSE)
        print(f"{'command':<50}{'teardown s':>12}{'fast exit s':>13}{'saved s':>9}{'ratio':>8}")
        for name, arguments in commands(response, not args.skip_run).items():
            old, new = measure(arguments, args.repeats)
            print(f"{name:<50}{old:>12.2f}{new:>13.2f}{old - new:>9.2f}{new / old:>7.2f}x")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
