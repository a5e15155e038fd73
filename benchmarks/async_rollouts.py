"""Asynchronous off-policy rollouts against synchronous ones: wall time per RL iteration, measured
side by side in one run (docs/training.md#asynchronous-rollouts).

    python benchmarks/async_rollouts.py                  # both parts
    python benchmarks/async_rollouts.py local --iterations 8
    python benchmarks/async_rollouts.py tinker --sample-s 1.0 --train-s 3.0

* ``local``: the main job (``examples/arithmetic.toml``) shortened to ``--iterations`` RL
  iterations with no evaluation and no checkpoint between them, on the local backend, once with
  ``training.max_steps_off_policy = 0`` and once with ``1``, alternating for ``--rounds`` rounds.
  An iteration's time is ``time/total`` (from asking for its batch to the end of its update); the
  first iteration of each run is left out (the asynchronous run samples two batches there).
* ``tinker``: the ``tinker`` backend through the real SDK against the fake Tinker service of
  ``tests/tinker_wire`` on loopback (the trainer harness's sums task, 3 agents, 2 rounds,
  ``--batch`` debates), where each sampling request takes ``--sample-s`` seconds (the requests
  side by side, as a serving fleet runs them) and each ``forward_backward`` ``--train-s`` and
  each ``optim_step`` a fifth of it (one after another, on the model's one trainer).

Each part prints the seconds per iteration of both runs and their ratio (async / sync: below 1
is faster), with the load average before and after (figures from a busy machine are not the
job's own). Run it from the repository root (the ``tinker`` part imports the test suite's fake service).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import mean
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def iteration_seconds(metrics: Path) -> list[float]:
    """``time/total`` of every RL record but the first."""
    records = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    return [float(r["time/total"]) for r in records if r.get("phase") == "rl"][1:]


def local_part(iterations: int, rounds: int) -> tuple[float, float]:
    """Seconds per iteration of the shortened main job, synchronous and asynchronous."""
    times: dict[int, list[float]] = {0: [], 1: []}
    with tempfile.TemporaryDirectory(prefix="async-bench-") as scratch:
        for round_ in range(rounds):
            for k in (0, 1) if round_ % 2 == 0 else (1, 0):
                run = Path(scratch) / f"k{k}-{round_}"
                command = [
                    sys.executable,
                    "-m",
                    "debate_core.cli",
                    "train",
                    str(ROOT / "examples" / "arithmetic.toml"),
                    f"training.num_iterations={iterations}",
                    "training.save_every=0",
                    "evaluation.at_start=false",
                    "evaluation.at_end=false",
                    "logging.progress=off",
                    f"training.max_steps_off_policy={k}",
                    "--run-dir",
                    str(run),
                ]
                subprocess.run(command, check=True, capture_output=True)
                seconds = iteration_seconds(run / "metrics.jsonl")
                times[k].extend(seconds)
                print(f"  round {round_ + 1}, max_steps_off_policy = {k}: {mean(seconds):.2f} s per iteration")
    return mean(times[0]), mean(times[1])


def tinker_part(batch: int, iterations: int, sample_s: float, train_s: float) -> tuple[float, float]:
    """Seconds per iteration on the tinker backend against the fake service, sync and async."""
    sys.path.insert(0, str(ROOT))
    from debate_core.config import load_run_config
    from debate_core.rundir.directory import RunDirectory
    from debate_core.training.progress import Progress
    from debate_core.training.run import run_training
    from tests.tinker_wire.conftest import CONTEXT_LENGTH, SENTINEL_KEY, byte_level_tokenizer_json
    from tests.tinker_wire.fake_service import FakeTinkerService, LoopbackServer
    from tests.training.trainer_harness import BASE_OVERRIDES, harness_registry, respond

    out: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="async-tinker-") as scratch_name:
        scratch = Path(scratch_name)
        model = scratch / "byte-model"
        model.mkdir()
        (model / "tokenizer.json").write_text(byte_level_tokenizer_json(), encoding="utf-8")
        config_json = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<eos>"}
        (model / "tokenizer_config.json").write_text(json.dumps(config_json), encoding="utf-8")
        os.environ.update(TINKER_API_KEY=SENTINEL_KEY, HF_HUB_OFFLINE="1", TINKER_TELEMETRY="0")
        for k in (0, 1):
            fake = FakeTinkerService(scratch / f"states{k}", SENTINEL_KEY, {str(model): CONTEXT_LENGTH}, respond)
            fake.latency_s = {"sample": sample_s, "forward_backward": train_s, "optim_step": train_s / 5}
            fake.max_staleness = k
            with LoopbackServer(fake) as server, harness_registry() as registry:
                os.environ["TINKER_BASE_URL"] = server.url
                overrides = [  # the trainer harness's run (sums, 3 agents, 2 rounds) on the tinker backend
                    *BASE_OVERRIDES,
                    "backend.name=tinker",
                    f"model.base_model={model}",
                    "model.lora_rank=8",
                    f"training.batch_size={batch}",
                    f"training.num_iterations={iterations}",
                    f"training.max_debates_in_flight={batch}",
                    "training.save_every=0",
                    f"training.max_steps_off_policy={k}",
                    "evaluation.num_problems=0",
                ]
                config = load_run_config(None, overrides, registry=registry)
                run = scratch / f"run{k}"
                coroutine = run_training(config, registry, RunDirectory(run), progress=Progress("off"))
                asyncio.run(coroutine)
                assert not fake.violations, fake.violations
                out[k] = mean(iteration_seconds(run / "metrics.jsonl"))
                print(f"  max_steps_off_policy = {k}: {out[k]:.2f} s per iteration")
    return out[0], out[1]


def report(name: str, sync: float, async_: float) -> None:
    print(f"{name}: sync {sync:.2f} s, async {async_:.2f} s per iteration: async / sync = {async_ / sync:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", default=["local", "tinker"], help="local, tinker (default: both)")
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--sample-s", type=float, default=1.0)
    parser.add_argument("--train-s", type=float, default=3.0)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.parts) - {"local", "tinker"})
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}: choose local, tinker")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    results: list[tuple[str, Any, Any]] = []
    if "local" in args.parts:
        print(f"local backend, the main job, {args.iterations} RL iterations, {args.rounds} rounds:")
        results.append(("local (main job)", *local_part(args.iterations, args.rounds)))
    if "tinker" in args.parts:
        print(
            f"tinker backend, fake service: {args.batch} debates an iteration, sample {args.sample_s} s, "
            f"forward_backward {args.train_s} s, optim_step {args.train_s / 5} s:"
        )
        sync, async_ = tinker_part(args.batch, args.iterations, args.sample_s, args.train_s)
        results.append(("tinker (fake service)", sync, async_))
    for name, sync, async_ in results:
        report(name, sync, async_)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
