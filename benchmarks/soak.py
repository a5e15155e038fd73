"""A long run's resources: memory, open files and disk over thousands of RL iterations.

    python benchmarks/soak.py                          # 2,000 iterations of embedded:debate-micro
    python benchmarks/soak.py --iterations 600 --keep runs/soak
    python benchmarks/soak.py --iterations 2000 training.eval_every=100

It runs ``debate train`` on ``embedded:debate-micro`` (small debates: 2 agents, 1 round, short
answers; every iteration updates the weights, ``training.skip_zero_advantage_updates = false``)
with periodic checkpoints (``training.save_every``), pruning (``training.keep_last``) and
evaluations (``training.eval_every``), in a fresh run directory (a temporary one unless
``--keep DIR``). While it runs, every ``--every`` RL iterations (read from the trainer's
``metrics.jsonl`` as it grows) it samples the trainer process's resident memory (``VmRSS``), its
open file descriptors (``/proc/PID/fd``, the fewest of five looks 20 ms apart) and the run
directory's size, and prints each sample. At the end it times ``debate report`` on the finished
run.

Targets, each printed with PASS or MISS:

* memory: growth under 1 MB per 1,000 iterations after the warm-up (the least-squares slope of
  RSS over the samples from the ``--warmup`` iteration on);
* open files: the same count at every sample after the warm-up;
* disk: growth linear in the iterations (stated per iteration; the largest sample's distance from
  the straight line under 10% of the growth), and ``keep_last`` honoured (at most ``keep_last``
  periodic checkpoints, plus those always kept, in the run directory at the end);
* ``debate report`` on the result in under 10 s.

The load average is printed before and after: timings from a busy machine are not the run's own;
memory, files and disk do not depend on load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

RUN_FILE = """\
[run]
name = "soak"
seed = 0

[backend]
name = "local"

[model]
base_model = "embedded:debate-micro"

[dataset]
name = "arithmetic"
options = {{ difficulty = 1, num_train = 500, num_test = 50 }}

[debate]
num_agents = 2
max_rounds = 1
max_tokens = 12
instructions = "brief"
persona_set = {{ name = "default", options = {{ brief = true }} }}
parser = {{ name = "xml", options = {{ instructions = "brief" }} }}

[reward]
name = "gt_mix"

[training]
batch_size = 2
# the untrained model's answers all score alike, so every advantage is zero: without this, every
# update would be skipped and the sampler snapshot (with its prefix cache) would never change
skip_zero_advantage_updates = false
num_iterations = {iterations}
save_every = {save_every}
keep_last = {keep_last}
eval_every = {eval_every}
learning_rate = 1e-4

[evaluation]
num_problems = 4
modes = ["direct", "debate"]
after_warmstart = false

[logging]
progress = "off"
num_groups_to_log = 1
"""
MB = 1024 * 1024
MEMORY_TARGET_MB_PER_1000 = 1.0
REPORT_TARGET_S = 10.0
LINEARITY_TOLERANCE = 0.10


@attrs.frozen
class Sample:
    iteration: int
    seconds: float
    rss_bytes: int
    open_files: tuple[str, ...]
    disk_bytes: int


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` (``VmRSS`` of ``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def open_files(pid: int) -> tuple[str, ...]:
    """What the open file descriptors of ``pid`` point to, at the fewest of five looks 20 ms apart,
    so that a file the trainer has open for a moment (a checkpoint being written) is not counted
    as kept open."""
    looks = []
    for _ in range(5):
        targets = []
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):  # closed between the listing and the look
                targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        looks.append(tuple(sorted(targets)))
        time.sleep(0.02)
    return min(looks, key=len)


def directory_bytes(root: Path) -> int:
    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):  # pruned while walking
                total += (Path(directory) / name).stat().st_size
    return total


def rl_iterations(metrics: Path, read_from: int, count: int) -> tuple[int, int]:
    """RL records written since byte ``read_from`` of ``metrics.jsonl`` added to ``count``; the
    new byte offset (only whole lines are read)."""
    if not metrics.exists():
        return count, read_from
    with metrics.open("rb") as handle:
        handle.seek(read_from)
        data = handle.read()
    whole = data[: data.rfind(b"\n") + 1]
    for line in whole.splitlines():
        if json.loads(line).get("phase") == "rl":
            count += 1
    return count, read_from + len(whole)


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ``ys`` over ``xs``."""
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread if spread else 0.0


def soak(run_dir: Path, args: argparse.Namespace) -> tuple[list[Sample], int, float]:
    """Train in ``run_dir`` while sampling; the samples, the exit status and the wall time."""
    run_file = run_dir.parent / f"{run_dir.name}.toml"
    run_file.write_text(
        RUN_FILE.format(
            iterations=args.iterations, save_every=args.save_every, keep_last=args.keep_last, eval_every=args.eval_every
        ),
        encoding="utf-8",
    )
    command = [
        sys.executable,
        "-m",
        "debate_core.cli",
        "train",
        str(run_file),
        *args.overrides,
        "--run-dir",
        str(run_dir),
    ]
    print("$", shlex.join(command), flush=True)
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    samples: list[Sample] = []
    done, offset, next_sample = 0, 0, 0
    metrics = run_dir / "metrics.jsonl"
    stopped = False
    while child.poll() is None:
        if args.max_minutes and not stopped and time.monotonic() - started > 60 * args.max_minutes:
            print(f"--max-minutes {args.max_minutes:g} reached at iteration {done}: stopping the run", flush=True)
            child.send_signal(signal.SIGTERM)  # the trainer checkpoints and exits
            stopped = True
        done, offset = rl_iterations(metrics, offset, done)
        # after the last iteration (or the stop) the trainer saves, evaluates and closes its files:
        # not a sample of a run in progress
        if next_sample <= done < args.iterations and not stopped:
            try:
                sample = Sample(
                    done,
                    time.monotonic() - started,
                    rss_bytes(child.pid),
                    open_files(child.pid),
                    directory_bytes(run_dir),
                )
            except (OSError, RuntimeError):  # the process ended between poll() and the read
                break
            samples.append(sample)
            print(
                f"iteration {sample.iteration:5d}  {sample.seconds:7.0f} s  RSS {sample.rss_bytes / MB:7.1f} MB  "
                f"open files {len(sample.open_files):3d}  run directory {sample.disk_bytes / MB:7.2f} MB",
                flush=True,
            )
            next_sample = done - done % args.every + args.every
        time.sleep(0.2)
    code = child.wait()
    return samples, 0 if stopped and code == 128 + signal.SIGTERM else code, time.monotonic() - started


def time_report(run_dir: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``debate report RUN_DIR``, and its exit status."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "debate_core.cli", "report", str(run_dir)], capture_output=True)
    wall = time.monotonic() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return wall, cpu, done.returncode


def periodic_checkpoints(run_dir: Path) -> tuple[int, int]:
    """(periodic, all) checkpoint manifests in the run directory."""
    manifests = sorted((run_dir / "checkpoints").glob("step_*.json"))
    periodic = sum(1 for m in manifests if json.loads(m.read_text()).get("periodic"))
    return periodic, len(manifests)


def verdicts(samples: list[Sample], run_dir: Path, args: argparse.Namespace, report_s: float) -> list[str]:
    """The target lines, each ending in PASS or MISS."""
    after = [s for s in samples if s.iteration >= args.warmup]
    lines: list[str] = []
    if len(after) < 2:
        return [f"too few samples after the warm-up ({len(after)}): MISS"]
    xs = [float(s.iteration) for s in after]
    growth = slope(xs, [s.rss_bytes / MB for s in after]) * 1000
    ok = growth < MEMORY_TARGET_MB_PER_1000
    lines.append(
        f"memory: {growth:+.2f} MB per 1,000 iterations after iteration {args.warmup} "
        f"(RSS {after[0].rss_bytes / MB:.1f} -> {after[-1].rss_bytes / MB:.1f} MB; "
        f"target < {MEMORY_TARGET_MB_PER_1000:g}): {'PASS' if ok else 'MISS'}"
    )
    counts = sorted({len(s.open_files) for s in after})
    extra = sorted({t for s in after for t in s.open_files} - set(after[0].open_files))
    also = f"; beyond the first sample's: {extra}" if extra else ""
    verdict = "PASS" if len(counts) == 1 else "MISS"
    lines.append(f"open files: {counts} after the warm-up (target: one count{also}): {verdict}")
    disk = [s.disk_bytes for s in after]
    per_iteration = slope(xs, [float(d) for d in disk])
    intercept = sum(disk) / len(disk) - per_iteration * sum(xs) / len(xs)
    worst = max(abs(d - (intercept + per_iteration * x)) for x, d in zip(xs, disk, strict=True))
    spread = max(disk[-1] - disk[0], 1)
    linear = worst <= LINEARITY_TOLERANCE * spread
    lines.append(
        f"disk: {per_iteration / 1024:.2f} KiB per iteration ({disk[0] / MB:.2f} -> {disk[-1] / MB:.2f} MB); farthest "
        f"sample {worst / 1024:.1f} KiB off the line ({100 * worst / spread:.1f}% of the growth, target <= "
        f"{100 * LINEARITY_TOLERANCE:g}%): {'PASS' if linear else 'MISS'}"
    )
    periodic, total = periodic_checkpoints(run_dir)
    kept = args.keep_last == 0 or periodic <= args.keep_last
    lines.append(
        f"keep_last = {args.keep_last}: {periodic} periodic checkpoints left, {total} in all: "
        f"{'PASS' if kept else 'MISS'}"
    )
    quick = report_s < REPORT_TARGET_S
    lines.append(f"debate report: {report_s:.1f} s (target < {REPORT_TARGET_S:g} s): {'PASS' if quick else 'MISS'}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("overrides", nargs="*", help="section.key=value overrides of the soak's run file")
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--every", type=int, default=100, help="sample every this many RL iterations")
    parser.add_argument("--warmup", type=int, default=200, help="iterations before memory growth is counted")
    parser.add_argument("--save-every", type=int, default=50)
    parser.add_argument("--keep-last", type=int, default=3)
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--keep", type=Path, metavar="DIR", help="train in DIR and keep it")
    parser.add_argument(
        "--max-minutes", type=float, default=0.0, help="stop the run (SIGTERM) after this long; 0: never"
    )
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    with tempfile.TemporaryDirectory(prefix="soak-") as scratch:
        run_dir = args.keep or Path(scratch) / "run"
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        samples, code, wall = soak(run_dir, args)
        if code != 0:
            print(f"debate train exited with {code}: MISS")
            return 1
        report_s, report_cpu_s, report_code = time_report(run_dir)
        print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        last = samples[-1].iteration if samples else 0
        print(f"{last} iterations sampled; the run took {wall:.0f} s ({wall / max(last, 1):.2f} s per iteration)")
        print(f"debate report took {report_s:.1f} s wall, {report_cpu_s:.1f} s CPU")
        if report_code != 0:
            print(f"debate report exited with {report_code}: MISS")
            return 1
        lines = verdicts(samples, run_dir, args, report_s)
    print("\n".join(lines))
    return 0 if all(line.endswith("PASS") for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
