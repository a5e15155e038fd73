"""What a run leaves for a researcher: one step numbering everywhere, rewards beside each logged
transcript, compact manifests, pruned periodic checkpoints, and the progress line's reward."""

from __future__ import annotations

import asyncio
import io
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from debate_core.debate.transcripts import load_transcript
from debate_core.plugin import Registry, get_registry
from debate_core.rewards.advantages import compute_advantages
from debate_core.rundir.directory import RunDirectory
from debate_core.rundir.evaluation_records import best_steps
from debate_core.rundir.reward_sidecars import read_sidecar, reward_summary, sidecar_path
from debate_core.runtime.checkpoint_format import Checkpoint, DataPosition
from debate_core.runtime.manifests import (
    capture_rng_state,
    list_checkpoints,
    prune_checkpoints,
    read_checkpoint,
    restore_rng_state,
    write_checkpoint,
)
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import make_config, read_metrics


def train(config, registry: Registry, run_dir: Path, progress: Progress | None = None):
    return asyncio.run(
        run_training(
            config,
            registry,
            RunDirectory(run_dir),
            progress=progress or Progress("off"),
            handle_signals=False,
        )
    )


def test_one_step_numbering_for_records_transcripts_evaluations_and_checkpoints(
    registry: Registry, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    config = make_config(
        "warmstart.enabled=true",
        "warmstart.steps=2",
        "warmstart.batch_size=2",
        "training.num_iterations=2",
        "training.eval_every=1",
        "training.save_every=1",
        "evaluation.at_start=true",
    )
    stream = io.StringIO()
    train(config, registry, run, Progress("lines", stream))
    # steps 1-2 are the warm-start, 3-4 the RL iterations
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [1, 2, 3, 4]
    assert sorted(p.name for p in (run / "transcripts").iterdir()) == ["step_000003", "step_000004"]
    labels = ["step_000000_start", "step_000002_warmstart", "step_000003_iteration_1", "step_000004_final"]
    assert sorted(p.name for p in (run / "eval").glob("*.json")) == [f"{label}.json" for label in labels]
    for path in (run / "eval").glob("*.json"):
        assert json.loads(path.read_text())["step"] == int(path.name[5:11])
    # every evaluation debate is saved beside its record, with its rewards, and reads back
    assert sorted(p.name for p in (run / "eval").iterdir() if p.is_dir()) == labels
    for label in labels:
        saved = sorted((run / "eval" / label).glob("eval-*.json"))
        transcripts = [p for p in saved if not p.name.endswith(".rewards.json")]
        assert transcripts and len(saved) == 2 * len(transcripts)
        record = load_transcript(transcripts[0])
        assert record.debate_id == transcripts[0].stem and all(t.grade is not None for t in record.turns)
        assert json.loads(transcripts[0].with_name(transcripts[0].stem + ".rewards.json").read_text())["rewards"]
    assert [c.step for c in list_checkpoints(run / "checkpoints")] == [1, 2, 3, 4]
    transcript = load_transcript(run / "transcripts" / "step_000004" / "debate_00.json")
    assert transcript.debate_id == "step4-debate0"
    lines = stream.getvalue().splitlines()
    assert any(line.startswith("step 1/4 warm-start 1/2") for line in lines)
    assert any(line.startswith("step 4/4 iter 2/2") for line in lines)
    assert any("checkpoint step 4 (final)" in line for line in lines)


def test_each_logged_transcript_has_its_rewards_and_advantages_beside_it(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(make_config("training.num_iterations=1", "logging.num_groups_to_log=2"), registry, run)
    transcripts = sorted((run / "transcripts" / "step_000001").glob("debate_??.json"))
    assert len(transcripts) == 2
    for path in transcripts:
        assert sidecar_path(path).name == path.stem + ".rewards.json"
        sidecar = read_sidecar(path)
        assert sidecar is not None
        record = load_transcript(path)
        # the trainer's reward (win_rate, group-normalised advantages) recomputed from the transcript alone
        reward = get_registry().build("reward", "win_rate")
        result = reward(record)
        (advantages,) = compute_advantages([record], [result])
        assert sidecar == json.loads(json.dumps(reward_summary("win_rate", record, result, advantages)))
        assert sidecar["failure_penalties"] == [
            sum(t.failed for t in record.turns_of(agent)) for agent in range(record.num_agents)
        ]
        assert abs(sum(sidecar["advantages"])) < 1e-9


def test_the_progress_reward_is_the_configured_one_with_failure_penalties_apart(
    registry: Registry, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    stream = io.StringIO()
    train(make_config("training.num_iterations=2"), registry, run, Progress("lines", stream))
    for record in read_metrics(run / "metrics.jsonl"):
        # total return = configured reward - failure penalty (docs/rewards.md#advantages)
        assert record["reward/configured"] - record["reward/failure_penalty"] == pytest.approx(
            record["env/all/reward/total"]
        )
        assert record["reward/failure_penalty"] >= 0
    last = read_metrics(run / "metrics.jsonl")[-1]
    line = next(line for line in stream.getvalue().splitlines() if line.startswith("step 2/2"))
    assert f"reward {last['reward/configured']:.3g}" in line
    assert f"fail_penalty {last['reward/failure_penalty']:.3g}" in line


def test_lines_mode_reports_a_long_phase_while_it_runs() -> None:
    stream = io.StringIO()
    progress = Progress("lines", stream, line_interval_s=0.0)
    progress.start("eval final direct", 3)
    progress.debate_done(10)
    progress.debate_done(10)
    progress.debate_done(10)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("eval final direct  1/3 debates")
    assert lines[1].startswith("eval final direct  2/3 debates")
    assert len(lines) == 2  # the phase's end is the finish line's job
    quiet = io.StringIO()
    slow = Progress("lines", quiet, line_interval_s=3600)
    slow.start("iter", 2)
    slow.debate_done(1)
    assert quiet.getvalue() == ""


def test_manifests_are_compact_and_restore_every_generator(tmp_path: Path) -> None:
    random.seed(7)
    np.random.seed(7)
    state = capture_rng_state()
    checkpoint = Checkpoint(
        step=3, warmstart_steps=0, iteration=3, backend_state="x", data=DataPosition(), seed=0, rng=state
    )
    path = write_checkpoint(tmp_path, checkpoint)
    assert len(path.read_text().splitlines()) < 40
    expected = (random.random(), np.random.random())
    random.seed(1)
    np.random.seed(1)
    restore_rng_state(read_checkpoint(path).rng)
    assert (random.random(), np.random.random()) == expected


def test_a_version_1_manifest_with_unpacked_rng_states_still_restores(tmp_path: Path) -> None:
    """Format version 1 (docs/training.md#checkpoint-format) may hold RNG state vectors as lists."""
    random.seed(3)
    np.random.seed(3)
    version, state, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    old_form = {
        "python": [version, list(state), gauss],
        "numpy": [name, [int(k) for k in keys], int(pos), int(has_gauss), float(cached)],
    }
    expected = (random.random(), np.random.random())
    manifest = {"format": 1, "step": 2, "warmstart_steps": 0, "iteration": 2, "backend_state": "x", "seed": 0}
    path = tmp_path / "step_000002.json"
    path.write_text(json.dumps(manifest | {"rng": old_form}), encoding="utf-8")
    restored = read_checkpoint(path)
    assert restored.format_version == 1 and restored.sampler_weights is None
    restore_rng_state(restored.rng)
    assert (random.random(), np.random.random()) == expected


def _checkpoint(directory: Path, step: int, periodic: bool) -> Path:
    state = directory / "backend" / f"step_{step:06d}"
    state.mkdir(parents=True)
    (state / "weights").write_text("w")
    write_checkpoint(
        directory,
        Checkpoint(
            step=step,
            warmstart_steps=0,
            iteration=step,
            backend_state=str(state),
            data=DataPosition(),
            seed=0,
            periodic=periodic,
        ),
    )
    return state


def test_keep_last_prunes_old_periodic_checkpoints_and_keeps_phase_ends_and_the_best(tmp_path: Path) -> None:
    directory = tmp_path / "checkpoints"
    states = {step: _checkpoint(directory, step, periodic=step not in (4, 12)) for step in (2, 4, 6, 8, 10, 12)}
    pruned = prune_checkpoints(directory, keep_last=2, keep_steps={6}, state_root=directory / "backend")
    # periodic: 2, 6, 8, 10 -> the newest two (8, 10) stay, 6 is the best, 2 goes; 4 and 12 are phase ends
    assert [c.step for c in pruned] == [2]
    assert [c.step for c in list_checkpoints(directory)] == [4, 6, 8, 10, 12]
    assert not states[2].exists() and all(states[s].exists() for s in (4, 6, 8, 10, 12))
    assert prune_checkpoints(directory, keep_last=0, keep_steps=set(), state_root=directory / "backend") == []


def test_pruning_leaves_states_outside_the_run_alone(tmp_path: Path) -> None:
    directory = tmp_path / "checkpoints"
    outside = tmp_path / "elsewhere" / "state"
    outside.mkdir(parents=True)
    write_checkpoint(
        directory,
        Checkpoint(
            step=1,
            warmstart_steps=0,
            iteration=1,
            backend_state=str(outside),
            data=DataPosition(),
            seed=0,
            periodic=True,
        ),
    )
    _checkpoint(directory, 2, periodic=True)
    assert [c.step for c in prune_checkpoints(directory, 1, set(), directory / "backend")] == [1]
    assert outside.exists()


def test_the_best_step_is_read_from_the_evaluation_records(tmp_path: Path) -> None:
    for step, value in ((0, 0.2), (4, 0.5), (8, 0.4)):
        (tmp_path / f"step_{step:06d}_x.json").write_text(
            json.dumps({"label": "x", "step": step, "metrics": {"eval_sums/debate/cons@3": value}})
        )
    (tmp_path / "step_000009_torn.json").write_text('{"label": ')
    assert best_steps(tmp_path, "debate/cons@3") == {4}
    assert best_steps(tmp_path, "debate/cons@k") == {4}  # the default: debate accuracy, whatever the agents
    assert best_steps(tmp_path, "debate/cons@2") == set()
    (tmp_path / "step_000012_x.json").write_text(
        json.dumps({"label": "x", "step": 12, "metrics": {"eval_sums/debate/cons@3": 0.5}})
    )
    assert best_steps(tmp_path, "debate/cons@k") == {12}  # a tie keeps the newest, not every tied step
    assert best_steps(tmp_path, "direct/correct") == set()
    assert best_steps(tmp_path, "") == set()


def test_keep_last_keeps_the_best_evaluation_by_the_default_metric_and_warns_on_an_unknown_one(
    registry: Registry, tmp_path: Path
) -> None:
    """The default ``training.keep_best_by`` is a metric evaluations write (debate accuracy), and its
    best evaluation's checkpoint survives pruning; a name no evaluation reports is said once."""
    settings = ("training.num_iterations=4", "training.save_every=1", "training.keep_last=1", "training.eval_every=1")
    config = make_config(*settings)
    assert config.training.keep_best_by == "debate/cons@k"
    train(config, registry, tmp_path / "run")
    best = best_steps(tmp_path / "run" / "eval", config.training.keep_best_by)
    assert best
    kept = {c.step for c in list_checkpoints(tmp_path / "run" / "checkpoints")}
    assert best & {1, 2, 3, 4} <= kept
    stream = io.StringIO()
    train(
        make_config(*settings, "training.keep_best_by=debate/debate_correct"),
        registry,
        tmp_path / "b",
        Progress("lines", stream),
    )
    assert stream.getvalue().count("training.keep_best_by = 'debate/debate_correct' names no metric") == 1


def test_a_run_with_keep_last_keeps_the_newest_and_the_final_checkpoint(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    config = make_config("training.num_iterations=4", "training.save_every=1", "training.keep_last=1")
    train(config, registry, run)
    kept = list_checkpoints(run / "checkpoints")
    assert [(c.step, c.periodic, c.reason) for c in kept] == [(3, True, "scheduled"), (4, False, "final")]
    assert sorted(p.name.split(".")[0] for p in (run / "checkpoints" / "backend").iterdir()) == [
        "step_000003",
        "step_000003_sampler",
        "step_000004",
        "step_000004_sampler",
    ]


def test_warm_start_rollouts_and_evaluations_show_progress_while_they_run(registry: Registry, tmp_path: Path) -> None:
    """Every long phase reports its progress as it goes, evaluations included (not only when they end)."""
    stream = io.StringIO()
    config = make_config(
        "training.num_iterations=1", "evaluation.at_start=true", "warmstart.enabled=true", "warmstart.steps=1"
    )
    train(config, registry, tmp_path / "run", Progress("lines", stream, line_interval_s=0.0))
    lines = stream.getvalue().splitlines()
    for phase in ("step 1/2 warm-start 1/1", "step 2/2 iter 1/1", "eval final: direct answers", "eval final: debates"):
        assert any(re.match(rf"{re.escape(phase)}  \d+/\d+ debates", line) for line in lines), phase
