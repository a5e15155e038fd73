"""Start-up time of `import debate_core`, `debate --help` and `debate plugins`, against a bare
`python -c pass` measured in the same run (the target: each under one second)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import debate_core": [sys.executable, "-c", "import debate_core"],
    "debate --help": [sys.executable, "-m", "debate_core.cli", "--help"],
    "debate plugins": [sys.executable, "-m", "debate_core.cli", "plugins"],
}


def best_of(command: list[str], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    baseline = best_of(CASES["python -c pass"])
    print(f"{'case':<22}{'median s':>10}{'x python':>10}")
    for name, command in CASES.items():
        seconds = best_of(command)
        print(f"{name:<22}{seconds:>10.3f}{seconds / baseline:>10.1f}")


if __name__ == "__main__":
    main()
