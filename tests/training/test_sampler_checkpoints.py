"""Every checkpoint saves the training state and the weights for sampling; periodic ones expire
on the backend, the last one does not; ``--checkpoint`` opens the sampler weights."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.checkpoint_format import Checkpoint, CheckpointError, DataPosition, manifest_checksum
from debate_core.runtime.manifests import read_checkpoint, write_checkpoint
from debate_core.training.policy_weights import PolicyWeights, resolve_policy_weights
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.doubles.scripted_backend import ScriptedServiceClient
from tests.training.trainer_harness import BASE_OVERRIDES, SERVICES, make_config, service_setup

TTL = 7200


def with_ttl(service: ScriptedServiceClient) -> None:
    service.checkpoint_ttl_seconds = TTL  # type: ignore[attr-defined]


def train(registry: Registry, run_dir: Path, *overrides: str, resume: bool = False) -> Any:
    config = make_config(*overrides)
    return asyncio.run(
        run_training(
            config, registry, RunDirectory(run_dir), resume=resume, progress=Progress("off"), handle_signals=False
        )
    )


def test_each_checkpoint_saves_both_and_only_periodic_ones_expire(registry: Registry, tmp_path: Path) -> None:
    with service_setup(with_ttl):
        train(
            registry,
            tmp_path / "run",
            "training.num_iterations=4",
            "training.save_every=2",
            "evaluation.num_problems=0",
        )
    saves = SERVICES[-1].sent_saves
    assert saves == [
        ("save_state", "step_000002", TTL),
        ("save_weights_for_sampler", "step_000002_sampler", TTL),
        ("save_state", "step_000004", None),
        ("save_weights_for_sampler", "step_000004_sampler", None),
    ]
    assert len({name for _, name, _ in saves}) == len(saves)
    periodic = read_checkpoint(tmp_path / "run" / "checkpoints" / "step_000002.json")
    final = read_checkpoint(tmp_path / "run" / "checkpoints" / "step_000004.json")
    assert periodic.ttl_seconds == TTL and final.ttl_seconds is None
    for checkpoint in (periodic, final):
        assert checkpoint.sampler_weights is not None and Path(checkpoint.sampler_weights).is_file()
        assert checkpoint.sampler_weights != checkpoint.backend_state
    assert not final.expired(now=time.time() + 10 * TTL) and periodic.expired(now=periodic.created + TTL)


def test_a_checkpoint_before_a_failure_is_kept(registry: Registry, tmp_path: Path) -> None:
    with service_setup(with_ttl), pytest.raises(Exception, match="no votes to divide"):
        train(
            registry,
            tmp_path / "run",
            "reward.name=exploding",
            "reward.options.calls_before=4",
            "training.save_every=5",
        )
    failure = read_checkpoint(tmp_path / "run" / "checkpoints" / "step_000001.json")
    assert failure.reason.startswith("failure") and failure.ttl_seconds is None
    assert ("save_weights_for_sampler", "step_000001_sampler", None) in SERVICES[-1].sent_saves


def test_resuming_from_an_expired_checkpoint_says_so(registry: Registry, tmp_path: Path) -> None:
    with service_setup(with_ttl):
        train(
            registry,
            tmp_path / "run",
            "training.num_iterations=2",
            "training.save_every=1",
            "evaluation.num_problems=0",
        )
    manifest = tmp_path / "run" / "checkpoints" / "step_000002.json"
    raw = json.loads(manifest.read_text())
    raw.update(ttl_seconds=TTL, created=time.time() - 2 * TTL)
    raw["checksum"] = manifest_checksum(raw)  # as if it had been written two TTLs ago
    manifest.write_text(json.dumps(raw))
    with pytest.raises(CheckpointError, match=r"step 2 expired on the backend at .*checkpoint_ttl_s"):
        train(registry, tmp_path / "run", "training.num_iterations=3", resume=True)


def manifest(directory: Path, step: int, sampler: str | None, ttl: int | None = None, created: float = 0.0) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"state_{step}").write_text("a backend state", encoding="utf-8")
    checkpoint = Checkpoint(
        step=step,
        warmstart_steps=0,
        iteration=step,
        backend_state=str(directory / f"state_{step}"),
        data=DataPosition(),
        seed=0,
        sampler_weights=sampler,
        ttl_seconds=ttl,
        created=created or time.time(),
    )
    return write_checkpoint(directory / "checkpoints", checkpoint)


def test_checkpoint_arguments_resolve_to_what_is_opened(tmp_path: Path) -> None:
    run = tmp_path / "run"
    manifest(run, 1, None)
    latest = manifest(run, 2, "tinker://r/sampler_weights/step_000002_sampler")
    for argument in (run, run / "checkpoints", latest):
        assert resolve_policy_weights(str(argument), "--checkpoint") == PolicyWeights(
            sampler_path="tinker://r/sampler_weights/step_000002_sampler", state_path=str(run / "state_2"), step=2
        )
    # a manifest written before sampler weights were saved opens the training state
    old = run / "checkpoints" / "step_000001.json"
    assert resolve_policy_weights(str(old), "--checkpoint") == PolicyWeights(state_path=str(run / "state_1"), step=1)
    # backend paths as the backend wrote them
    assert resolve_policy_weights("tinker://r/weights/step_1", "x") == PolicyWeights(
        state_path="tinker://r/weights/step_1"
    )
    assert resolve_policy_weights("tinker://r/sampler_weights/s", "x").sampler_path == "tinker://r/sampler_weights/s"
    state_folder = tmp_path / "step_000001_sampler"
    state_folder.mkdir()
    assert resolve_policy_weights(str(state_folder), "x") == PolicyWeights(sampler_path=str(state_folder.resolve()))


def test_bad_checkpoint_arguments_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=r"^--checkpoint .*nowhere: no such file or directory$"):
        resolve_policy_weights(str(tmp_path / "nowhere"), "--checkpoint")
    (tmp_path / "empty" / "checkpoints").mkdir(parents=True)
    with pytest.raises(CheckpointError, match=r"^evaluation.opponent .*no checkpoint found"):
        resolve_policy_weights(str(tmp_path / "empty"), "evaluation.opponent")
    expired = manifest(tmp_path / "old", 3, "tinker://r/sampler_weights/s", ttl=3600, created=time.time() - 7200)
    with pytest.raises(CheckpointError, match=r"step 3 expired on the backend"):
        resolve_policy_weights(str(expired), "--checkpoint")


def test_eval_and_run_open_sampler_weights_without_a_training_model(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    overrides = [*BASE_OVERRIDES, "training.num_iterations=1", "evaluation.num_problems=1"]
    assert main(["train", str(run_file), *overrides, "--run-dir", str(tmp_path / "run")]) == 0
    sampler = read_checkpoint(tmp_path / "run" / "checkpoints" / "step_000001.json").sampler_weights
    capsys.readouterr()
    assert (
        main(["run", str(run_file), *overrides, "--checkpoint", str(tmp_path / "run"), "--question", "What is 2 + 3?"])
        == 0
    )
    assert "Final answer" in capsys.readouterr().out
    assert [label for kind, label in SERVICES[-1].log if kind == "submit" and label.startswith("create")] == [
        f"create_sampling_client#0:{sampler}"
    ]
    assert main(["eval", str(run_file), *overrides, "--checkpoint", str(tmp_path / "run"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checkpoint"] == sampler
    assert not any(label.startswith(("create_lora", "create_training")) for _, label in SERVICES[-1].log)


def test_a_retried_checkpoint_takes_a_fresh_name(registry: Registry, tmp_path: Path) -> None:
    """A checkpoint whose sampler save failed after its state was saved is retried (before the run
    exits) under a new name: the backend never sees one name twice."""

    def fail_sampler_save_once(service: ScriptedServiceClient) -> None:
        service.fail_next["save_weights_for_sampler"] = [ValueError("disk full")]

    with service_setup(fail_sampler_save_once), pytest.raises(Exception, match="disk full"):
        train(
            registry,
            tmp_path / "run",
            "training.num_iterations=2",
            "training.save_every=1",
            "evaluation.num_problems=0",
        )
    names = [name for _, name, _ in SERVICES[-1].sent_saves]
    assert names == ["step_000001", "step_000001_sampler", "step_000001-2", "step_000001-2_sampler"]
    checkpoint = read_checkpoint(tmp_path / "run" / "checkpoints" / "step_000001.json")
    assert checkpoint.reason == "failure: BackendError" and checkpoint.backend_state.endswith("step_000001-2.npz")
