"""The Tinker service failing after a run has started (docs/limits.md#a-service-that-fails-mid-run):
every call kind (``sample``, ``forward_backward``, ``optim_step``, ``save_state``,
``save_weights_for_sampler``) meets each fault (HTTP 500, 502, 503, 429 with and without
``Retry-After``, a dropped connection, a hang) at iteration 2 of a 3-iteration run, through the
real SDK over loopback.

A fault that clears after two tries is retried by the SDK: the run goes on, its metrics and
weights equal an unfaulted run's, and the retries show in ``backend/retries`` and in one log line
each. A fault that does not clear stops the run within ``training.backend_timeout_s`` with one
line naming the call and the service's answer and the command that resumes; ``--resume`` then
ends with the unfaulted run's metrics and weights."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from debate_core.cli import main
from tests.tinker_wire.fake_service import FakeTinkerService
from tests.tinker_wire.http_faults import ENDPOINTS, FAULTS
from tests.tinker_wire.midrun import (
    LIMIT_MARGIN_S,
    LIMIT_S,
    SHORT,
    final_weights,
    shorten_sdk_backoff,
    without_retries,
)
from tests.tinker_wire.test_wire_contract import run_file, stable_metrics

CALLS = tuple(ENDPOINTS)
PERSISTENT = [
    ("sample", "500"),
    ("forward_backward", "502"),
    ("optim_step", "503"),
    ("save_state", "429 Retry-After"),
    ("save_weights_for_sampler", "429"),
    ("optim_step", "reset"),
    ("sample", "hang"),
]
"""Every call kind and every fault once, each one never clearing."""
ANSWERS = {
    "500": "HTTP 500 Internal Server Error",
    "502": "HTTP 502 Bad Gateway",
    "503": "HTTP 503 Service Unavailable",
    "429 Retry-After": "HTTP 429 Too Many Requests (Retry-After: 1)",
    "429": "HTTP 429 Too Many Requests",
    "reset": "the connection ended without an answer",
    "hang": "is the backend reachable and up?",
}
"""What the stop line says of the service's answer."""
WHAT = {
    "sample": "sample",
    "forward_backward": "the update of step 2 (forward_backward, optim_step)",
    "optim_step": "the update of step 2 (forward_backward, optim_step)",
    "save_state": "save_state('step_000002')",
    "save_weights_for_sampler": "save_weights_for_sampler",
}
"""How the stop line names the call."""


@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_that_clears_is_retried_and_changes_nothing(
    fault: str,
    reference: tuple[list[dict[str, Any]], Any],
    service: FakeTinkerService,
    model_dir: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each call kind meets ``fault`` twice at iteration 2 (its checkpoint for the saves), then the
    service answers again."""
    shorten_sdk_backoff(monkeypatch)
    expected_metrics, expected_weights = reference
    service.http.hang_s = 1.0
    for call in CALLS:
        service.inject_http(call, fault, times=2, after="step_000001")
    run = tmp_path / "run"
    config = run_file(tmp_path, model_dir)
    assert main(["train", str(config), *SHORT, "training.backend_timeout_s=120", "--run-dir", str(run)]) == 0
    assert sorted(path for path, _ in service.http.hit) == sorted(ENDPOINTS[c] for c in CALLS for _ in range(2))
    metrics = stable_metrics(run)
    assert without_retries(metrics) == expected_metrics
    np.testing.assert_array_equal(final_weights(service, run), expected_weights)
    assert sum(int(record.get("backend/retries", 0)) for record in metrics) >= 2 * len(CALLS)
    assert "backend/retries" not in metrics[0]  # iteration 1 met no fault
    said = [r.getMessage() for r in caplog.records if "the Tinker SDK sends the request again" in r.getMessage()]
    answer = ANSWERS[fault] if fault != "hang" else "the connection ended without an answer"
    for call in CALLS:
        assert any(f"POST {ENDPOINTS[call]}: {answer}" in line for line in said), (call, said)
    assert service.violations == []


@pytest.mark.parametrize(("call", "fault"), PERSISTENT, ids=[f"{c}-{f}" for c, f in PERSISTENT])
def test_a_fault_that_does_not_clear_stops_the_run_and_resume_finishes_it(
    call: str,
    fault: str,
    reference: tuple[list[dict[str, Any]], Any],
    service: FakeTinkerService,
    model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected_metrics, expected_weights = reference
    service.http.hang_s = 600.0  # released when the server stops
    service.inject_http(call, fault, times=None, after="step_000001")
    run = tmp_path / "run"
    config = run_file(tmp_path, model_dir)
    limit = f"training.backend_timeout_s={LIMIT_S}"
    assert main(["train", str(config), *SHORT, limit, "--run-dir", str(run)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    stop = err.strip().splitlines()[-1]
    assert stop.startswith("debate: error: backend 'tinker': "), err
    assert WHAT[call] in stop and ANSWERS[fault] in stop, stop
    if fault not in ("hang",):
        assert f"POST {ENDPOINTS[call]}" in stop, stop
    waited = re.search(r"no answer after (\d+) s", stop)
    assert waited is not None and LIMIT_S <= int(waited.group(1)) <= LIMIT_S + LIMIT_MARGIN_S, stop
    assert stop.endswith(f"continue from the last checkpoint with: debate train --resume {run}"), stop
    manifests = sorted(p.name for p in (run / "checkpoints").glob("step_*.json"))
    assert set(manifests) <= {"step_000001.json", "step_000002.json"}, manifests  # none past the fault

    service.reset()  # the service works again
    assert main(["train", str(config), *SHORT, "--resume", str(run)]) == 0
    assert without_retries(stable_metrics(run)) == expected_metrics
    np.testing.assert_array_equal(final_weights(service, run), expected_weights)
