"""``debate eval`` ends with a short headline table, like the end of training's."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.cli.eval_cmd import headline_table


def test_the_headline_keeps_the_metrics_the_end_of_training_shows_as_they_may_be_stated() -> None:
    metrics = {
        "eval_gsm8k/num_problems": 50.0,
        "eval_gsm8k/direct/parse_error": 0.02,
        "eval_gsm8k/direct/format": 0.98,
        "eval_gsm8k/direct/correct": 0.42,
        "eval_gsm8k/direct/correct_se": 0.07,
        "eval_gsm8k/debate/cons@3": 0.5,
        "eval_gsm8k/debate/judge_decidable_votes": 12.0,
        "eval_gsm8k/debate/tokens_per_turn": 180.0,
    }
    assert headline_table(metrics) == [  # each figure as the other outputs state it (evaluation_figures)
        "headline (50 problems):",
        "  direct/format   0.980",
        "  direct/correct  0.420 \u00b1 0.070",
        "  debate/cons@3   0.500 [0.366, 0.634] (n=50)",
    ]
    assert headline_table({"eval_x/num_problems": 3.0}) == ["headline: (no graded metrics)"]


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
    assert [line.split()[0] for line in out[start + 1 :]] == [
        "direct/format",
        "direct/correct",
        "direct/pass@2",
        "direct/cons@2",
    ]


def test_the_judge_benchmark_headline_has_its_strict_accuracy_and_consistency() -> None:
    """``debate eval --mode judge``: the judge benchmark's headline figures (docs/training.md#the-judge-benchmark)
    are its strict accuracy and its consistency, not only the judge's own answers."""
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
    names = [line.split()[0] for line in headline_table(metrics)[1:]]
    assert names == ["judge/accuracy", "judge/consistency", "judge/own_correct"]
