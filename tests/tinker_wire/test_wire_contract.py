"""The wire-level contract of the ``tinker`` backend: the real Tinker SDK (0.38), with only the
service faked on loopback (``fake_service``), driven through ``debate train``, ``debate eval`` and
``debate run``. Each request is checked as the service receives it."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tinker import types

from debate_core.cli import main
from debate_core.plugin import Registry
from debate_core.runtime.manifests import read_checkpoint
from tests.tinker_wire.conftest import CONTEXT_LENGTH, SENTINEL_KEY
from tests.tinker_wire.fake_service import Event, FakeTinkerService

LOSS_CONFIG = {"clip_low_threshold": 0.8, "clip_high_threshold": 1.25}
ADAM = {"beta1": 0.85, "beta2": 0.97, "eps": 1e-7, "weight_decay": 0.01, "grad_clip_norm": 5.0}
WARMSTART_LR = 0.01
RL_LR = 0.05
TTL = 3600
SUBSTEPS = 2
"""``training.num_substeps``: the chunks of each RL update (the warm-start trains each step in one)."""
STOPS = ["\nUser:", "</consensus_reason>"]
"""The ``role_colon`` renderer's stops (its default string stop plus the contract's closing tag)."""


def run_file(tmp_path: Path, model_dir: Path) -> Path:
    path = tmp_path / "wire.toml"
    path.write_text(
        f"""
[run]
name = "wire"
seed = 3

[backend]
name = "tinker"
options = {{ checkpoint_ttl_s = {TTL} }}

[model]
base_model = "{model_dir}"
lora_rank = 8
train_unembed = false

[dataset]
name = "tiny_sums"

[grader]
name = "boxed"

[reward]
name = "win_rate"

[debate]
num_agents = 3
max_rounds = 2
max_tokens = 400

[warmstart]
enabled = true
steps = 1
batch_size = 2
learning_rate = {WARMSTART_LR}

[training]
batch_size = 3
num_iterations = 3
save_every = 2
num_substeps = {SUBSTEPS}
learning_rate = {RL_LR}
adam_beta1 = {ADAM["beta1"]}
adam_beta2 = {ADAM["beta2"]}
adam_eps = {ADAM["eps"]}
weight_decay = {ADAM["weight_decay"]}
grad_clip_norm = {ADAM["grad_clip_norm"]}
backend_retry_delay_s = 0.0
max_debates_in_flight = 3

[evaluation]
num_problems = 2
modes = ["direct", "debate"]

[logging]
progress = "off"
num_groups_to_log = 1
""",
        encoding="utf-8",
    )
    return path


def loss_overrides(loss: str) -> list[str]:
    if loss == "importance_sampling":
        return ["training.loss_fn=importance_sampling"]
    return [f"training.loss_fn={loss}", f"training.loss_fn_config={json.dumps(LOSS_CONFIG).replace(':', ' =')}"]


def stable_metrics(run: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith(("time/", "throughput/"))} for r in records]


def final_weights(service: FakeTinkerService, run: Path) -> Any:
    checkpoint = read_checkpoint(run / "checkpoints" / "step_000002.json")
    assert checkpoint.sampler_weights is not None
    return service.weights_at(checkpoint.sampler_weights)


def by_model(events: list[Event]) -> dict[str, list[Event]]:
    """Training requests per model, in seq_id order."""
    out: dict[str, list[Event]] = defaultdict(list)
    for event in events:
        if "seq_id" in event.detail and event.kind != "sample":
            out[event.detail["model_id"]].append(event)
    return {m: sorted(es, key=lambda e: e.detail["seq_id"]) for m, es in out.items()}


def not_pipelined(service: FakeTinkerService, model_id: str) -> list[int]:
    """The seq_ids of the model's forward_backward requests whose result was handed out before their
    optim_step, or the next chunk of their update, was submitted."""
    kinds = {e.detail["seq_id"]: e.kind for e in by_model(service.events)[model_id]}
    late = []
    for delivery in service.deliveries:
        seq, arrived = delivery["seq_id"], delivery["arrived"]
        if delivery["model_id"] == model_id and (
            seq + 1 not in arrived or (kinds.get(seq + 2) == "forward_backward" and seq + 2 not in arrived)
        ):
            late.append(seq)
    return late


def assert_no_secret(tmp_path: Path, *texts: str) -> None:
    for file in tmp_path.rglob("*"):
        if file.is_file() and "service-states" not in file.parts:
            assert SENTINEL_KEY.encode() not in file.read_bytes(), f"the API key was written to {file}"
    for text in texts:
        assert SENTINEL_KEY not in text


# ------------------------------------------------------------------ training, evaluation and debate run


def check_training_requests(service: FakeTinkerService, run: Path, model_dir: Path, loss: str, warmstart: bool) -> str:
    """Every request of one training run, as the service received it; returns the model id."""
    assert service.violations == []
    events = service.events
    assert all(e.api_key == SENTINEL_KEY for e in events)

    # one LoRA model with the run file's configuration
    (created,) = service.requests("create_model")
    request = created.detail["request"]
    assert request.base_model == str(model_dir)
    assert request.lora_config == types.LoraConfig(rank=8, seed=3, train_mlp=True, train_attn=True, train_unembed=False)
    model_id: str = created.detail["model_id"]

    # forward_backward: the loss, its config, and loss_fn_inputs with the right keys, dtypes and lengths
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rl_updates = sum(int(m["optim/num_updates"]) for m in metrics if m["phase"] == "rl")
    passes = service.requests("forward_backward")
    assert len(passes) == int(warmstart) + rl_updates and rl_updates >= 2
    warm = passes[0] if warmstart else None
    expected_config = {} if loss == "importance_sampling" else LOSS_CONFIG
    for event in passes:
        if event is warm:
            inputs = {"target_tokens": "int64", "weights": "float32"}
            assert event.detail["loss_fn"] == "cross_entropy" and event.detail["loss_fn_config"] == {}
        else:
            inputs = {"target_tokens": "int64", "logprobs": "float32", "advantages": "float32"}
            assert event.detail["loss_fn"] == loss and event.detail["loss_fn_config"] == expected_config
        assert not event.detail["forward_only"] and event.detail["datums"]
        for shape in event.detail["datums"]:
            assert {k: v[0] for k, v in shape.items() if k != "model_input"} == inputs
            assert {v[1] for k, v in shape.items() if k != "model_input"} == {shape["model_input"]}

    # optim_step: Adam with the run file's parameters and the scheduled learning rate
    steps = service.requests("optim_step")
    assert len(steps) == len(passes)
    for index, event in enumerate(steps):
        lr = WARMSTART_LR if warmstart and index == 0 else RL_LR
        assert event.detail["params"] == types.AdamParams(learning_rate=lr, **ADAM)

    # order: each forward_backward followed by its optim_step; results collected only after the
    # optim_step (and the next chunk) were submitted; a fresh sampler after every update
    sequence = by_model(events)[model_id]
    kinds = [e.kind for e in sequence]
    assert [e.detail["seq_id"] for e in sequence] == list(range(1, len(sequence) + 1))
    for index, kind in enumerate(kinds):
        if kind == "forward_backward":
            assert kinds[index + 1] == "optim_step"
        if kind == "optim_step" and kinds[index + 1] != "forward_backward":
            assert kinds[index + 1] == "save_weights_for_sampler"
            assert sequence[index + 1].detail["name"] is None  # an ephemeral snapshot, not a checkpoint
    assert len({d["seq_id"] for d in service.deliveries if d["model_id"] == model_id}) == len(passes)
    assert not_pipelined(service, model_id) == []
    # the first chunk of each RL update trains on-policy: the logprobs it returns are the sampler's
    for index, event in enumerate(sequence):
        first_chunk = event.kind == "forward_backward" and kinds[index - 1] == "save_weights_for_sampler"
        if first_chunk and event is not warm:
            gap = event.detail["on_policy_gap"]
            assert gap is not None and gap < 1e-5

    # sampling: the renderer's stops, a seed on every request, unique seeds per sampler
    seeds: dict[str, list[int]] = defaultdict(list)
    for event in service.requests("sample"):
        params = event.detail["params"]
        assert params.stop == STOPS and params.max_tokens == 400 and params.seed is not None
        assert event.detail["prompt_length"] + 400 <= CONTEXT_LENGTH
        seeds[event.detail["session_id"]].append(params.seed)
    assert seeds and all(len(s) == len(set(s)) for s in seeds.values())
    (finished,) = service.requests("finish_session")
    assert finished.detail["reason"] == {"type": "success"}
    return model_id


def checkpoint_saves(service: FakeTinkerService, model_id: str) -> list[tuple[str, str, int | None]]:
    return [
        (e.kind, e.detail["name"], e.detail["ttl_seconds"])
        for e in by_model(service.events)[model_id]
        if e.detail.get("name")
    ]


def test_train_eval_and_run_speak_the_wire_contract(
    service: FakeTinkerService,
    registry: Registry,
    model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tinker_logs: pytest.LogCaptureFixture,
) -> None:
    """A warm-start step, RL iterations of ``importance_sampling`` in two pipelined substeps,
    evaluations and checkpoints; then ``debate eval`` and ``debate run`` on the last checkpoint."""
    config = run_file(tmp_path, model_dir)
    run = tmp_path / "run"
    service.chunks_per_update = {"importance_sampling": SUBSTEPS}
    assert main(["train", str(config), "--run-dir", str(run)]) == 0
    train_output = capsys.readouterr()
    model_id = check_training_requests(service, run, model_dir, "importance_sampling", warmstart=True)
    # where it computed (environment.json): the SDK's version and the address it spoke to
    backend = json.loads((run / "environment.json").read_text(encoding="utf-8"))[0]["backend"]
    assert backend == {"tinker": version("tinker"), "base_url": os.environ["TINKER_BASE_URL"]}

    # checkpoints: unique names, both saves, periodic ones expire, the final one is kept
    assert checkpoint_saves(service, model_id) == [
        (kind, f"step_{step:06d}{suffix}", ttl)
        for step, ttl in ((1, TTL), (3, TTL), (4, None))
        for kind, suffix in (("save_weights", ""), ("save_weights_for_sampler", "_sampler"))
    ]
    final = read_checkpoint(run / "checkpoints" / "step_000004.json")
    assert final.backend_state == f"tinker://{model_id}/weights/step_000004"
    assert final.sampler_weights == f"tinker://{model_id}/sampler_weights/step_000004_sampler"

    # debate eval and debate run open the final sampler weights: no training model
    service.reset()
    assert main(["eval", str(config), "--checkpoint", str(run), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["checkpoint"] == final.sampler_weights and report["metrics"]
    # the judge benchmark runs over the same wire (evaluation mode judge)
    assert main(["eval", str(config), "--checkpoint", str(run), "--mode", "judge", "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)["metrics"]
    assert {"eval_tiny_sums/judge/accuracy", "eval_tiny_sums/judge/consistency"} <= set(judged)
    assert not any("/direct/" in name or "/debate/" in name for name in judged)
    assert main(["run", str(config), "--checkpoint", str(run), "--question", "What is 2 + 3?", "--answer", "5"]) == 0
    run_output = capsys.readouterr()
    assert "Final answer" in run_output.out
    opened = [e.detail["model_path"] for e in service.requests("create_sampling_session")]
    assert opened == [final.sampler_weights] * 3
    assert not service.requests("create_model") and not service.requests("load_weights")
    assert all(e.detail["source"] is None for e in service.requests("sample"))
    assert service.violations == []

    assert [r for r in tinker_logs.records if r.name.startswith("tinker")] == []
    assert_no_secret(tmp_path, train_output.out, train_output.err, run_output.out, run_output.err, tinker_logs.text)


@pytest.mark.parametrize("loss", ["ppo", "cispo"])
def test_the_clipped_losses_on_the_wire(
    loss: str, service: FakeTinkerService, registry: Registry, model_dir: Path, tmp_path: Path
) -> None:
    config = run_file(tmp_path, model_dir)
    run = tmp_path / "run"
    short = ["warmstart.enabled=false", "training.num_iterations=2", "evaluation.num_problems=0"]
    service.chunks_per_update = {loss: SUBSTEPS}
    assert main(["train", str(config), *loss_overrides(loss), *short, "--run-dir", str(run)]) == 0
    model_id = check_training_requests(service, run, model_dir, loss, warmstart=False)
    assert checkpoint_saves(service, model_id) == [
        ("save_weights", "step_000002", None),
        ("save_weights_for_sampler", "step_000002_sampler", None),
    ]


# ------------------------------------------------------------------ failures and resuming


FAILURES = [
    ("sample", "server", "retried"),
    ("sample", "user", "stops"),
    ("forward_backward", "server", "stops"),
    ("forward_backward", "user", "stops"),
    ("save_weights", "server", "retried"),
    ("save_weights", "user", "stops"),
    ("save_weights_for_sampler", "user", "stops"),
]


def test_failures_apply_no_gradient_twice_and_resume_cleanly(
    service: FakeTinkerService,
    registry: Registry,
    model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each failure hits iteration 2 (or the checkpoint after iteration 1); the run either retries
    it or stops and resumes, and ends with exactly the weights and metrics of a run that never failed."""
    config = run_file(tmp_path, model_dir)
    short = [
        "warmstart.enabled=false",
        "training.num_iterations=2",
        "training.save_every=1",
        "training.batch_size=2",
        "debate.max_rounds=1",
        "evaluation.num_problems=0",
    ]
    reference = tmp_path / "reference"
    assert main(["train", str(config), *short, "--run-dir", str(reference)]) == 0
    expected_weights = final_weights(service, reference)
    expected_metrics = stable_metrics(reference)
    for kind, category, outcome in FAILURES:
        case = f"{kind}/{category}"
        service.reset()
        name = {"save_weights": "step_000001", "save_weights_for_sampler": "step_000001_sampler"}.get(kind)
        service.inject(kind, category, after=None if name else "step_000001", name=name)
        run = tmp_path / case.replace("/", "-")
        code = main(["train", str(config), *short, "--run-dir", str(run)])
        err = capsys.readouterr().err
        assert [i.kind for i in service.failed] == [kind], case
        if outcome == "retried":
            assert code == 0, f"{case}: {err}"
        else:
            assert code == 1 and f"injected {category} failure of {kind}" in err, f"{case}: {err}"
            assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("debate: error: "), case
            latest = max(p.name for p in (run / "checkpoints").glob("step_*.json"))
            service.reset()
            assert main(["train", str(config), *short, "--resume", str(run)]) == 0, case
            (load,) = service.requests("load_weights")
            resumed_from = read_checkpoint(run / "checkpoints" / latest)
            assert load.detail["request"].path == resumed_from.backend_state and load.detail["request"].optimizer
        np.testing.assert_array_equal(final_weights(service, run), expected_weights, err_msg=case)
        metrics = stable_metrics(run)
        retried = sum(int(record.get("backend/retries", 0)) for record in metrics)
        assert retried == (1 if outcome == "retried" else 0), case  # the retry counted in its step's record
        assert [{k: v for k, v in r.items() if k != "backend/retries"} for r in metrics] == expected_metrics, case
        assert service.violations == [], case


# ------------------------------------------------------------------ context, credentials, base URL


def test_the_context_the_service_states_guards_every_request(
    service: FakeTinkerService, registry: Registry, model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = run_file(tmp_path, model_dir)
    too_long = CONTEXT_LENGTH - 100
    assert main(["run", str(config), f"debate.max_tokens={too_long}", "--question", "What is 2 + 3?"]) == 1
    err = capsys.readouterr().err
    assert f"plus debate.max_tokens = {too_long}" in err and f"context of {CONTEXT_LENGTH}" in err
    assert "debate 'q0' (agent 0, round 1)" in err
    assert service.requests("get_server_capabilities") and not service.requests("sample")
    service.reset()
    override = "backend.options.max_context_length=100000"
    assert main(["run", str(config), override, f"debate.max_tokens={too_long}", "--question", "What is 2 + 3?"]) == 0
    # the option replaces what the service states: the requests now go out (and overflow the service's context)
    assert not service.requests("get_server_capabilities") and service.requests("sample")
    assert service.violations and all("beyond the context of" in v for v in service.violations)


def test_no_credential_is_one_line_and_sends_nothing(
    service: FakeTinkerService,
    registry: Registry,
    model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TINKER_API_KEY")
    assert main(["train", str(run_file(tmp_path, model_dir)), "--run-dir", str(tmp_path / "run")]) == 1
    (error,) = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert error.startswith("debate: error: backend 'tinker': no Tinker credential found")
    assert "TINKER_CREDENTIAL_CMD" in error and "tinker auth login" in error and "base_url" not in error
    assert service.events == []


def test_the_base_url_option_wins_over_the_environment(
    service: FakeTinkerService,
    registry: Registry,
    model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    url = os.environ["TINKER_BASE_URL"]
    monkeypatch.setenv("TINKER_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    config = run_file(tmp_path, model_dir)
    assert main(["run", str(config), f"backend.options.base_url={url}", "--question", "What is 2 + 3?"]) == 0
    assert service.requests("create_session") and service.requests("sample") and service.violations == []


# ------------------------------------------------------------------ the fake catches what it checks


def test_the_fake_service_catches_a_client_that_breaks_the_contract(
    service: FakeTinkerService, model_dir: Path
) -> None:
    """Awaiting forward_backward before submitting optim_step or the update's next chunk, or
    sampling from a sampler older than the weights, is recorded: the checks above can fail."""
    import tinker

    service.optim_wait_s = service.next_chunk_wait_s = 0.2  # short: what this client sends late is waited for in vain
    service.chunks_per_update = {"cross_entropy": 2}
    client = tinker.ServiceClient()
    try:
        trainer = client.create_lora_training_client(str(model_dir), rank=4).result()
        sampler = trainer.save_weights_and_get_sampling_client().result()
        tokens = [ord(c) for c in "What is 1 + 1?"]
        datum = types.Datum(
            model_input=types.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": tokens[1:], "weights": [1.0] * (len(tokens) - 1)},
        )
        adam = types.AdamParams(learning_rate=0.1)
        # an update of two chunks: the first one's optim_step submitted before its result is
        # awaited, but not the second chunk; the second one awaited before its optim_step
        forward, step = trainer.forward_backward([datum], "cross_entropy"), trainer.optim_step(adam)
        forward.result(), step.result()
        trainer.forward_backward([datum], "cross_entropy").result()
        trainer.optim_step(adam).result()
        params = types.SamplingParams(max_tokens=8, seed=1, stop=["\n"])
        sampler.sample(types.ModelInput.from_ints(tokens), 1, params).result()  # a stale sampler
    finally:
        client.close("success").result()
    assert any("awaited before optim_step was submitted" in v for v in service.violations)
    (created,) = service.requests("create_model")
    chunks = [e.detail["seq_id"] for e in service.requests("forward_backward")]
    assert not_pipelined(service, created.detail["model_id"]) == chunks
    (first,) = [d for d in service.deliveries if d["seq_id"] == chunks[0]]
    assert chunks[1] not in first["arrived"]  # handed out before the next chunk was submitted
    assert any("no fresh sampler after an optimizer step" in v for v in service.violations)
