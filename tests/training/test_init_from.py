"""``model.init_from`` starts a new run from trained weights (docs/training.md#starting-from-a-trained-policy),
here on the local backend with the embedded ``debate-tiny`` model, LoRA and full fine-tuning."""

from __future__ import annotations

import asyncio
import html
import tomllib
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main
from debate_core.config import load_run_config
from debate_core.plugin import get_registry
from debate_core.runtime.manifests import read_checkpoint
from debate_core.runtime.session import open_session_async
from debate_core.training.policy_weights import resolve_init_from
from tests.backends.local.one_iteration import ONE_ITERATION

pytest.importorskip("torch")
pytest.importorskip("transformers")

SHORT = [*ONE_ITERATION, "backend.options.max_batch_rows=1"]


def trained_weights(config_overrides: list[str], state_path: str | None) -> dict[str, Any]:
    """The trainable weights a training session opens with (a new run's starting point)."""

    async def opened() -> dict[str, Any]:
        config = load_run_config(None, config_overrides, registry=get_registry())
        session = await open_session_async(config, get_registry(), state_path=state_path, with_optimizer=False)
        try:
            module = session.require_training_client().module  # type: ignore[attr-defined]
            return {n: p.detach().clone() for n, p in module.named_parameters() if p.requires_grad}
        finally:
            await session.close()

    return asyncio.run(opened())


@pytest.mark.parametrize("rank", [0, 4])
def test_a_new_run_starts_from_the_weights_of_another(
    rank: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    first, second = tmp_path / "first", tmp_path / "second"
    lora = [*SHORT, f"model.lora_rank={rank}"]
    assert main(["train", str(run_file), *lora, "--run-dir", str(first)]) == 0
    state = read_checkpoint(first / "checkpoints" / "step_000001.json").backend_state

    capsys.readouterr()
    assert main(["train", str(run_file), *SHORT, f"model.init_from={first}", "--run-dir", str(second)]) == 0
    assert f"starting from the trained weights {state}" in capsys.readouterr().err
    recorded = tomllib.loads((second / "config.toml").read_text(encoding="utf-8"))
    assert recorded["model"]["init_from"] == state  # the run directory, resolved to the weights it held
    assert main(["report", str(second)]) == 0
    page = (second / "report.html").read_text(encoding="utf-8")
    assert html.escape(f'init_from = "{state}"') in page  # the report shows the resolved config
    assert (second / "checkpoints" / "step_000001.json").is_file()

    config = resolve_init_from(load_run_config(None, [*SHORT, f"model.init_from={first}"], registry=get_registry()))
    start = trained_weights(SHORT, config.model.init_from)
    from safetensors.torch import load_file

    saved = load_file(str(Path(state) / "weights.safetensors"))
    assert start.keys() == saved.keys() and all(torch.equal(start[k], saved[k]) for k in saved)
    base = trained_weights(lora, None)
    assert any(not torch.equal(base[k], saved[k]) for k in saved)  # training moved them

    capsys.readouterr()
    other_model = [*SHORT, "model.base_model=embedded:debate-micro", f"model.init_from={first}"]
    assert main(["train", str(run_file), *other_model, "--run-dir", str(tmp_path / "third")]) == 1
    assert "was trained from 'embedded:debate-tiny', not 'embedded:debate-micro'" in capsys.readouterr().err


def test_init_from_names_what_it_cannot_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    for value, expected in [
        (str(tmp_path / "nowhere"), "model.init_from"),
        ("tinker://run-1/sampler_weights/step_000004_sampler", "names weights saved for sampling"),
    ]:
        target = tmp_path / "new"
        assert main(["train", str(run_file), *SHORT, f"model.init_from={value}", "--run-dir", str(target)]) == 1
        err = capsys.readouterr().err
        assert expected in err and len(err.strip().splitlines()) == 1, err
        assert not target.exists()  # nothing left to block a retry
