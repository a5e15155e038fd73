"""Resume equality, signals, plugin and backend failures, on the deterministic scripted backend."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from debate_core.errors import ComponentFailure
from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.manifests import latest_checkpoint
from debate_core.runtime.retries import BackendError
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import (
    SERVICES,
    final_weights,
    make_config,
    read_metrics,
    service_setup,
    train_quietly,
    without_timings,
)

train = train_quietly
stable = without_timings


def test_two_plus_resumed_two_equals_four_metric_for_metric(
    registry: Registry, tmp_path: Path, straight_run: Path
) -> None:
    # The same run, stopped by SIGTERM once the record of step 2 is written, then resumed.
    stopper = make_config("logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=2}}]")
    first = train(stopper, registry, tmp_path / "resumed")
    assert first.stopped_by == "SIGTERM" and first.iterations == 2 and first.last_checkpoint == 2
    second = train(make_config(), registry, tmp_path / "resumed", resume=True, handle_signals=False)
    assert second.iterations == 4 and second.stopped_by is None
    a = stable(read_metrics(straight_run / "metrics.jsonl"))
    b = stable(read_metrics(tmp_path / "resumed" / "metrics.jsonl"))
    assert [r["step"] for r in b] == [1, 2, 3, 4]
    assert a == b
    np.testing.assert_array_equal(final_weights(straight_run), final_weights(tmp_path / "resumed"))


def test_stop_during_sampling_abandons_the_iteration_and_resumes_it(
    registry: Registry, tmp_path: Path, straight_run: Path
) -> None:
    calls = {"n": 0}

    def interrupt_in_third_iteration(method: str) -> None:
        # iteration 3 starts after two updates: signal at its first sample call
        if method == "optim_step":
            calls["n"] += 1
        if method == "sample" and calls["n"] == 2:
            calls["n"] += 1
            os.kill(os.getpid(), signal.SIGINT)

    config = make_config("training.save_every=0")
    with service_setup(lambda service: setattr(service, "on_call", interrupt_in_third_iteration)):
        stopped = asyncio.run(run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off")))
    assert stopped.stopped_by == "SIGINT" and stopped.iterations == 2 and stopped.last_checkpoint == 2
    assert [r["step"] for r in read_metrics(tmp_path / "run" / "metrics.jsonl")] == [1, 2]
    train(config, registry, tmp_path / "run", resume=True, handle_signals=False)
    assert stable(read_metrics(tmp_path / "run" / "metrics.jsonl")) == stable(
        read_metrics(straight_run / "metrics.jsonl")
    )


def test_a_raising_reward_names_plugin_and_debate_after_a_checkpoint(registry: Registry, tmp_path: Path) -> None:
    config = make_config("reward.name=exploding", "reward.options.calls_before=4", "training.save_every=0")
    with pytest.raises(ComponentFailure) as caught:
        train(config, registry, tmp_path / "run", handle_signals=False)
    message = str(caught.value)
    assert "reward plugin 'exploding'" in message and "ZeroDivisionError" in message
    assert "debate 'step2-debate1'" in message and "problem 'train-" in message
    checkpoint = latest_checkpoint(tmp_path / "run" / "checkpoints")
    assert checkpoint is not None and checkpoint.step == 1 and checkpoint.reason.startswith("failure")
    resumed = train(make_config("training.save_every=0"), registry, tmp_path / "run", resume=True, handle_signals=False)
    assert resumed.iterations == 4
    assert [r["step"] for r in read_metrics(tmp_path / "run" / "metrics.jsonl")] == [1, 2, 3, 4]


def test_a_raising_grader_is_named_with_the_debate(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(ComponentFailure, match=r"debate 'step1-debate\d'.*grader plugin 'broken' raised KeyError"):
        train(make_config("grader.name=broken"), registry, tmp_path / "run", handle_signals=False)
    assert latest_checkpoint(tmp_path / "run" / "checkpoints") is None  # nothing trained: no checkpoint of step 0


def test_a_raising_dataset_is_named(registry: Registry, tmp_path: Path) -> None:
    expected = "dataset plugin 'tiny_sums' raised OSError: disk on fire, in problems on split 'train'"
    with pytest.raises(ComponentFailure, match=expected):
        train(make_config("dataset.options.raise_on=train"), registry, tmp_path / "run", handle_signals=False)


def test_transient_backend_errors_are_retried_without_changing_anything(
    registry: Registry, tmp_path: Path, straight_run: Path
) -> None:
    def flaky(service: Any) -> None:
        service.fail_next["sample"] = [ConnectionError("reset by peer"), TimeoutError("slow")]
        service.fail_next["save_weights_and_get_sampling_client"] = [ConnectionError("reset")]

    with service_setup(flaky):
        outcome = train(
            make_config("training.backend_retry_delay_s=0"), registry, tmp_path / "run", handle_signals=False
        )
    assert outcome.iterations == 4
    assert not SERVICES[-1].fail_next["sample"] and not SERVICES[-1].fail_next["save_weights_and_get_sampling_client"]
    flaky_metrics = stable(read_metrics(tmp_path / "run" / "metrics.jsonl"))
    # the three failed attempts are counted (docs/limits.md#a-service-that-fails-mid-run); nothing else differs
    assert sum(int(record.pop("backend/retries", 0)) for record in flaky_metrics) == 3
    assert flaky_metrics == stable(read_metrics(straight_run / "metrics.jsonl"))


def test_a_backend_that_stays_down_stops_the_run_naming_it(registry: Registry, tmp_path: Path) -> None:
    def down(service: Any) -> None:
        service.fail_next["sample"] = [ConnectionError("refused")] * 100

    with service_setup(down):
        config = make_config("training.backend_retry_delay_s=0", "training.backend_retries=2")
        with pytest.raises(BackendError, match=r"backend 'scripted': sample failed after 2 attempts.*debate 'step1-"):
            train(config, registry, tmp_path / "run", handle_signals=False)
    assert not (tmp_path / "run" / "metrics.jsonl").read_text()


def test_resume_survives_a_torn_metrics_line_and_stray_temporary_files(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(make_config("training.num_iterations=2", "evaluation.num_problems=0"), registry, run, handle_signals=False)
    # what a SIGKILL can leave: a half-written record, a temporary manifest, a backend state without manifest
    with (run / "metrics.jsonl").open("a") as handle:
        handle.write('{"step": 3, "phase": "rl", "optim/l')
    (run / "checkpoints" / ".step_000003.json.123.tmp").write_text("{")
    (run / "checkpoints" / "step_000009.json").write_text('{"format": 1, "step": 9')
    outcome = train(make_config("evaluation.num_problems=0"), registry, run, resume=True, handle_signals=False)
    assert outcome.iterations == 4
    records = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    assert json.loads((run / "summary.json").read_text())["iterations"] == 4
