"""Paths inside a run directory are relative to it (docs/training.md#checkpoints-stops-faults):
a moved run resumes where it stopped, and a copied run loads its own weights, not the original's."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.manifests import latest_checkpoint, manifest_path, read_checkpoint
from debate_core.training.loop import RunOutcome
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import make_config, read_metrics


def train(config: Any, registry: Registry, run_dir: Path, resume: bool = False) -> RunOutcome:
    return asyncio.run(
        run_training(
            config, registry, RunDirectory(run_dir), resume=resume, progress=Progress("off"), handle_signals=False
        )
    )


def test_manifests_name_their_states_relative_to_the_run(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(make_config("training.num_iterations=2", "training.save_every=1"), registry, run)
    raw = json.loads(manifest_path(run / "checkpoints", 2).read_text(encoding="utf-8"))
    assert not Path(raw["backend_state"]).is_absolute() and raw["backend_state"].startswith("backend/")
    assert not Path(raw["sampler_weights"]).is_absolute()
    checkpoint = read_checkpoint(manifest_path(run / "checkpoints", 2))
    assert Path(checkpoint.backend_state).is_absolute() and Path(checkpoint.backend_state).exists()


def test_a_moved_run_resumes_where_it_stopped(registry: Registry, tmp_path: Path) -> None:
    first = tmp_path / "first"
    train(make_config("training.num_iterations=2", "training.save_every=1"), registry, first)
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(first, moved)
    outcome = train(make_config("training.num_iterations=4", "training.save_every=1"), registry, moved, resume=True)
    assert outcome.iterations == 4
    assert [r["step"] for r in read_metrics(moved / "metrics.jsonl")] == [1, 2, 3, 4]


def test_a_copied_run_loads_its_own_weights(registry: Registry, tmp_path: Path) -> None:
    original = tmp_path / "original"
    train(make_config("training.num_iterations=2", "training.save_every=1"), registry, original)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    found = latest_checkpoint(copy / "checkpoints")
    assert found is not None and Path(found.backend_state).is_relative_to(copy.resolve())


def test_an_old_absolute_manifest_in_a_copied_run_names_the_copy_s_state(registry: Registry, tmp_path: Path) -> None:
    original = tmp_path / "original"
    train(make_config("training.num_iterations=1", "training.save_every=1"), registry, original)
    path = manifest_path(original / "checkpoints", 1)
    raw = json.loads(path.read_text(encoding="utf-8"))
    for key in ("backend_state", "sampler_weights"):  # as manifests were written before
        raw[key] = str((original / "checkpoints" / raw[key]).resolve())
    del raw["format_version"], raw["checksum"], raw["files"]  # format version 1: before checksums, too
    raw["format"] = 1
    path.write_text(json.dumps(raw), encoding="utf-8")
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    found = read_checkpoint(manifest_path(copy / "checkpoints", 1))
    assert Path(found.backend_state).is_relative_to(copy.resolve())
    assert found.sampler_weights is not None and Path(found.sampler_weights).is_relative_to(copy.resolve())
