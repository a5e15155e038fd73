"""examples/smollm2-judging-start.toml then examples/smollm2-peer-votes.toml, shortened for CI
(docs/results.md#smollm2-trained-by-peer-votes): one warm-start step, then one RL iteration on peer votes
from those weights and an evaluation of 2 held-out problems, with the files' own settings otherwise; and
each baseline that the peer-votes file's comment names passes ``debate config check``. The figures
themselves (100 warm-start steps, 20 iterations, 200 problems) cost more than CI's budget."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest

from debate_core.cli import main

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
START = EXAMPLES / "smollm2-judging-start.toml"
PEER_VOTES = EXAMPLES / "smollm2-peer-votes.toml"
QUIET = ["logging.progress=off", "backend.options.num_threads=2", "training.save_every=0"]


def baselines() -> dict[str, list[str]]:
    """The overrides that the peer-votes file's comment gives for each baseline (``#   name: k=v ...``)."""
    found = {}
    for line in PEER_VOTES.read_text(encoding="utf-8").splitlines():
        name, _, overrides = line.removeprefix("#").strip().partition(": reward.name=")
        if overrides:
            found[name] = shlex.split("reward.name=" + overrides)
    return found


def test_the_baselines_are_named_in_the_peer_votes_files_comment() -> None:
    assert sorted(baselines()) == ["ground truth", "majority vote", "random"]


def test_the_smollm2_recipe_shortened_trains_on_peer_votes_from_the_judging_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start = tmp_path / "start"
    short_start = ["warmstart.steps=1", "evaluation.after_warmstart=false", "evaluation.at_end=false", *QUIET]
    assert main(["train", str(START), *short_start, "--run-dir", str(start)]) == 0
    assert list((start / "checkpoints").glob("step_000001.json"))

    from_start = f"model.init_from={start}"
    for name, overrides in baselines().items():
        assert main(["config", "check", str(PEER_VOTES), from_start, *overrides]) == 0, name
    capsys.readouterr()

    run = tmp_path / "peer-votes"
    short = ["training.num_iterations=1", "training.batch_size=1", "evaluation.num_problems=2", *QUIET]
    assert main(["train", str(PEER_VOTES), from_start, *short, "--run-dir", str(run)]) == 0
    resolved = tomllib.loads((run / "config.toml").read_text(encoding="utf-8"))
    # the run starts from the warm-start's saved weights, and its reward is the peers' votes alone
    assert str(start) in resolved["model"]["init_from"]
    reward = resolved["reward"]
    options = reward["options"]
    assert (reward["name"], options["evaluation_stream"], options["lambda_judge"]) == ("v2", "judge", 0)
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    iteration = next(r for r in records if "optim/num_datums" in r)
    assert iteration["debate/num_debates"] == 1 and "reward/gen/mean" in iteration
    assert "optim/kl_policy_reference" in iteration  # the penalty towards the start's weights
    final = json.loads(next((run / "eval").glob("step_*_final.json")).read_text())["metrics"]
    assert final["eval_arithmetic/num_problems"] == 2
    assert {"eval_arithmetic/direct/correct", "eval_arithmetic/debate/cons@3"} <= set(final)
