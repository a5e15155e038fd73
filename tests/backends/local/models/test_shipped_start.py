"""A trained checkpoint shipped as an embedded model (``debate_core.tools.embed_checkpoint``): the main
job's start, ``embedded:debate-tiny-subtraction3``, is E8a's step 400, and any full fine-tune of an
embedded model ships bit for bit (docs/local-backend.md#embedded-models)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from debate_core.backends.local.models import loading as models
from debate_core.backends.local.models import pretrained as packaged
from debate_core.backends.local.models.loading import load_base
from debate_core.backends.local.saved_states import read_state
from debate_core.cli import main
from debate_core.errors import ConfigError
from debate_core.runtime.manifests import read_checkpoint
from debate_core.tools.embed_checkpoint import main as embed_main
from debate_core.tools.embed_checkpoint import ship_checkpoint
from tests.backends.local.one_iteration import ONE_ITERATION

CPU = torch.device("cpu")
MAIN_JOB_START = "debate-tiny-subtraction3"
SPECS = resources.files("debate_core.backends.local").joinpath("data/embedded_models.json")
MICRO_RUN = [*ONE_ITERATION, "model.base_model=embedded:debate-micro"]


def _module_weights(base_model: str) -> dict[str, torch.Tensor]:
    module, _, _ = load_base(base_model, device=CPU, dtype=torch.float32, init_seed=0, base_weights="pretrained")
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def test_the_main_jobs_start_is_the_warm_start_e8a_at_step_400() -> None:
    specs = json.loads(SPECS.read_text("utf-8"))
    shape = {k: v for k, v in specs["debate-tiny"].items() if k != "description"}
    assert {k: v for k, v in specs[MAIN_JOB_START].items() if k != "description"} == shape
    with resources.as_file(packaged.pretrained_file(MAIN_JOB_START)) as path, safe_open(str(path), "pt") as file:
        metadata = file.metadata()
        shipped = {key: file.get_tensor(key) for key in file.keys()}  # noqa: SIM118
    assert metadata["trained_from"] == "embedded:debate-tiny" and metadata["optimizer_steps"] == "400"
    assert "examples/subtraction3-warmstart.toml" in metadata["recipe"]
    assert all(t.dtype == torch.float32 for t in shipped.values())
    start, base = _module_weights(f"embedded:{MAIN_JOB_START}"), _module_weights("embedded:debate-tiny")
    assert all(torch.equal(start[key], tensor) for key, tensor in shipped.items())
    assert torch.equal(start["lm_head.weight"], start["model.embed_tokens.weight"])  # tied, as trained
    assert not torch.equal(start["model.embed_tokens.weight"], base["model.embed_tokens.weight"])


def _train(tmp_path: Path, *overrides: str) -> str:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    assert main(["train", str(run_file), *MICRO_RUN, *overrides, "--run-dir", str(run)]) == 0
    return str(run / "checkpoints" / "step_000001.json")


def test_a_full_fine_tune_ships_bit_for_bit_and_loads_as_an_embedded_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _train(tmp_path)
    specs_path, weights_out = tmp_path / "embedded_models.json", tmp_path / "micro-trained.safetensors"
    specs_path.write_text(SPECS.read_text("utf-8"), encoding="utf-8")
    ship_checkpoint(
        manifest,
        "micro-trained",
        description="one step",
        recipe="a test",
        weights_out=weights_out,
        specs_path=specs_path,
    )
    state = read_state(read_checkpoint(Path(manifest)).backend_state, with_optimizer=False)
    written = load_file(str(weights_out))
    assert written.keys() == state.weights.keys()
    assert all(torch.equal(written[k], state.weights[k]) for k in written)
    specs = json.loads(specs_path.read_text("utf-8"))
    assert specs["micro-trained"] == {**specs["debate-micro"], "description": "one step"}

    monkeypatch.setattr(
        models, "embedded_specs", lambda: {n: models.EmbeddedModelSpec(name=n, **f) for n, f in specs.items()}
    )
    monkeypatch.setattr(
        packaged, "pretrained_file", lambda name: weights_out if name == "micro-trained" else tmp_path / "none"
    )
    loaded = _module_weights("embedded:micro-trained")
    assert all(torch.equal(loaded[k], state.weights[k]) for k in state.weights)


def test_adapters_are_refused(tmp_path: Path) -> None:
    manifest = _train(tmp_path, "model.lora_rank=2")
    with pytest.raises(ConfigError, match=r"holds LoRA adapters, not every weight"):
        ship_checkpoint(
            manifest, "x", description="", recipe="", weights_out=tmp_path / "x.safetensors", specs_path=tmp_path / "s"
        )
    assert not (tmp_path / "x.safetensors").exists()


def test_a_bad_checkpoint_or_name_is_one_line_and_a_non_zero_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, specs = tmp_path / "x.safetensors", tmp_path / "specs.json"
    common = ["--description", "d", "--recipe", "r", "--out", str(out), "--specs", str(specs)]
    assert embed_main([str(tmp_path / "missing"), "x", *common]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("embed_checkpoint: error: ") and "no such file" in err and "\n" not in err
    manifest = _train(tmp_path)
    assert embed_main([manifest, "debate-micro", *common]) == 1
    assert "is its own base model" in capsys.readouterr().err
    assert not out.exists()
