"""The loop end to end on the scripted backend: metrics, transcripts, checkpoints, resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import SERVICES, make_config, read_metrics


def train(config, registry: Registry, run_dir: Path, resume: bool = False):
    return asyncio.run(
        run_training(
            config, registry, RunDirectory(run_dir), resume=resume, progress=Progress("off"), handle_signals=False
        )
    )


def test_four_iterations_write_every_artifact(registry: Registry, tmp_path: Path) -> None:
    outcome = train(make_config(), registry, tmp_path / "run")
    run = tmp_path / "run"
    metrics = read_metrics(run / "metrics.jsonl")
    assert [m["step"] for m in metrics] == [1, 2, 3, 4]
    assert outcome.iterations == 4
    for name in (
        "env/all/total_episodes",
        "env/all/reward/total",
        "consensus_reached",
        "round",
        "parse_error",
        "pairwise_reward",
        "optim/kl_sample_train_v1",
        "optim/entropy",
        "train_tiny_sums/pass@3",
    ):
        assert name in metrics[0], name
    assert (run / "config.toml").exists() and (run / "plugins.json").exists()
    assert (run / "transcripts" / "step_000001" / "debate_00.json").exists()
    assert sorted(p.name for p in (run / "checkpoints").glob("step_*.json")) == ["step_000002.json", "step_000004.json"]
    assert "eval_tiny_sums/direct/pass@3" in metrics[-1]
    print(SERVICES[-1].log[:5])
