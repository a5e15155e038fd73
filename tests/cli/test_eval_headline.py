"""``debate eval`` ends with a short headline table, like the end of training's."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.cli.eval_cmd import headline_lines


def test_the_headline_is_the_four_figures_each_as_it_may_be_stated() -> None:
    metrics = {
        "eval_gsm8k/num_problems": 50.0,
        "eval_gsm8k/direct/parse_error": 0.02,
        "eval_gsm8k/direct/format": 0.98,
        "eval_gsm8k/direct/correct": 0.42,
        "eval_gsm8k/direct/correct_se": 0.07,
        "eval_gsm8k/direct/cons@3": 0.5,
        "eval_gsm8k/debate/judge_decidable_votes": 12.0,
        "eval_gsm8k/debate/tokens_per_turn": 180.0,
    }
    assert [" ".join(line.split()) for line in headline_lines(metrics)] == [
        "headline (50 problems):",
        "eval",
        "one answer (direct accuracy) 42.0% \u00b1 7.0",
        "majority of 3 answers (cons@3) 50.0% [36.6, 63.4]",
    ]
    assert headline_lines({"eval_x/num_problems": 3.0}) == [
        "headline (3 problems):",
        "  (no headline figures recorded)",
    ]


def test_debate_eval_ends_with_the_headline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    tiny = [
        "backend.name=local",
        "backend.options.num_threads=1",
        "model.base_model=embedded:debate-micro",
        "debate.num_agents=2",
        "debate.max_tokens=8",
        "evaluation.modes=direct",
        "evaluation.num_problems=2",
        "logging.progress=off",
    ]
    assert main(["eval", str(run_file), *tiny]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("headline (2 problems):")
    assert [line.split("  ")[1].strip() for line in out[start + 2 : start + 4]] == [
        "one answer (direct accuracy)",
        "majority of 2 answers (cons@2)",
    ]
    assert out[-1].startswith("every metric (") and "--all" in out[-1]
    assert main(["eval", str(run_file), *tiny, "--all"]) == 0  # every metric, then the headline
    out = capsys.readouterr().out.splitlines()
    assert any(line.split()[0].endswith("/direct/pass@2") for line in out if line.strip())
    assert out.index("headline (2 problems):") > 1


def test_the_judge_benchmark_headline_is_its_strict_accuracy() -> None:
    """``debate eval --mode judge``: the judge benchmark's headline figure is its strict accuracy
    (docs/training.md#the-judge-benchmark); its consistency and the rest are in --all, --json and --out."""
    metrics = {
        "eval_arithmetic/num_problems": 50.0,
        "eval_arithmetic/judge/accuracy": 0.2,
        "eval_arithmetic/judge/accuracy_se": 0.056,
        "eval_arithmetic/judge/consistency": 0.4,
        "eval_arithmetic/judge/consistency_se": 0.07,
        "eval_arithmetic/judge/flip_rate": 0.3,
        "eval_arithmetic/judge/tie_rate": 0.1,
        "eval_arithmetic/judge/own_correct": 0.0,
        "eval_arithmetic/judge/accuracy_own_right": 0.5,
    }
    rows = [line.split("  ")[1].strip() for line in headline_lines(metrics)[2:]]
    assert rows == ["judge accuracy (benchmark)"]
