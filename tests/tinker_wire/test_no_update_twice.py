"""No update applied twice, no checkpoint saved twice (docs/limits.md#a-request-whose-answer-was-lost):
the fake service applies a request and then drops the connection instead of answering, so the
SDK sends the request again.

The SDK sends it again with the same ``seq_id`` (and, where its HTTP client retries rather than
its own retry loop, the same ``X-Idempotency-Key``), and debate-core never sends a training request again under a new
``seq_id``: the service's guard (each ``seq_id`` of a model executed once) is what keeps the step
single. With the guard the run goes on with the unfaulted run's weights; a service that refuses
the second copy stops the run with one line, and ``--resume`` finishes it; a service without the
guard applies the update twice, which changes the weights (the check below can fail). A save
whose answer says it failed but that was saved is found on the service before debate-core's own
retry, and not saved again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from debate_core.cli import main
from tests.tinker_wire.fake_service import FakeTinkerService
from tests.tinker_wire.http_faults import ENDPOINTS
from tests.tinker_wire.midrun import SHORT, final_weights, without_retries
from tests.tinker_wire.test_wire_contract import run_file, stable_metrics

TRAINING_CALLS = ("forward_backward", "optim_step", "save_state", "save_weights_for_sampler")


def sends_of(service: FakeTinkerService, call: str) -> list[dict[str, Any]]:
    return [s for s in service.http.sends if s["path"] == ENDPOINTS[call]]


def assert_one_checkpoint_per_step(service: FakeTinkerService, run: Path) -> None:
    """Each training state and sampler weights saved once under its name, and one manifest per step."""
    for model in service.models.values():
        assert len(model.names) == len(set(model.names)), model.names
    manifests = sorted(p.name for p in (run / "checkpoints").glob("step_*.json"))
    assert manifests == ["step_000001.json", "step_000002.json", "step_000003.json"], manifests


@pytest.mark.parametrize("call", TRAINING_CALLS)
def test_a_request_whose_answer_was_lost_is_applied_once(
    call: str,
    reference: tuple[list[dict[str, Any]], Any],
    service: FakeTinkerService,
    model_dir: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    expected_metrics, expected_weights = reference
    service.inject_http(call, "lost answer", after="step_000001")
    run = tmp_path / "run"
    assert main(["train", str(run_file(tmp_path, model_dir)), *SHORT, "--run-dir", str(run)]) == 0
    assert service.http.hit == [(ENDPOINTS[call], "lost answer")]
    again = [s for s in sends_of(service, call) if s["again"]]
    assert len(again) == 1, sends_of(service, call)  # sent again under the seq_id it was first sent with
    assert service.violations == []  # no seq_id executed twice or out of order
    np.testing.assert_array_equal(final_weights(service, run), expected_weights)
    metrics = stable_metrics(run)
    assert without_retries(metrics) == expected_metrics
    assert sum(int(record.get("backend/retries", 0)) for record in metrics) == 1
    assert any(
        f"POST {ENDPOINTS[call]}: the connection ended without an answer" in r.getMessage() for r in caplog.records
    )
    assert_one_checkpoint_per_step(service, run)


def test_a_service_that_refuses_the_second_copy_stops_the_run_and_resume_finishes_it(
    reference: tuple[list[dict[str, Any]], Any],
    service: FakeTinkerService,
    model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected_metrics, expected_weights = reference
    service.http.guard = "refuse"
    service.inject_http("optim_step", "lost answer", after="step_000001")
    run = tmp_path / "run"
    config = run_file(tmp_path, model_dir)
    assert main(["train", str(config), *SHORT, "--run-dir", str(run)]) == 1
    err = capsys.readouterr().err
    stop = err.strip().splitlines()[-1]
    assert "Traceback" not in err and stop.startswith("debate: error: backend 'tinker': "), err
    assert "optim_step" in stop and "already received" in stop, stop
    assert stop.endswith(f"continue from the last checkpoint with: debate train --resume {run}"), stop
    assert "step 2 failed before it was recorded; last checkpoint: step 1" in err
    service.reset()
    service.http.guard = "replay"
    assert main(["train", str(config), *SHORT, "--resume", str(run)]) == 0
    assert without_retries(stable_metrics(run)) == expected_metrics
    np.testing.assert_array_equal(final_weights(service, run), expected_weights)


def test_without_the_guard_the_update_is_applied_twice(
    reference: tuple[list[dict[str, Any]], Any], service: FakeTinkerService, model_dir: Path, tmp_path: Path
) -> None:
    """The negative control: the checks above see a doubled step. A client cannot see it: SDK 0.38
    reports no step counter (``get_info``, ``optim_step``'s answer), so this is the service's to
    prevent (docs/limits.md)."""
    _, expected_weights = reference
    service.http.guard = "off"
    service.inject_http("optim_step", "lost answer", after="step_000001")
    run = tmp_path / "run"
    assert main(["train", str(run_file(tmp_path, model_dir)), *SHORT, "--run-dir", str(run)]) == 0
    assert any("seq_id" in v and "expected" in v for v in service.violations), service.violations
    assert not np.array_equal(final_weights(service, run), expected_weights)


@pytest.mark.parametrize("kind", ["save_weights", "save_weights_for_sampler"])
def test_a_save_that_failed_but_was_saved_is_not_saved_again(
    kind: str,
    reference: tuple[list[dict[str, Any]], Any],
    service: FakeTinkerService,
    model_dir: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The service saves step 2's checkpoint but answers that the save failed (a server error):
    debate-core's retry first asks the service whether it holds the save, and takes it."""
    expected_metrics, _ = reference
    name = "step_000002" if kind == "save_weights" else "step_000002_sampler"
    service.inject(kind, "server", name=name, saved_anyway=True)
    run = tmp_path / "run"
    assert main(["train", str(run_file(tmp_path, model_dir)), *SHORT, "--run-dir", str(run)]) == 0
    assert [i.kind for i in service.failed] == [kind]
    assert len(service.requests("list_checkpoints")) == 1
    assert sum(1 for e in service.requests(kind) if e.detail["name"] == name) == 1
    assert without_retries(stable_metrics(run)) == expected_metrics
    assert any(f"{name}: the failed attempt saved it after all" in r.getMessage() for r in caplog.records)
    assert_one_checkpoint_per_step(service, run)
