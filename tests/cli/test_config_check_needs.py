"""``debate config check`` checks what the run will need (docs/config-reference.md#what-config-check-checks),
and a start that fails leaves nothing that blocks a retry."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main


def check(tmp_path: Path, capsys: pytest.CaptureFixture[str], *overrides: str) -> tuple[int, list[str]]:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    code = main(["config", "check", str(run_file), *overrides])
    captured = capsys.readouterr()
    prefix = "debate: error: "
    lines = [line.removeprefix(prefix).removeprefix(f"{run_file}: ") for line in captured.err.splitlines()]
    return code, lines if code else captured.out.splitlines()


def test_a_run_with_everything_it_needs_is_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(tmp_path, capsys) == (0, [f"{tmp_path / 'run.toml'}: ok"])


def test_a_missing_dataset_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "train.jsonl"
    code, lines = check(tmp_path, capsys, "dataset.name=jsonl", f"dataset.options.path={missing}")
    assert code == 1 and lines == [f"dataset: {missing}: no such dataset file"]
    stage = f"curriculum=[{{ dataset = {{ name = 'jsonl', options = {{ path = '{missing}' }} }}, iterations = 1 }}]"
    code, lines = check(tmp_path, capsys, stage)
    assert code == 1 and lines == [f"curriculum[0].dataset: {missing}: no such dataset file"]


def test_a_dataset_record_that_does_not_parse_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "train.jsonl"
    jsonl = ("dataset.name=jsonl", f"dataset.options.path={data}", "dataset.options.test_fraction=0.5")
    data.write_text(json.dumps({"prompt": "2+2?", "answer": "4"}) + "\n", encoding="utf-8")
    code, lines = check(tmp_path, capsys, *jsonl)
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"dataset: {data}:1") and "question" in lines[0]
    # every record is read, as the run reads them: a bad line past the first is refused too
    data.write_text(json.dumps({"question": "2+2?", "answer": "4"}) + "\n{not json\n", encoding="utf-8")
    code, lines = check(tmp_path, capsys, *jsonl)
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"dataset: {data}:2")
    data.write_text((json.dumps({"question": "2+2?", "answer": "4"}) + "\n") * 2, encoding="utf-8")
    assert check(tmp_path, capsys, *jsonl)[0] == 0


def test_a_metric_sink_whose_package_is_missing_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    find_spec = importlib.util.find_spec

    def without_wandb(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name == "wandb" else find_spec(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", without_wandb)
    code, lines = check(tmp_path, capsys, "logging.sinks=wandb")
    assert code == 1 and lines == [
        "logging.sinks[0]: metric sink 'wandb' needs the wandb package; install it with `pip install wandb`"
    ]


@pytest.mark.parametrize("model", ["Qwen/Qwen3-8B", "/nowhere/model", "embedded:debate-huge"])
def test_a_model_the_local_backend_cannot_load_is_refused_at_check_time(
    model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = check(tmp_path, capsys, f"model.base_model={model}")
    assert code == 1 and len(lines) == 1 and lines[0].startswith("model.base_model: ")
    assert "never downloads" in lines[0] or "no embedded model" in lines[0]


def test_hosted_model_names_are_for_other_backends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model"
    model.mkdir()
    assert check(tmp_path, capsys, f"model.base_model={model}")[0] == 0  # a local directory
    _, lines = check(tmp_path, capsys, "backend.name=tinker", "model.base_model=Qwen/Qwen3-8B", "model.lora_rank=8")
    assert not any(line.startswith("model.base_model") for line in lines)


@pytest.mark.parametrize(
    ("files", "has_template"),
    [
        ({"tokenizer_config.json": "{}"}, False),
        ({"tokenizer_config.json": '{"chat_template": null}'}, False),
        ({"tokenizer_config.json": '{"chat_template": "{{ messages }}"}'}, True),
        ({"tokenizer_config.json": "{}", "chat_template.jinja": "{{ messages }}"}, True),
        ({}, None),  # nothing to tell from: the loader decides
    ],
)
def test_the_chat_template_renderer_needs_a_model_with_a_chat_template(
    files: dict[str, str], has_template: bool | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    for name, text in files.items():
        (model / name).write_text(text, encoding="utf-8")
    code, lines = check(tmp_path, capsys, f"model.base_model={model}", "debate.renderer=hf_chat_template")
    if has_template is False:
        assert code == 1 and len(lines) == 1
        said = "debate.renderer: hf_chat_template renders with the tokenizer's chat template, and "
        assert lines[0].startswith(f"{said}'{model}' has none")
        assert 'use debate.renderer = "role_colon"' in lines[0]
        # the renderer that needs no template is fine with the same model
        assert check(tmp_path, capsys, f"model.base_model={model}")[0] == 0
    else:
        assert code == 0, lines


def test_one_agent_is_refused_where_the_run_compares_agents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = check(tmp_path, capsys, "debate.num_agents=1")
    assert code == 1 and len(lines) == 1 and lines[0].startswith("debate.num_agents: is 1, but the run asks")
    assert "RL rewards from peer votes" in lines[0] and "evaluation debates" in lines[0]
    direct_only = ["debate.num_agents=1", "training.num_iterations=0", "evaluation.modes=direct"]
    assert check(tmp_path, capsys, *direct_only)[0] == 0


def test_every_problem_is_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = check(
        tmp_path,
        capsys,
        "dataset.name=jsonl",
        f"dataset.options.path={tmp_path / 'none.jsonl'}",
        "model.base_model=Qwen/Qwen3-8B",
        "debate.num_agents=1",
        f"model.init_from={tmp_path / 'no-run'}",
    )
    assert code == 1
    assert [line.split(":", 1)[0].split(" ", 1)[0] for line in lines] == [
        "dataset",
        "model.base_model",
        "model.init_from",
        "debate.num_agents",
    ]


@pytest.mark.parametrize("existed", [False, True])
def test_a_failed_start_leaves_nothing_that_blocks_a_retry(
    existed: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    if existed:
        run.mkdir()
        (run / "notes.txt").write_text("mine", encoding="utf-8")
    argv = ["train", str(run_file), "backend.name=local", "model.base_model=Qwen/Qwen3-8B", "--run-dir", str(run)]
    for _ in range(2):  # the retry meets the same error, not "already holds a run"
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "never downloads" in err and "already holds a run" not in err
    if existed:
        assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
    else:
        assert not run.exists()
