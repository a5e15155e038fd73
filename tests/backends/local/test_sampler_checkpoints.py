"""The local backend follows the Tinker path for checkpoints: the trainer saves a training state and
sampler weights, and ``debate run/eval --checkpoint`` open the sampler weights with
``create_sampling_client`` (no training model is built)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from debate_core.backends.local.service import LocalServiceClient
from debate_core.cli import main
from debate_core.runtime.manifests import read_checkpoint
from tests.training.trainer_harness import read_metrics, without_timings

OVERRIDES = [
    "backend.name=local",
    "backend.options.num_threads=1",
    "model.base_model=embedded:debate-micro",
    "dataset.name=arithmetic",
    "debate.num_agents=2",
    "debate.max_rounds=1",
    "debate.max_tokens=16",
    "training.batch_size=2",
    "training.num_iterations=1",
    "evaluation.num_problems=1",
    "evaluation.modes=['direct']",
    "logging.progress=off",
]

PINNED_BATCHING = ["backend.options.max_batch_rows=1", "training.max_debates_in_flight=1"]
"""For runs whose metrics are compared: one sequence per model call and one debate at a time, so
that no batch depends on which thread came first (batched rows round differently; two of eight
such comparisons failed at load 3 without this)."""


def test_checkpoints_and_their_use_without_a_training_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    assert main(["train", str(run_file), *OVERRIDES, "--run-dir", str(run)]) == 0
    checkpoint = read_checkpoint(run / "checkpoints" / "step_000001.json")
    state, sampler = Path(checkpoint.backend_state), Path(str(checkpoint.sampler_weights))
    assert state.parent == sampler.parent == run / "checkpoints" / "backend"
    assert (state / "optimizer.safetensors").is_file() and not (sampler / "optimizer.safetensors").exists()
    assert checkpoint.ttl_seconds is None  # the local backend keeps its files until they are deleted

    def no_training_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a training model was started")

    for method in ("create_lora_training_client", "create_training_client_from_state"):
        monkeypatch.setattr(LocalServiceClient, method, no_training_model)
    capsys.readouterr()
    assert main(["eval", str(run_file), *OVERRIDES, "--checkpoint", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checkpoint"] == str(sampler)
    assert (
        main(["run", str(run_file), *OVERRIDES, "--checkpoint", str(run), "--question", "What is 2+3?", "--quiet"]) == 0
    )
    assert "Final answer" in capsys.readouterr().out


def test_the_local_backend_knows_its_context(tmp_path: Path) -> None:
    from debate_core.backends.local.models.loading import model_context_length

    assert model_context_length("embedded:debate-micro") == 1024
    assert model_context_length("embedded:debate-tiny") == 2048
    directory = tmp_path / "model"
    directory.mkdir()
    assert model_context_length(str(directory)) is None  # no config.json: loading it says what is wrong
    (directory / "config.json").write_text(json.dumps({"max_position_embeddings": 40960}), encoding="utf-8")
    assert model_context_length(str(directory)) == 40960
    (directory / "config.json").write_text(json.dumps({"n_positions": 1024}), encoding="utf-8")
    assert model_context_length(str(directory)) == 1024


def test_a_local_run_stops_at_the_models_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    assert main(["run", str(run_file), *OVERRIDES, "debate.max_tokens=1000", "--question", "What is 2+3?"]) == 1
    err = capsys.readouterr().err
    assert "beyond the model's context of 1024" in err and "debate 'q0' (agent 0, round 1)" in err


def test_a_save_left_without_its_manifest_is_not_overwritten(tmp_path: Path) -> None:
    """A crash between the backend's save and the manifest leaves a state behind; resuming moves it
    aside (kept, see docs/training.md) and redoes that step instead of failing on the existing folder."""
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    short = [*OVERRIDES, "evaluation.num_problems=0", "training.save_every=1"]
    assert main(["train", str(run_file), *short, "--run-dir", str(run)]) == 0
    backend = run / "checkpoints" / "backend"
    (backend / "step_000002").mkdir()  # what a crash after save_state of step 2 would leave
    (backend / "step_000002" / "weights.safetensors").write_bytes(b"half")
    assert main(["train", str(run_file), *short, "training.num_iterations=2", "--resume", str(run)]) == 0
    checkpoint = read_checkpoint(run / "checkpoints" / "step_000002.json")
    assert Path(checkpoint.backend_state) == backend / "step_000002"
    assert Path(str(checkpoint.sampler_weights)) == backend / "step_000002_sampler"
    kept = run / "set_aside" / "resume_01" / "checkpoints" / "backend" / "step_000002" / "weights.safetensors"
    assert kept.read_bytes() == b"half"


def test_a_bit_flip_in_saved_weights_is_caught_and_the_run_resumes_from_an_intact_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flipped bit in a safetensors file of the newest checkpoint is not loaded: resume names the
    file, goes back to the newest intact checkpoint and ends where an uninterrupted run ends."""
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    short = [
        *OVERRIDES,
        *PINNED_BATCHING,
        "backend.options.device=cpu",  # bit for bit on the CPU only (docs/local-backend.md#what-is-reproducible)
        "evaluation.num_problems=0",
        "training.save_every=1",
        "training.num_iterations=2",
    ]
    straight, damaged = tmp_path / "straight", tmp_path / "damaged"
    for run in (straight, damaged):
        assert main(["train", str(run_file), *short, "--run-dir", str(run)]) == 0
    weights = damaged / "checkpoints" / "backend" / "step_000002" / "weights.safetensors"
    data = bytearray(weights.read_bytes())
    data[-5] ^= 0x01  # in the last tensor's data, not its header
    weights.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["train", str(run_file), *short, "--resume", str(damaged)]) == 0
    err = capsys.readouterr().err
    assert f"{weights}: damaged" in err and "resuming from the newest intact checkpoint, step 1" in err

    def stable(run: Path) -> list[dict[str, Any]]:
        return without_timings(read_metrics(run / "metrics.jsonl"))

    assert stable(damaged) == stable(straight)
    redone = read_checkpoint(damaged / "checkpoints" / "step_000002.json")
    same = read_checkpoint(straight / "checkpoints" / "step_000002.json")
    tensors = {k: v for k, v in same.files.items() if k.endswith(".safetensors")}
    assert len(tensors) == 3 and {k: redone.files[k] for k in tensors} == tensors  # the same weights, bit for bit
