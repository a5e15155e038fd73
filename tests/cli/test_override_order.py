"""Overrides as people type them (docs/config-reference.md#lists-tables-and-strings-on-the-command-line):
before or after a command's options, in the order given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_core.cli import build_parser, main, parse_arguments

COMMANDS_WITH_OVERRIDES = {
    "eval": ["--checkpoint", "runs/a", "--json"],
    "preflight": ["--json"],
    "run": ["--question", "What is 2+3?", "--quiet"],
    "train": ["--run-dir", "runs/b"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS_WITH_OVERRIDES))
def test_overrides_after_options_join_those_before_in_order(command: str) -> None:
    options = COMMANDS_WITH_OVERRIDES[command]
    argv = [command, "run.toml", "a.x=1", *options[:1], *options[1:2], "b.y=2", *options[2:], "c.z=3"]
    args = parse_arguments(build_parser(), argv)
    assert args.overrides == ["a.x=1", "b.y=2", "c.z=3"]


def test_config_check_takes_overrides_after_the_file_as_before() -> None:
    args = parse_arguments(build_parser(), ["config", "check", "run.toml", "a.x=1", "b.y=2"])
    assert args.overrides == ["a.x=1", "b.y=2"]


def test_a_stray_word_that_is_no_override_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse_arguments(build_parser(), ["eval", "run.toml", "--json", "stray"])
    assert info.value.code == 2
    assert "unrecognized arguments: stray" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_arguments(build_parser(), ["plugins", "a.x=1"])  # a command without overrides


def test_eval_takes_overrides_after_its_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    tiny = [
        "model.base_model=embedded:debate-micro",
        "backend.name=local",
        "backend.options.num_threads=1",
        "debate.num_agents=2",
        "debate.max_tokens=8",
        "logging.progress=off",
    ]
    argv = ["eval", str(run_file), *tiny[:3], "--json", *tiny[3:], "evaluation.modes=direct"]
    assert main([*argv, "evaluation.num_problems=2"]) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert metrics["eval_arithmetic/num_problems"] == 2
    assert not any("/debate/" in name for name in metrics)  # `modes=direct` is the list ["direct"]
