"""``model.init_from`` on the ``tinker`` backend, on the wire: a new run loads the other run's
training state through the SDK's ``create_training_client_from_state`` (weights, no optimizer)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from debate_core.cli import main
from debate_core.plugin import Registry
from debate_core.runtime.manifests import read_checkpoint
from tests.tinker_wire.fake_service import FakeTinkerService
from tests.tinker_wire.test_wire_contract import run_file

SHORT = [
    "warmstart.enabled=false",
    "training.num_iterations=1",
    "training.batch_size=2",
    "debate.max_rounds=1",
    "evaluation.num_problems=0",
]


def test_a_new_run_loads_the_training_state_of_another(
    service: FakeTinkerService, registry: Registry, model_dir: Path, tmp_path: Path
) -> None:
    config = run_file(tmp_path, model_dir)
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["train", str(config), *SHORT, "--run-dir", str(first)]) == 0
    state = read_checkpoint(first / "checkpoints" / "step_000001.json").backend_state
    assert state.startswith("tinker://") and "/weights/" in state
    service.reset()
    assert main(["train", str(config), *SHORT, f"model.init_from={first}", "--run-dir", str(second)]) == 0
    (load,) = service.requests("load_weights")
    assert load.detail["request"].path == state and not load.detail["request"].optimizer
    assert tomllib.loads((second / "config.toml").read_text(encoding="utf-8"))["model"]["init_from"] == state
    assert service.requests("forward_backward") and service.violations == []
