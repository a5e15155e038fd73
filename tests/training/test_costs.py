"""Tokens and dollars (docs/training.md#tokens-and-cost): every step and evaluation records the
tokens it asked the backend to compute, priced by ``[pricing]``; ``training.max_cost`` stops a run
cleanly at its budget, and a resumed run goes on counting from its checkpoint."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.cli import main
from debate_core.config import PricingSettings
from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.manifests import read_checkpoint
from debate_core.runtime.token_meter import TokenCount
from debate_core.training.costs import CostLedger, price
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.doubles.scripted_backend import ScriptedSamplingClient
from tests.training.trainer_harness import SERVICES, make_config, read_metrics, train_quietly

PRICES = ("pricing.prompt_tokens=2.0", "pricing.sampled_tokens=10.0", "pricing.trained_tokens=4.0")
PRICING = PricingSettings(prompt_tokens=2.0, sampled_tokens=10.0, trained_tokens=4.0)
EVERY_OTHER = ("training.eval_every=2", "evaluation.at_start=true")


def usd(prompt: int, sampled: int, trained: int) -> float:
    return (2.0 * prompt + 10.0 * sampled + 4.0 * trained) / 1e6


def test_every_token_the_backend_computed_is_counted_once_and_priced(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sampled: list[int] = []
    sample_one = ScriptedSamplingClient._sample_one

    def counting(self: ScriptedSamplingClient, *args: Any, **kwargs: Any) -> Any:
        sequence = sample_one(self, *args, **kwargs)
        sampled.append(len(sequence.tokens))
        return sequence

    monkeypatch.setattr(ScriptedSamplingClient, "_sample_one", counting)
    run = tmp_path / "run"
    outcome = train_quietly(make_config(*PRICES, *EVERY_OTHER), registry, run, handle_signals=False)
    service = SERVICES[-1]
    records = read_metrics(run / "metrics.jsonl")

    prompt = sum(r["tokens/prompt_sampled"] + r.get("tokens/eval_prompt_sampled", 0) for r in records)
    assert prompt == sum(service.sent_prompt_lengths)  # what the backend was sent, each request once
    assert sum(r["tokens/sampled"] + r.get("tokens/eval_sampled", 0) for r in records) == sum(sampled)
    trained = sum(len(d.model_input.to_ints()) for batch, _, _ in service.sent_batches for d in batch)
    assert sum(r["tokens/trained"] for r in records) == trained > 0
    assert [r["tokens/trained"] for r in records] == [r["optim/trained_tokens"] for r in records]
    evaluated = [r["step"] for r in records if "tokens/eval_prompt_sampled" in r]
    assert evaluated == [1, 2, 4]  # the start's (recorded with step 1), every 2 iterations, the end's

    total = 0.0
    for r in records:
        step_tokens = (
            r["tokens/prompt_sampled"] + r.get("tokens/eval_prompt_sampled", 0),
            r["tokens/sampled"] + r.get("tokens/eval_sampled", 0),
            r["tokens/trained"],
        )
        assert r["cost/step"] == pytest.approx(usd(*step_tokens))
        total += r["cost/step"]
        assert r["cost/total"] == pytest.approx(total)
        if "cost/eval" in r:
            assert r["cost/eval"] == pytest.approx(usd(r["tokens/eval_prompt_sampled"], r["tokens/eval_sampled"], 0))
    assert records[-1]["cost/projected"] == pytest.approx(total)  # nothing left to do
    assert outcome.costs["usd"] == pytest.approx(total)
    assert outcome.costs["tokens"] == {"prompt_sampled": prompt, "sampled": sum(sampled), "trained": trained}
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["costs"]["usd"] == pytest.approx(total) and summary["budget_reached"] is None

    evaluation = json.loads(next((run / "eval").glob("step_000002_*.json")).read_text(encoding="utf-8"))
    second = records[1]
    assert evaluation["tokens"]["prompt_sampled"] == second["tokens/eval_prompt_sampled"]
    assert evaluation["cost"] == pytest.approx(second["cost/eval"])


def test_without_a_price_table_tokens_are_counted_and_nothing_is_priced(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    outcome = train_quietly(make_config("training.num_iterations=2"), registry, run, handle_signals=False)
    records = read_metrics(run / "metrics.jsonl")
    assert all(r["tokens/sampled"] > 0 and not any(k.startswith("cost/") for k in r) for r in records)
    assert set(outcome.costs) == {"tokens"}


def test_the_projection_is_each_phases_mean_step_cost_times_its_steps_left() -> None:
    ledger = CostLedger()
    for cost in (1.0, 3.0):
        ledger.record("warmstart", TokenCount(trained=1), cost)
    assert ledger.projected({"warmstart": 3, "rl": 0}) == pytest.approx(4.0 + 3 * 2.0)
    assert ledger.projected({"warmstart": 0, "rl": 5}) is None  # RL's cost is unknown before its first step
    ledger.record("rl", TokenCount(sampled=1), 10.0)
    assert ledger.projected({"warmstart": 0, "rl": 5}) == pytest.approx(14.0 + 50.0)
    assert CostLedger.from_json(json.loads(json.dumps(ledger.to_json()))) == ledger


counts = st.builds(TokenCount, *(st.integers(0, 10**9),) * 3)


@given(counts, counts)
def test_a_price_is_linear_in_the_tokens(a: TokenCount, b: TokenCount) -> None:
    assert price(a + b, PRICING) == pytest.approx(price(a, PRICING) + price(b, PRICING))
    assert price(a, PricingSettings()) == 0.0
    assert price(TokenCount(prompt_sampled=10**6), PRICING) == pytest.approx(2.0)


def budget_for_two_steps(registry: Registry, tmp_path: Path) -> float:
    """A budget the scripted run reaches during its second step (its first steps' cost, measured)."""
    probe = tmp_path / "probe"
    train_quietly(make_config(*PRICES, "training.num_iterations=2"), registry, probe, handle_signals=False)
    first, second = read_metrics(probe / "metrics.jsonl")[:2]
    return float(first["cost/total"] + second["cost/step"] / 2)


def test_max_cost_stops_the_run_after_the_step_that_reaches_it_and_a_resume_goes_on_counting(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    budget = budget_for_two_steps(registry, tmp_path)
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    from tests.training.trainer_harness import BASE_OVERRIDES

    args = [*BASE_OVERRIDES, *PRICES, f"training.max_cost={budget}", "training.save_every=0"]
    capsys.readouterr()
    assert main(["train", str(run_file), *args, "--run-dir", str(run)]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("stopped")]
    assert len(err) == 1, err
    spent = read_metrics(run / "metrics.jsonl")[-1]["cost/total"]
    assert err[0].startswith(f"stopped at the budget: the run has cost ${spent:.3g}")
    assert f"reaching training.max_cost = ${budget:.3g}; checkpoint at step 2." in err[0]
    assert f"debate train --resume {run} training.max_cost=1" in err[0]
    records = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2] and records[-1]["cost/total"] >= budget > records[0]["cost/total"]
    checkpoint = read_checkpoint(run / "checkpoints" / "step_000002.json")
    assert checkpoint.reason == "budget reached: training.max_cost"
    assert checkpoint.costs["usd"] == pytest.approx(records[-1]["cost/total"])
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["budget_reached"].startswith("the run has cost") and summary["stopped_by"] is None
    from debate_core.report.run_data import read_run

    assert read_run(run).status() == "stopped at the budget (training.max_cost) after step 2"

    # the same budget again: nothing left to spend, the run says so and trains nothing
    assert main(["train", "--resume", str(run)]) == 0
    assert "stopped at the budget" in capsys.readouterr().err
    assert len(read_metrics(run / "metrics.jsonl")) == 2

    assert main(["train", "--resume", str(run), "training.max_cost=1000"]) == 0
    resumed = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in resumed] == [1, 2, 3, 4]
    assert resumed[2]["cost/total"] == pytest.approx(records[-1]["cost/total"] + resumed[2]["cost/step"])
    assert json.loads((run / "summary.json").read_text(encoding="utf-8"))["budget_reached"] is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["pricing.prompt_tokens=1.0", "pricing.trained_tokens=1.0"],
            "pricing.sampled_tokens: is not given: a [pricing] table gives all three prices",
        ),
        ([*PRICES[:2], "pricing.trained_tokens=-3"], "pricing.trained_tokens: must be >= 0"),
        (["training.max_cost=5"], "training.max_cost: needs a [pricing] table"),
        ([*PRICES, "training.max_cost=0"], "training.max_cost: must be > 0"),
    ],
)
def test_a_bad_price_table_or_budget_gets_one_line_naming_the_key(
    overrides: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    assert main(["config", "check", str(run_file), *overrides]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_progress_lines_show_each_steps_cost_and_the_runs_so_far_and_projected(
    registry: Registry, tmp_path: Path
) -> None:
    stream = io.StringIO()
    progress = Progress("lines", stream=stream, line_interval_s=0.0)
    config = make_config(*PRICES, "training.num_iterations=3")
    asyncio.run(run_training(config, registry, RunDirectory(tmp_path / "run"), progress=progress, handle_signals=False))
    lines = stream.getvalue().splitlines()
    finished = [line for line in lines if line.startswith("step ") and "reward" in line]
    assert len(finished) == 3 and all(" cost $" in line and " run $" in line for line in finished), lines
    assert any("RL 1/3 iterations" in line and "projected" in line for line in lines), lines


def test_the_report_shows_the_runs_tokens_cost_projection_and_budget(registry: Registry, tmp_path: Path) -> None:
    from debate_core.report.page import report_html
    from debate_core.report.run_data import read_run
    from debate_core.training.costs import dollars

    run = tmp_path / "run"
    config = make_config(*PRICES, "training.num_iterations=2", "training.max_cost=100")
    train_quietly(config, registry, run, handle_signals=False)
    records = read_metrics(run / "metrics.jsonl")
    page = report_html(read_run(run))
    section = page.split('<h2 id="cost">Tokens and cost</h2>', 1)[1].split("<h2", 1)[0]
    trained = sum(r["tokens/trained"] for r in records)
    assert f"<td>{trained:,}</td>" in section
    assert f"<td>{dollars(records[-1]['cost/total'])}</td>" in section and "<td>$100.00</td>" in section
    assert 'aria-label="Cost (US dollars)"' in section and 'aria-label="Tokens per step"' in section

    for record in records:  # a run from before tokens were counted has no such section
        for name in [k for k in record if k.startswith(("tokens/", "cost/"))]:
            del record[name]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert 'id="cost"' not in report_html(read_run(run))
