"""Pipelined updates, zero-advantage skipping, learning-rate schedules and loss options."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pytest
from tinker import types

from debate_core.config.sections import TrainingSettings
from debate_core.config.structuring import structure
from debate_core.errors import ConfigError
from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.training.kernel.chunked_update import split_chunks, train_chunks
from debate_core.training.kernel.datum import AssembledDatum, TokenSequence, shift_to_datum
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from debate_core.training.schedule import learning_rate_at
from tests.doubles.scripted_backend import ScriptedServiceClient, base_weights
from tests.training.trainer_harness import SERVICES, make_config, read_metrics


def datum(advantage: float, tokens: tuple[int, ...] = (1, 2, 3, 4)) -> AssembledDatum:
    n = len(tokens)
    made = shift_to_datum(
        TokenSequence(tokens, (0.0,) + (-1.0,) * (n - 1), (0.0,) + (advantage,) * (n - 1), (0.0,) + (1.0,) * (n - 1))
    )
    assert made is not None
    return made


def test_the_next_chunk_is_submitted_before_the_current_result_is_awaited() -> None:
    service = ScriptedServiceClient(lambda prompt: ["x"])
    client = service.create_lora_training_client("m").result()
    service.log.clear()
    datums = [datum(1.0), datum(-1.0), datum(0.5), datum(2.0), datum(-0.5)]
    update = asyncio.run(
        train_chunks(
            client,
            datums,
            loss_fn="importance_sampling",
            loss_fn_config=None,
            adam_params=types.AdamParams(learning_rate=0.1),
            num_substeps=3,
        )
    )
    events = [(kind, label.split("#")[0]) for kind, label in service.log]
    fb, opt = "forward_backward", "optim_step"
    assert events == [
        ("submit", fb),
        ("submit", opt),
        ("submit", fb),
        ("submit", opt),  # chunk 2 goes in before chunk 1 is read
        ("result", fb),
        ("result", opt),
        ("submit", fb),
        ("submit", opt),
        ("result", fb),
        ("result", opt),
        ("result", fb),
        ("result", opt),
    ]
    submitted = [label.split(":")[0] for kind, label in service.log if kind == "submit"]
    awaited = [label for kind, label in service.log if kind == "result"]
    assert awaited == submitted  # in submission order
    assert [len(c) for c in update.chunks] == [2, 2, 1]
    assert len(update.outputs) == 3 and update.datums == datums


def test_split_chunks_keeps_order_and_drops_empty_chunks() -> None:
    items = [datum(float(i)) for i in range(1, 4)]
    assert [len(c) for c in split_chunks(items, 5)] == [1, 1, 1]
    assert [d for c in split_chunks(items, 2) for d in c] == items
    with pytest.raises(ValueError):
        split_chunks(items, 0)


def test_zero_advantage_datums_have_no_signal() -> None:
    assert not datum(0.0).has_signal()
    assert datum(1e-3).has_signal()


def test_batches_without_signal_skip_the_optimizer_step(registry: Registry, tmp_path: Path) -> None:
    config = make_config(
        "reward.name=flat", "backend.options.valid_only=true", "evaluation.num_problems=0", "training.num_iterations=2"
    )
    asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    service = SERVICES[-1]
    assert not [label for kind, label in service.log if label.startswith(("optim_step", "forward_backward"))]
    np.testing.assert_array_equal(service.training_clients[0].weights, base_weights("embedded:debate-tiny"))
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert all(r["optim/update_skipped"] == 1.0 and r["optim/num_datums_trained"] == 0 for r in records)


@pytest.mark.parametrize(
    ("schedule", "step", "expected"),
    [
        ("constant", 7, 1.0),
        ("linear", 0, 1.0),
        ("linear", 5, 0.5),
        ("linear", 9, 0.1),
        ("cosine", 0, 1.0),
        ("cosine", 5, 0.5),
        ("cosine", 10, 0.0),
    ],
)
def test_learning_rate_schedules(schedule: str, step: int, expected: float) -> None:
    assert learning_rate_at(1.0, schedule, step, 10) == pytest.approx(expected)  # type: ignore[arg-type]


def test_the_loop_follows_the_schedule_and_loss(registry: Registry, tmp_path: Path) -> None:
    config = make_config(
        "training.lr_schedule=cosine",
        "training.learning_rate=0.02",
        "training.loss_fn=ppo",
        "training.loss_fn_config={clip_low_threshold=0.9, clip_high_threshold=1.1}",
        "training.num_substeps=2",
        "evaluation.num_problems=0",
    )
    asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    service = SERVICES[-1]
    rates = [p.learning_rate for p in service.sent_adam]
    expected = [0.02 * 0.5 * (1 + math.cos(math.pi * k / 4)) for k in range(4) for _ in range(2)]
    assert rates == pytest.approx(expected)
    assert {loss for _, loss, _ in service.sent_batches} == {"ppo"}
    assert all(cfg == {"clip_low_threshold": 0.9, "clip_high_threshold": 1.1} for _, _, cfg in service.sent_batches)


def test_loss_options_are_checked_against_the_loss() -> None:
    with pytest.raises(ConfigError, match="loss importance_sampling takes no options"):
        structure({"loss_fn_config": {"clip_low_threshold": 0.8}}, TrainingSettings, "training")
    with pytest.raises(ConfigError, match="clip_low_threshold <= 1 <= clip_high_threshold"):
        structure(
            {"loss_fn": "cispo", "loss_fn_config": {"clip_low_threshold": 1.2, "clip_high_threshold": 1.5}},
            TrainingSettings,
            "training",
        )
    ok = structure({"loss_fn": "ppo", "loss_fn_config": {"clip_high_threshold": 1.3}}, TrainingSettings, "training")
    assert ok.loss_fn_config == {"clip_high_threshold": 1.3}
