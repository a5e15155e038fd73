"""``debate config check`` refuses, first, every run that ``debate train`` would refuse before its
first step (docs/config-reference.md#what-config-check-checks); a run that must fail after a step
checkpoints that step first; a start that fails leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry
from tests.training.trainer_harness import BASE_OVERRIDES, make_config, train_quietly

SUMS = [{"question": f"What is {a} + {a + 1}?", "answer": str(2 * a + 1)} for a in range(6)]


def write_sums(path: Path) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in SUMS), encoding="utf-8")
    return path


def early_failures(tmp_path: Path) -> dict[str, list[str]]:
    """Each way a run of the scripted harness can be refused before its first trained step, as overrides."""
    sums = tmp_path / "sums.jsonl"
    missing = tmp_path / "missing.jsonl"
    return {
        # issue 44's (b): one step trained, then "no test split" at the evaluation after it
        "jsonl without a test split": [
            "dataset.name=jsonl",
            f"dataset.options.path={sums}",
            "training.eval_every=1",
        ],
        "jsonl whose test_fraction leaves no train problem": [
            "dataset.name=jsonl",
            f"dataset.options.path={sums}",
            "dataset.options.test_fraction=0.99",
        ],
        "a missing dataset file": ["dataset.name=jsonl", f"dataset.options.path={missing}"],
        "a missing test file": [
            "dataset.name=jsonl",
            f"dataset.options.path={sums}",
            f"dataset.options.test_path={missing}",
        ],
        # issue 44's (a): a package source that is not installed
        "a dataset package that is not installed": ["dataset.name=gsm8k", "dataset.options.source=package:no_such_pkg"],
        "a curriculum stage's missing file": [
            f"curriculum=[{{ dataset = {{ name = 'jsonl', options = {{ path = '{missing}' }} }}, iterations = 1 }}, "
            "{ dataset = { name = 'tiny_sums' }, iterations = 1 }]",
        ],
        "a later curriculum stage's missing file": [
            "curriculum=[{ dataset = { name = 'tiny_sums' }, iterations = 1 }, "
            f"{{ dataset = {{ name = 'jsonl', options = {{ path = '{missing}' }} }}, iterations = 1 }}]",
        ],
        "an init_from that names no checkpoint": [f"model.init_from={tmp_path / 'no-run'}"],
        "one agent where agents compare": ["debate.num_agents=1"],
    }


CASES = list(early_failures(Path("/unused")))


def error_lines(err: str) -> list[str]:
    return [line.removeprefix("debate: error: ") for line in err.splitlines() if line.startswith("debate: error: ")]


@pytest.mark.parametrize("case", CASES)
def test_config_check_refuses_first_what_train_refuses_before_a_step(
    case: str, registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sums(tmp_path / "sums.jsonl")
    overrides = [*BASE_OVERRIDES, *early_failures(tmp_path)[case]]
    run_file, run = tmp_path / "run.toml", tmp_path / "run"
    run_file.write_text("", encoding="utf-8")
    assert main(["train", str(run_file), *overrides, "--run-dir", str(run)]) == 1
    refused = error_lines(capsys.readouterr().err)
    assert refused, case
    assert not run.exists()  # nothing trained, nothing left: no environment.json, no transcripts/
    assert main(["config", "check", str(run_file), *overrides]) == 1
    checked = capsys.readouterr()
    assert f"{run_file}: ok" not in checked.out
    found = " ".join(error_lines(checked.err))
    # what train said, check says (after the key path it puts in front)
    reason = refused[0].rsplit(": ", 1)[-1]
    assert reason in found, (case, refused, found)


def test_every_split_is_read_before_the_first_step(registry: Registry, tmp_path: Path) -> None:
    sums = write_sums(tmp_path / "sums.jsonl")
    config = make_config("dataset.name=jsonl", f"dataset.options.path={sums}", "training.eval_every=1")
    with pytest.raises(Exception, match="no test split"):
        train_quietly(config, registry, tmp_path / "run", handle_signals=False)
    assert not (tmp_path / "run" / "metrics.jsonl").exists() or not (tmp_path / "run" / "metrics.jsonl").read_text()
    assert not list((tmp_path / "run" / "checkpoints").glob("step_*.json"))


def test_a_run_that_fails_after_a_step_checkpoints_that_step_first(registry: Registry, tmp_path: Path) -> None:
    from debate_core.errors import DebateError
    from debate_core.runtime.manifests import latest_checkpoint

    # 3 debates an iteration: iteration 2's first debate is refused, by a DebateError the plugin
    # wrote for the user (not a crash), after step 1 was trained; no checkpoint was due (save_every 0)
    config = make_config(
        "reward.name=exploding", "reward.options={calls_before=3, refusal=true}", "training.save_every=0"
    )
    run = tmp_path / "run"
    with pytest.raises(DebateError, match="refuses this debate"):
        train_quietly(config, registry, run, handle_signals=False)
    checkpoint = latest_checkpoint(run / "checkpoints")
    assert checkpoint is not None and checkpoint.step == 1 and checkpoint.reason == "failure: DebateError"
