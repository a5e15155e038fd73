"""Nothing non-finite reaches the weights (docs/training.md#checkpoints-stops-faults): rewards
beyond the reward bound, non-finite options, and an update whose loss or gradient norm is not
finite stop the run with one line, the last good checkpoint intact."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tinker import types

from debate_core.config import load_run_config
from debate_core.errors import ConfigError
from debate_core.plugin import REWARD_BOUND, Registry, get_registry
from debate_core.plugin import reward_result_problems as result_problems
from debate_core.records import RewardResult
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.manifests import latest_checkpoint
from debate_core.testing.synthetic import TurnSpec, synthetic_debate
from debate_core.training.kernel.chunked_update import NonFiniteUpdateError
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.doubles.scripted_backend import ScriptedFuture, ScriptedTrainingClient
from tests.training.trainer_harness import make_config


@pytest.mark.parametrize("value", [1e308, -1e308, REWARD_BOUND * 1.5, float("inf"), float("nan")])
def test_rewards_beyond_the_bound_break_the_reward_contract(value: float) -> None:
    debate = synthetic_debate(2, [TurnSpec(), TurnSpec()])
    problems = result_problems(debate, RewardResult(agent_rewards=(value, 0.0)))
    assert problems and "agent rewards not finite or beyond" in problems[0]
    streamed = RewardResult(agent_rewards=(0.0, 0.0), step_streams={"generator": ((value,), (0.0,))})
    assert any("beyond" in p for p in result_problems(debate, streamed))


def test_rewards_at_the_bound_are_accepted() -> None:
    debate = synthetic_debate(2, [TurnSpec(), TurnSpec()])
    assert result_problems(debate, RewardResult(agent_rewards=(REWARD_BOUND, -REWARD_BOUND))) == []


@pytest.mark.parametrize(
    "override",
    [
        "training.learning_rate=inf",
        "training.learning_rate=-inf",
        "debate.temperature=inf",
        "reward.options.w_peer=nan",
    ],
)
def test_non_finite_options_are_refused_naming_the_key(override: str) -> None:
    key = override.split("=")[0]
    with pytest.raises(ConfigError, match=f"{key}: expected a finite number"):
        load_run_config(None, ['reward = { name = "gt_mix" }', override], registry=get_registry())


def test_a_non_finite_update_stops_before_its_checkpoint(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = ScriptedTrainingClient.optim_step
    calls = {"n": 0}

    def optim_step(self: ScriptedTrainingClient, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        future = original(self, *args, **kwargs)
        if calls["n"] == 3:  # the update of step 3 reports a NaN gradient norm, as a service would
            future.result()
            return ScriptedFuture(
                self._service.log, "optim_step", types.OptimStepResponse(metrics={"grad_norm:mean": float("nan")})
            )
        return future

    monkeypatch.setattr(ScriptedTrainingClient, "optim_step", optim_step)
    run = tmp_path / "run"
    config = make_config("training.save_every=1")
    with pytest.raises(NonFiniteUpdateError, match=r"update of step 3 is not finite .*grad_norm:mean = nan.*step 2"):
        asyncio.run(run_training(config, registry, RunDirectory(run), progress=Progress("off"), handle_signals=False))
    checkpoint = latest_checkpoint(run / "checkpoints")
    assert checkpoint is not None and checkpoint.step == 2
