"""Role-averaged evaluation against any fixed opponent (``evaluation.opponent``): the base model or
saved weights, opened once from the weights saved for sampling."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main
from debate_core.config import load_run_config
from debate_core.errors import ConfigError
from debate_core.plugin import Registry, get_registry
from debate_core.records import DebateRecord
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.checkpoint_format import CheckpointError
from debate_core.runtime.manifests import read_checkpoint
from debate_core.stats import mean
from debate_core.testing.scripted_debate import run_scripted_debate, run_sync
from debate_core.training.evaluation.evaluator import per_problem_seat_win_rate, seat_win_rates
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.debate.helpers import response
from tests.training.trainer_harness import BASE_OVERRIDES, SERVICES, make_config

ROLE_AVERAGED = ["evaluation.role_averaged=true", "evaluation.modes=['debate']", "evaluation.num_problems=2"]


def train(registry: Registry, run_dir: Path, *overrides: str) -> Any:
    config = make_config("training.num_iterations=1", *overrides)
    return asyncio.run(
        run_training(config, registry, RunDirectory(run_dir), progress=Progress("off"), handle_signals=False)
    )


def created(service: Any) -> list[str]:
    return [label for kind, label in service.log if kind == "submit" and label.startswith("create")]


def sampling_clients_opened(service: Any) -> list[str]:
    """What each ``create_sampling_client`` was given (a model path or a base model)."""
    return [label.split(":", 1)[1] for label in created(service) if label.startswith("create_sampling_client")]


def test_a_checkpoint_is_the_fixed_opponent_during_training(registry: Registry, tmp_path: Path) -> None:
    train(registry, tmp_path / "opponent", "evaluation.num_problems=0")
    opponent = read_checkpoint(tmp_path / "opponent" / "checkpoints" / "step_000001.json").sampler_weights
    opponent_dir = tmp_path / "opponent"
    outcome = train(
        registry, tmp_path / "run", *ROLE_AVERAGED, "evaluation.at_start=true", f"evaluation.opponent={opponent_dir}"
    )
    assert sampling_clients_opened(SERVICES[-1]) == [opponent]  # opened once, for every evaluation
    assert set(outcome.evaluations) == {"start", "final"}
    metrics = outcome.evaluations["final"]
    assert {"eval_tiny_sums/role_averaged/correct", "eval_tiny_sums/role_averaged/opponent_correct"} <= set(metrics)


def test_the_base_model_stays_the_default_opponent(registry: Registry, tmp_path: Path) -> None:
    assert make_config().evaluation.opponent == "base"
    train(registry, tmp_path / "run", *ROLE_AVERAGED)
    assert sampling_clients_opened(SERVICES[-1]) == [make_config().model.base_model]


def test_a_missing_opponent_fails_before_anything_starts(registry: Registry, tmp_path: Path) -> None:
    built = len(SERVICES)
    with pytest.raises(CheckpointError, match=r"^evaluation.opponent .*nowhere: no such file or directory$"):
        train(registry, tmp_path / "run", *ROLE_AVERAGED, f"evaluation.opponent={tmp_path / 'nowhere'}")
    assert len(SERVICES) == built and not (tmp_path / "run").exists()  # no backend opened, no run directory


def test_an_empty_opponent_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"evaluation: .*'opponent'"):
        load_run_config(None, ['evaluation.opponent=""'], registry=get_registry())


def test_eval_of_one_checkpoint_against_another(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    base = [*BASE_OVERRIDES, "training.num_iterations=1", "evaluation.num_problems=0"]
    for name, seed in (("first", 1), ("second", 2)):
        assert main(["train", str(run_file), *base, f"run.seed={seed}", "--run-dir", str(tmp_path / name)]) == 0
    capsys.readouterr()
    overrides = [*BASE_OVERRIDES, *ROLE_AVERAGED, f"evaluation.opponent={tmp_path / 'first'}"]
    assert main(["eval", str(run_file), *overrides, "--checkpoint", str(tmp_path / "second"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "eval_tiny_sums/role_averaged/opponent_correct" in report["metrics"]
    first = read_checkpoint(tmp_path / "first" / "checkpoints" / "step_000001.json").sampler_weights
    second = read_checkpoint(tmp_path / "second" / "checkpoints" / "step_000001.json").sampler_weights
    assert sampling_clients_opened(SERVICES[-1]) == [second, first]


def test_without_a_grader_role_averaged_evaluation_reports_the_seats_peer_win_rate(
    registry: Registry, tmp_path: Path
) -> None:
    """The formulation's role-averaged quantity: the policy seat's win rate from the peer votes."""
    outcome = train(registry, tmp_path / "run", *ROLE_AVERAGED, 'grader.name="none"')
    metrics = outcome.evaluations["final"]
    prefix = "eval_tiny_sums/role_averaged/"
    for key in ("peer_win_rate", "peer_win_rate_se", "opponent_peer_win_rate", "peer_votes", "parse_error"):
        assert prefix + key in metrics, key
    assert 0.0 <= metrics[prefix + "peer_win_rate"] <= 1.0 and metrics[prefix + "peer_win_rate_se"] >= 0.0


def _seat_records(comparisons_by_debate: list[str]) -> list[DebateRecord]:
    """One single-round sequential debate of 3 agents per entry: only agent 2 compares, as given."""
    records = []
    for line in comparisons_by_debate:
        texts = [response("1"), response("2"), response("3", [line])]
        records.append(run_sync(run_scripted_debate(texts, 3, max_rounds=1)).record)
    return records


def test_the_seat_win_rate_is_the_win_rate_reward_of_the_policys_seat() -> None:
    # problem 1: the policy sits at 0, 1, 2 in turn; agent 2's vote "0 > 1" in each debate
    records = _seat_records(["Agent 0 > Agent 1"] * 3)
    # seat 0 wins its one vote (1), seat 1 loses it (0), seat 2 gets no vote (0 by definition)
    assert per_problem_seat_win_rate(records, 3) == [pytest.approx(1 / 3)]
    # a second problem with a tie everywhere: 1/2 for seats 0 and 1, 0 for seat 2
    records += _seat_records(["Agent 0 = Agent 1"] * 3)
    metrics = seat_win_rates(records, 3, "p")
    assert metrics["p/peer_win_rate"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert metrics["p/peer_win_rate_se"] == pytest.approx(0.0)
    assert metrics["p/peer_votes"] == pytest.approx(4 / 6)  # seats 0 and 1 each get the one vote
    # the opponents: in each debate the two other seats; per debate the seat rates are (1, 0, 0)
    assert metrics["p/opponent_peer_win_rate"] == pytest.approx(mean([0, 0, 1, 0, 1, 0, 0.5, 0, 0.5, 0, 0.5, 0.5]))


def test_the_own_family_on_the_opponents_answers_opens_it_once_during_training(
    registry: Registry, tmp_path: Path
) -> None:
    train(
        registry,
        tmp_path / "run",
        "evaluation.modes=['judge']",
        "evaluation.judge_families=['own']",
        "evaluation.judge_own_answers=opponent",
        "evaluation.num_problems=2",
        "evaluation.at_start=true",
    )
    assert sampling_clients_opened(SERVICES[-1]) == [make_config().model.base_model]
