"""Metric sinks: JSON lines built in; wandb and tensorboard only when their packages are installed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from debate_core.builtin.metric_sinks import (
    JsonlSinkOptions,
    TensorboardOptions,
    WandbOptions,
    build_jsonl,
    build_tensorboard,
    build_wandb,
)
from debate_core.errors import PluginError


def test_jsonl_writes_one_line_per_step_and_nulls_non_finite(tmp_path: Path) -> None:
    sink = build_jsonl(JsonlSinkOptions())(tmp_path)
    sink.write(0, {"phase": "rl", "loss": 1.5, "kl": float("nan")})
    sink.write(1, {"phase": "rl", "loss": 0.5, "kl": float("inf")})
    sink.close()
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"step": 0, "phase": "rl", "loss": 1.5, "kl": None},
        {"step": 1, "phase": "rl", "loss": 0.5, "kl": None},
    ]


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="wandb is installed")
def test_wandb_without_the_package_says_how_to_install_it() -> None:
    with pytest.raises(PluginError, match=r"pip install wandb"):
        build_wandb(WandbOptions())


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is not None, reason="tensorboard is installed")
def test_tensorboard_without_the_package_says_how_to_install_it() -> None:
    with pytest.raises(PluginError, match=r"pip install tensorboard"):
        build_tensorboard(TensorboardOptions())


def test_the_builtin_sinks_are_registered_plugins(tmp_path: Path) -> None:
    from debate_core.plugin import get_registry

    registry = get_registry()
    assert {"jsonl", "wandb", "tensorboard"} <= set(registry.names("metric_sink"))
    factory = registry.build("metric_sink", "jsonl", {"filename": "m.jsonl"}, "logging.sinks[0].options")
    sink = factory(tmp_path)
    sink.write(0, {"x": 1.0})
    sink.close()
    assert json.loads((tmp_path / "m.jsonl").read_text()) == {"step": 0, "x": 1.0}
