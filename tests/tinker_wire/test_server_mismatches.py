"""A Tinker-compatible server that answers differently from the Tinker service
(docs/own-gpus.md#what-the-backend-makes-of-a-servers-answers), on the fake service answering
as SkyRL 0.4.0's Tinker API does (``FakeTinkerService.quirks``): a reply without a field the SDK
needs is one line naming the server, ``forward_backward`` without metrics still gives the run
its losses; and a server answering only 5xx for longer than
``backend.options.server_error_limit_s`` ends the wait in one line, while a slow one keeps
``training.backend_timeout_s``."""

from __future__ import annotations

import math
import subprocess
import time
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry
from tests.tinker_wire.fake_service import FakeTinkerService
from tests.tinker_wire.test_backend_down import HANG_S, command, environment, failing_server, silent_server
from tests.tinker_wire.test_wire_contract import run_file, stable_metrics

SHORT = [
    "training.num_iterations=1",
    "training.batch_size=2",
    "debate.max_rounds=1",
    "evaluation.num_problems=0",
]
pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

LIMIT_S = 3
"""``backend.options.server_error_limit_s`` of the give-up tests."""
MARGIN_S = 20
"""How much longer than the bound a give-up may take on a loaded machine (the command's start included)."""


def losses(run: Path) -> list[float]:
    """Each step's loss: the warm-start's cross-entropy per token, then each RL step's ``loss:sum``."""
    found: list[float] = []
    for record in stable_metrics(run):
        value = record.get("warmstart/loss_per_token", record.get("optim/loss:sum"))
        assert isinstance(value, float), record
        found.append(value)
    return found


def test_forward_backward_without_metrics_still_gives_the_losses(
    service: FakeTinkerService, registry: Registry, model_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The warm-start's cross-entropy and the RL loss, computed from the logprobs the server returns,
    equal what a server that reports ``loss:sum`` reports; the log says so once."""
    config = run_file(tmp_path, model_dir)
    assert main(["train", str(config), *SHORT, "--run-dir", str(tmp_path / "reported")]) == 0
    reported = losses(tmp_path / "reported")
    service.reset()
    service.quirks.add("no forward_backward metrics")
    assert main(["train", str(config), *SHORT, "--run-dir", str(tmp_path / "computed")]) == 0
    computed = losses(tmp_path / "computed")
    assert len(reported) == 2 and all(math.isfinite(x) and x != 0.0 for x in reported), reported
    assert computed == pytest.approx(reported, rel=1e-5)
    said = [r.getMessage() for r in caplog.records if "returns no forward_backward metrics" in r.getMessage()]
    assert len(said) <= 1  # once per process (an earlier test of the session may have said it)


def test_a_reply_without_a_field_the_sdk_needs_is_one_line(
    service: FakeTinkerService, registry: Registry, model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service.quirks.add("no sample_sequence_ids")
    config = run_file(tmp_path, model_dir)
    code = main(["train", str(config), *SHORT, "warmstart.enabled=false", "--run-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and "Traceback" not in err, err
    assert "answers sample without sample_sequence_ids, which the tinker SDK 0.38.0 requires" in lines[-1], lines[-1]
    assert "the server at http://127.0.0.1:" in lines[-1]


def _train(url: str, tmp_path: Path, overrides: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    config = tmp_path / "run.toml"
    config.write_text(
        '[backend]\nname = "tinker"\n[model]\nbase_model = "Qwen/Qwen3-8B"\nlora_rank = 8\n'
        "[training]\nnum_iterations = 1\nbackend_retry_delay_s = 0.1\n[warmstart]\nenabled = false\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    done = subprocess.run(
        [*command("train", config, tmp_path), *overrides],
        env=environment(url, tmp_path),
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    return done, time.monotonic() - started


def test_a_server_answering_only_errors_ends_the_run_at_the_bound(tmp_path: Path) -> None:
    """HTTP 500 to everything, with the default ten-minute wait: the run ends after the bound, in
    one line naming the server, its last answer and the option."""
    with failing_server() as url:
        done, took = _train(url, tmp_path, [f"backend.options.server_error_limit_s={LIMIT_S}"])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    last = lines[-1]
    assert last.startswith("debate: error: backend 'tinker': create the training client: "), last
    assert f"the server at {url} (TINKER_BASE_URL={url}) has answered nothing but server errors for" in last
    assert "HTTP 500 Internal Server Error" in last
    assert f"(backend.options.server_error_limit_s = {LIMIT_S})" in last
    assert took < LIMIT_S + MARGIN_S, took


def test_a_slow_server_keeps_the_configured_wait(tmp_path: Path) -> None:
    """No answer at all is slow, not failing: the bound on server errors does not end the wait,
    ``training.backend_timeout_s`` does."""
    timeout_s = LIMIT_S + 3
    with silent_server() as url:
        done, took = _train(
            url, tmp_path, ["backend.options.server_error_limit_s=1", f"training.backend_timeout_s={timeout_s}"]
        )
    last = [line for line in done.stderr.splitlines() if line.strip()][-1]
    assert done.returncode == 1, done.stderr
    assert "server errors" not in last, last
    assert f"(training.backend_timeout_s = {timeout_s})" in last and "no answer after" in last, last
    assert took >= timeout_s


def test_a_bound_of_zero_never_gives_up_on_errors(tmp_path: Path) -> None:
    """``server_error_limit_s = 0``: the SDK's retries run for the configured wait, as before."""
    timeout_s = LIMIT_S + 2
    with failing_server() as url:
        done, _ = _train(
            url, tmp_path, ["backend.options.server_error_limit_s=0", f"training.backend_timeout_s={timeout_s}"]
        )
    last = [line for line in done.stderr.splitlines() if line.strip()][-1]
    assert done.returncode == 1 and "server errors" not in last, last
    assert f"training.backend_timeout_s = {timeout_s}" in last or "failed after" in last, last
