"""The ``tinker`` backend end to end through the real ``tinker`` SDK against SkyRL's Tinker API
on 127.0.0.1 (docs/own-gpus.md): debate RL with each loss the server offers, a run killed and
resumed, ``model.init_from`` a ``tinker://`` state, ``debate eval --checkpoint tinker://...``,
the warm-start's cross-entropy and the run's metrics where the server reports none, and
``compute_logprobs`` one value per prompt token."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from debate_core.runtime.manifests import read_checkpoint
from tests.tinker_server.conftest import COMMAND_LIMIT_S, debate, spawn, write_run_file
from tests.tinker_server.skyrl_server import RunningServer

pytestmark = pytest.mark.slow  # starts a server and subprocesses: not in the quick loop

NO_METRICS = "returns no forward_backward metrics; loss:sum is computed from the logprobs it returns"
RESTORED = "cannot create a training client from a saved state"


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]


def passed(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]


def assert_rl_metrics(run: Path, steps: list[int]) -> None:
    """Each RL step has the loss computed from the server's logprobs, finite, and the sampler's and
    the trainer's logprobs agree (the same weights on one server)."""
    rl = [r for r in records(run) if r.get("phase") == "rl"]
    assert [r["step"] for r in rl] == steps
    for record in rl:
        assert math.isfinite(record["optim/loss:sum"]), record
        assert abs(record["optim/kl_sample_train_v1"]) < 1e-3, record
        assert record["optim/num_updates"] == 1, record


@pytest.mark.parametrize("loss", ["importance_sampling", "ppo", "cispo"])
def test_debate_rl_with_each_loss(
    loss: str,
    server: RunningServer,
    trained: tuple[Path, subprocess.CompletedProcess[str]],
    tmp_path: Path,
) -> None:
    if loss == "importance_sampling":  # the warm-started run of the fixture trains with it
        run, done = trained
    else:
        config = write_run_file(tmp_path / "run.toml", server)
        done = debate(
            "train",
            config,
            f"training.loss_fn={loss}",
            "training.num_iterations=1",
            "--run-dir",
            tmp_path / "run",
            cwd=tmp_path,
        )
        run = tmp_path / "run"
        if done.returncode != 0 and loss in done.stderr and ("HTTP 4" in done.stderr or "Error code: 4" in done.stderr):
            pytest.skip(f"the server lacks forward_backward(loss_fn={loss!r}): {done.stderr.splitlines()[-1]}")
    passed(done)
    assert NO_METRICS in done.stderr
    assert_rl_metrics(run, [2] if loss == "importance_sampling" else [1])
    assert json.loads(json.dumps(tomllib.loads((run / "config.toml").read_text())["training"]))["loss_fn"] == loss


def test_the_warm_starts_cross_entropy(trained: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """The server reports no loss; the warm-start's cross-entropy per token, computed from the
    logprobs it returns, is that of a pretrained model on its own format: above 0, below a uniform
    guess over the vocabulary (ln 946)."""
    run, done = trained
    passed(done)
    (warm,) = [r for r in records(run) if r.get("phase") == "warmstart"]
    assert 0.0 < warm["warmstart/loss_per_token"] < math.log(946), warm
    assert done.stderr.count(NO_METRICS) == 1


def test_a_run_killed_and_resumed(server: RunningServer, tmp_path: Path) -> None:
    """SIGKILL after the first checkpoint, then ``--resume``: the run ends with every step once,
    its training state (weights and optimizer) loaded from the server's ``tinker://`` path."""
    config = write_run_file(tmp_path / "run.toml", server)
    run = tmp_path / "run"
    child = spawn("train", config, "--run-dir", run, cwd=tmp_path)
    deadline = time.monotonic() + COMMAND_LIMIT_S
    try:
        while not (run / "checkpoints" / "step_000001.json").exists():
            assert child.poll() is None, (tmp_path / "spawned.log").read_text()
            assert time.monotonic() < deadline, "no first checkpoint in time"
            time.sleep(0.1)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=COMMAND_LIMIT_S)
    assert not (run / "checkpoints" / "step_000002.json").exists()
    state = read_checkpoint(run / "checkpoints" / "step_000001.json").backend_state
    assert state.startswith("tinker://") and "/weights/" in state
    done = debate("train", "--resume", run, cwd=tmp_path)
    passed(done)
    assert done.stderr.count(RESTORED) == 1  # SkyRL 0.4.0 lacks SDK 0.38's create-from-state: said once
    steps = [r["step"] for r in records(run) if r.get("phase") == "rl"]
    assert steps[-1] == 2 and len(set(steps)) == len(steps), steps
    assert (run / "checkpoints" / "step_000002.json").exists()


def test_init_from_a_tinker_state(
    server: RunningServer, trained: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    first, done = trained
    passed(done)
    state = read_checkpoint(first / "checkpoints" / "step_000002.json").backend_state
    assert state.startswith("tinker://")
    config = write_run_file(tmp_path / "run.toml", server)
    done = debate(
        "train",
        config,
        f"model.init_from={state}",
        "training.num_iterations=1",
        "--run-dir",
        tmp_path / "run",
        cwd=tmp_path,
    )
    passed(done)
    assert tomllib.loads((tmp_path / "run" / "config.toml").read_text())["model"]["init_from"] == state
    assert_rl_metrics(tmp_path / "run", [1])


def test_eval_of_a_tinker_checkpoint(
    server: RunningServer, trained: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    first, done = trained
    passed(done)
    sampler = read_checkpoint(first / "checkpoints" / "step_000002.json").sampler_weights
    assert sampler is not None and sampler.startswith("tinker://"), sampler
    config = write_run_file(tmp_path / "run.toml", server)
    done = debate(
        "eval",
        config,
        "--checkpoint",
        sampler,
        "evaluation.num_problems=2",
        "--mode",
        "direct",
        "--json",
        cwd=tmp_path,
    )
    passed(done)
    report = json.loads(done.stdout)
    assert report["checkpoint"] == sampler, report
    metrics = {name.split("/", 1)[-1]: value for name, value in report["metrics"].items()}  # eval/direct/...
    assert 0.0 <= metrics["direct/format"] <= 1.0 and "direct/correct" in metrics, report


def test_compute_logprobs_has_one_value_per_prompt_token(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the backend: one value per prompt token, the first ``None``, the others log
    probabilities; SkyRL 0.4.0 itself leaves the first out (the backend adds it, once said)."""
    from tinker import types

    from debate_core.backends.tinker_backend import TinkerOptions, connect

    monkeypatch.setenv("TINKER_API_KEY", "tml-skyrl-local")
    service = connect(TinkerOptions(base_url=server.url))
    sampler = service.create_sampling_client(base_model=server.base_model).result()
    tokens = sampler.get_tokenizer().encode("What is 2 + 3? <answer>5</answer>")
    prompt = types.ModelInput.from_ints(tokens)
    values = sampler.compute_logprobs(prompt).result(timeout=COMMAND_LIMIT_S)
    assert len(values) == len(tokens) and values[0] is None, values
    assert all(isinstance(v, float) and v <= 0.0 for v in values[1:]), values
    raw = sampler.client.compute_logprobs(prompt).result(timeout=COMMAND_LIMIT_S)
    assert len(raw) in (len(tokens) - 1, len(tokens)), (len(raw), len(tokens))
    assert list(raw[-(len(tokens) - 1) :]) == pytest.approx(values[1:])
