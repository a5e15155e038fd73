"""Asynchronous off-policy rollouts on the scripted backend (docs/training.md#asynchronous-rollouts):
the sampler that sampled a batch is the one whose logprobs its Datums carry, so the importance
ratio corrects for it; checkpoints are barriers, so a run killed and resumed equals the
uninterrupted one in every metric."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from debate_core.plugin import Registry
from tests.doubles import scripted_backend
from tests.doubles.scripted_backend import ScriptedTrainingClient, token_logprobs
from tests.training.killed_runs import kill_after_checkpoint
from tests.training.trainer_harness import (
    BASE_OVERRIDES,
    SERVICES,
    make_config,
    read_metrics,
    train_quietly,
    without_timings,
)

ASYNC = ("training.max_steps_off_policy=1", "evaluation.num_problems=0", "training.num_iterations=5")


@pytest.fixture
def snapshots(monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """The weights of every sampling client the trainer takes, in order (the first: the start)."""
    taken: list[np.ndarray] = []
    original = ScriptedTrainingClient.save_weights_and_get_sampling_client

    def recording(self: ScriptedTrainingClient, name: str | None = None) -> Any:
        taken.append(self.weights.copy())
        return original(self, name)

    monkeypatch.setattr(ScriptedTrainingClient, "save_weights_and_get_sampling_client", recording)
    return taken


@pytest.fixture
def trained_on(monkeypatch: pytest.MonkeyPatch, snapshots: list[np.ndarray]) -> list[tuple[int, list[Any]]]:
    """Each ``forward_backward``'s Datums, with how many sampling clients had been taken by then
    (``n``: the trainer holds the weights of the ``n - 1``-th update)."""
    sent: list[tuple[int, list[Any]]] = []
    original = ScriptedTrainingClient.forward_backward

    def recording(self: ScriptedTrainingClient, data: list[Any], *args: Any, **kwargs: Any) -> Any:
        sent.append((len(snapshots), list(data)))
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(ScriptedTrainingClient, "forward_backward", recording)
    return sent


def sampled_logprobs(datum: Any) -> tuple[np.ndarray, np.ndarray]:
    """The action positions of a Datum and the sampler logprobs it carries there."""
    carried = np.asarray(datum.loss_fn_inputs["logprobs"].data, dtype=np.float32)
    advantages = np.asarray(datum.loss_fn_inputs["advantages"].data)
    positions = np.flatnonzero((carried != 0) | (advantages != 0))
    return positions, carried[positions]


def logprobs_under(weights: np.ndarray, datum: Any, positions: np.ndarray) -> np.ndarray:
    inputs = datum.model_input.to_ints()
    targets = [int(t) for t in datum.loss_fn_inputs["target_tokens"].data]
    return token_logprobs(weights, inputs, targets).astype(np.float32)[positions]


def test_an_off_policy_batch_carries_the_logprobs_of_the_older_sampler_that_sampled_it(
    registry: Registry, tmp_path: Path, snapshots: list[np.ndarray], trained_on: list[tuple[int, list[Any]]]
) -> None:
    config = make_config(*ASYNC, "training.save_every=0")
    train_quietly(config, registry, tmp_path / "run")
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["async/staleness"] for r in records] == [0, 1, 1, 1, 1]
    assert trained_on, "nothing was trained"
    checked = 0
    for taken, datums in trained_on:
        iteration = taken - 1  # the trainer holds the weights of this many updates
        sampler = snapshots[max(iteration - 1, 0)]  # batch i is sampled by the weights after i - 1 updates
        for datum in datums:
            positions, carried = sampled_logprobs(datum)
            np.testing.assert_array_equal(carried, logprobs_under(sampler, datum, positions))
            if iteration >= 1:  # the trainer's own policy differs: the ratio is not 1
                assert not np.array_equal(carried, logprobs_under(snapshots[iteration], datum, positions))
            checked += 1
    assert checked
    stale = [r for r in records if r["async/staleness"] == 1 and "optim/kl_sample_train_v2" in r]
    assert stale and all(r["optim/kl_sample_train_v2"] > 0 for r in stale)


def test_on_policy_batches_have_a_sampler_equal_to_the_trainer(registry: Registry, tmp_path: Path) -> None:
    config = make_config("evaluation.num_problems=0", "training.num_iterations=3", "training.save_every=0")
    train_quietly(config, registry, tmp_path / "run")
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["async/staleness"] for r in records] == [0, 0, 0]
    assert all(r.get("optim/kl_sample_train_v2", 0.0) == 0.0 for r in records)


def test_a_checkpoint_is_a_barrier_the_batch_after_it_is_sampled_by_its_weights(
    registry: Registry, tmp_path: Path
) -> None:
    config = make_config(*ASYNC, "training.save_every=2")
    train_quietly(config, registry, tmp_path / "run")
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["async/staleness"] for r in records] == [0, 1, 0, 1, 0]
    assert all(r["async/stale_dropped"] == 0 for r in records)


def test_sampling_ahead_changes_what_is_learned_only_through_the_older_sampler(
    registry: Registry, tmp_path: Path
) -> None:
    sync = make_config("evaluation.num_problems=0", "training.num_iterations=5", "training.save_every=0")
    train_quietly(sync, registry, tmp_path / "sync")
    train_quietly(make_config(*ASYNC, "training.save_every=0"), registry, tmp_path / "async")
    on, off = read_metrics(tmp_path / "sync" / "metrics.jsonl"), read_metrics(tmp_path / "async" / "metrics.jsonl")
    # the first batch is sampled by the start's weights either way (the tokens counted by then
    # include the batch sampled ahead)
    first = [{k: v for k, v in r.items() if not k.startswith(("tokens/", "async/"))} for r in (on[0], off[0])]
    assert without_timings(first[:1]) == without_timings(first[1:])
    assert without_timings(on)[1:] != without_timings(off)[1:]


@pytest.mark.slow  # a subprocess
def test_an_async_run_killed_right_after_a_checkpoint_resumes_to_the_uninterrupted_run(
    registry: Registry, tmp_path: Path
) -> None:
    overrides = [*ASYNC, "training.num_iterations=6", "training.save_every=3", "training.max_steps_off_policy=2"]
    killed, run_file = tmp_path / "killed", tmp_path / "run.toml"
    run_file.write_text('[run]\nname = "async"\n')
    kill_after_checkpoint(run_file, [*BASE_OVERRIDES, *overrides], killed, step=3)  # batches in flight
    SERVICES.clear()
    resumed = train_quietly(make_config(*overrides), registry, killed, resume=True)
    assert resumed.iterations == 6
    train_quietly(make_config(*overrides), registry, tmp_path / "straight")
    after, straight = read_metrics(killed / "metrics.jsonl"), read_metrics(tmp_path / "straight" / "metrics.jsonl")
    assert [r["async/staleness"] for r in straight] == [0, 1, 2, 0, 1, 2]
    assert without_timings(after) == without_timings(straight)


def test_the_scripted_sampler_is_frozen_at_its_snapshot() -> None:
    """What the tests above rely on: a sampling client keeps the weights it was made from."""
    service = scripted_backend.ScriptedServiceClient(lambda prompt: ["x"])
    client = ScriptedTrainingClient(service, "scripted", np.zeros((4, 4)))
    sampler = client.save_weights_and_get_sampling_client().result()
    client.weights += 1.0
    assert np.array_equal(sampler._weights, np.zeros((4, 4)))
