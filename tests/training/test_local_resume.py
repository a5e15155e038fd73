"""With the local torch backend: a run of 4 iterations equals a run of 2 plus a resumed 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.killed_runs import kill_after_checkpoint

pytest.importorskip("torch")
pytest.importorskip("transformers")

OVERRIDES = [
    "backend.name=local",
    "backend.options.num_threads=1",
    "backend.options.max_batch_rows=1",  # compared runs: no batch may depend on thread timing
    "training.max_debates_in_flight=1",
    "dataset.name=arithmetic",
    "reward.name=v2",
    "debate.num_agents=2",
    "debate.max_rounds=1",
    "debate.max_tokens=24",
    "training.batch_size=2",
    "training.num_iterations=4",
    "training.save_every=0",
    "evaluation.num_problems=0",
    "logging.progress=off",
    "warmstart.enabled=true",
    "warmstart.steps=1",
    "warmstart.batch_size=2",
    "run.seed=5",
]


def stable(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith(("time/", "throughput/"))} for r in records]


def test_local_backend_resume_is_exact(registry: Registry, tmp_path: Path) -> None:
    from debate_core.config import load_run_config

    def train(directory: Path, *extra: str, resume: bool = False, signals: bool = False) -> Any:
        config = load_run_config(None, [*OVERRIDES, *extra], registry=registry)
        return asyncio.run(
            run_training(
                config,
                registry,
                RunDirectory(directory),
                resume=resume,
                progress=Progress("off"),
                handle_signals=signals,
            )
        )

    straight = train(tmp_path / "straight")
    assert (straight.warmstart_steps, straight.iterations) == (1, 4)
    # stopped by SIGTERM after the record of step 3 (warm-start + 2 iterations), then resumed
    stopped = train(
        tmp_path / "resumed", "logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=3}}]", signals=True
    )
    assert stopped.stopped_by == "SIGTERM" and stopped.iterations == 2
    train(tmp_path / "resumed", resume=True)
    assert stable(tmp_path / "resumed" / "metrics.jsonl") == stable(tmp_path / "straight" / "metrics.jsonl")


MAIN_JOB = Path(__file__).parents[2] / "examples" / "arithmetic.toml"

EVALUATED = [
    "backend.options.num_threads=1",
    "backend.options.max_batch_rows=1",
    "training.max_debates_in_flight=1",
    "training.batch_size=1",
    "training.num_iterations=2",
    "training.save_every=1",
    "training.eval_every=1",
    "evaluation.num_problems=1",
    "evaluation.at_start=false",
    "warmstart.enabled=true",
    "warmstart.steps=1",
    "warmstart.batch_size=1",
    "logging.progress=off",
]
"""The main job (examples/arithmetic.toml: the KL penalty, peer votes, three agents in two rounds)
shortened, with the settings that make runs bit-identical (docs/local-backend.md#what-is-reproducible),
evaluating after the warm-start and after every RL iteration: each step after a resume reads
the sampler's logprobs (``optim/*``)."""


def train_main_job(registry: Registry, directory: Path, overrides: list[str], resume: bool = False) -> Any:
    """The main job with ``overrides`` into ``directory`` (or resumed there), in this process."""
    from debate_core.config import load_run_config

    config = load_run_config(MAIN_JOB, overrides, registry=registry)
    return asyncio.run(
        run_training(
            config, registry, RunDirectory(directory), resume=resume, progress=Progress("off"), handle_signals=False
        )
    )


@pytest.mark.slow  # a subprocess and three runs of about 30 s each
def test_sigkill_right_after_an_rl_checkpoint_resumes_to_the_same_optim_metrics(
    registry: Registry, tmp_path: Path
) -> None:
    killed = tmp_path / "killed"
    kill_after_checkpoint(MAIN_JOB, EVALUATED, killed, step=2)  # RL's first iteration, checkpointed

    def train(directory: Path, resume: bool = False) -> Any:
        return train_main_job(registry, directory, EVALUATED, resume)

    resumed = train(killed, resume=True)
    assert (resumed.warmstart_steps, resumed.iterations) == (1, 2)
    train(tmp_path / "straight")
    after, straight = stable(killed / "metrics.jsonl"), stable(tmp_path / "straight" / "metrics.jsonl")
    assert [r["step"] for r in after] == [1, 2, 3]
    optim = [{k: v for k, v in r.items() if k.startswith("optim/")} for r in after]
    assert optim == [{k: v for k, v in r.items() if k.startswith("optim/")} for r in straight]
    assert all("optim/entropy" in r and "optim/kl_policy_reference" in r for r in optim[1:])
    assert after == straight


SAMPLED_AHEAD = [
    "backend.options.num_threads=1",
    "backend.options.max_batch_rows=1",
    "training.max_debates_in_flight=1",
    "training.batch_size=1",
    "training.num_iterations=4",
    "training.save_every=2",
    "training.max_steps_off_policy=1",
    "evaluation.num_problems=0",
    "warmstart.enabled=true",
    "warmstart.steps=1",
    "warmstart.batch_size=1",
    "logging.progress=off",
]
"""The shortened main job with asynchronous rollouts (docs/training.md#asynchronous-rollouts): each
batch between the checkpoints is sampled by the weights one update older than those it trains."""


@pytest.mark.slow  # a subprocess and three runs of about 20 s each
def test_an_async_run_sigkilled_right_after_an_rl_checkpoint_resumes_to_every_metric(
    registry: Registry, tmp_path: Path
) -> None:
    killed = tmp_path / "killed"
    kill_after_checkpoint(MAIN_JOB, SAMPLED_AHEAD, killed, step=3)  # after RL's second iteration

    def train(directory: Path, resume: bool = False) -> Any:
        return train_main_job(registry, directory, SAMPLED_AHEAD, resume)

    train(killed, resume=True)
    train(tmp_path / "straight")
    after, straight = stable(killed / "metrics.jsonl"), stable(tmp_path / "straight" / "metrics.jsonl")
    assert [r.get("async/staleness") for r in straight] == [None, 0, 1, 0, 1]
    assert all("optim/entropy" in r and "optim/kl_sample_train_v1" in r for r in straight[1:])
    assert after == straight
