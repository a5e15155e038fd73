"""``python -m debate_core.tools.export_embedded NAME DIR``: an embedded model and its tokenizer as
a Hugging Face folder that ``transformers`` loads offline, computing what the embedded model
computes (the folder a Tinker-compatible server serves, docs/own-gpus.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from debate_core.backends.local.models.loading import load_base
from debate_core.tools.export_embedded import main

pytestmark = pytest.mark.slow  # starts a subprocess

TEXT = "What is 12 + 7? <answer>19</answer>"


def test_the_folder_loads_in_transformers_and_computes_as_the_embedded_model(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tmp_path / "debate-micro"
    done = subprocess.run(
        [sys.executable, "-m", "debate_core.tools.export_embedded", "debate-micro", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote debate-micro to {folder}"
    embedded, embedded_tokenizer, _ = load_base(
        "embedded:debate-micro", device=torch.device("cpu"), dtype=torch.float32, init_seed=0
    )
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    ids = tokenizer.encode(TEXT)
    assert ids == embedded_tokenizer.encode(TEXT)
    assert tokenizer.decode(ids) == TEXT
    assert tokenizer.eos_token == embedded_tokenizer.eos_token
    with torch.no_grad():
        exported = model(torch.tensor([ids])).logits
        expected = embedded.eval()(torch.tensor([ids])).logits
    assert torch.equal(exported, expected)


def test_an_unknown_name_or_a_used_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["debate-nonesuch", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("export_embedded: error: model.base_model: no embedded model 'debate-nonesuch'"), err
    assert "\n" not in err and not (tmp_path / "a").exists()
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine", encoding="utf-8")
    assert main(["debate-micro", str(used)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"export_embedded: error: {used}: exists and is not an empty folder; name a new one", err
    assert sorted(p.name for p in used.iterdir()) == ["keep.txt"]
