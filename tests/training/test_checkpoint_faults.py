"""Fault injection on checkpoints and run directories (docs/training.md, "Damaged checkpoints").

A run is killed inside every write window of a short run (just before and just after each file
is renamed into place), its newest checkpoint is damaged in every way a disk or a hand can
(bit flips, truncation, deletion, edited fields), and each time ``--resume`` must finish with
the metrics of a run that was never interrupted, saying what it passed over.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main
from debate_core.plugin import Registry
from debate_core.runtime.checkpoint_format import CheckpointError, manifest_checksum
from debate_core.runtime.manifests import load_checkpoint_argument, manifest_path, read_checkpoint
from tests.training.fault_runs import RUN, stable, train
from tests.training.trainer_harness import BASE_OVERRIDES


class Killed(BaseException):
    """Stands for SIGKILL: nothing of the run catches it."""


@contextmanager
def kill_at_rename(number: int, after: bool) -> Iterator[list[int]]:
    """Raise :class:`Killed` at the ``number``-th ``os.replace`` of the block (before or after it)."""
    real = os.replace
    calls = [0]

    def replace(source: Any, target: Any) -> None:
        calls[0] += 1
        if calls[0] == number and not after:
            raise Killed(target)
        real(source, target)
        if calls[0] == number and after:
            raise Killed(target)

    os.replace = replace  # type: ignore[assignment]
    try:
        yield calls
    finally:
        os.replace = real


def renames_in_a_run(registry: Registry, tmp_path: Path) -> int:
    with kill_at_rename(0, after=False) as calls:
        train(registry, tmp_path / "counted")
    return calls[0]


def test_a_kill_in_any_write_window_resumes_to_the_uninterrupted_run(
    registry: Registry, tmp_path: Path, uninterrupted: Path
) -> None:
    total = renames_in_a_run(registry, tmp_path)
    assert total >= 20  # configs, transcripts, sidecars, states, manifests, evaluations, summary
    for number in range(1, total + 1):
        for after in (False, True):
            run = tmp_path / f"kill-{number}-{after}"
            with pytest.raises(Killed), kill_at_rename(number, after):
                train(registry, run)
            if not (run / "config.toml").exists():
                continue  # killed before the run existed: there is nothing to resume
            train(registry, run, resume=True)
            assert stable(run / "metrics.jsonl") == stable(uninterrupted / "metrics.jsonl"), (number, after)


def newest_state_file(run: Path) -> Path:
    checkpoint = read_checkpoint(manifest_path(run / "checkpoints", 3))
    return Path(checkpoint.backend_state)


def flip_a_bit(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


def truncate_manifest(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def edit_field(path: Path) -> None:
    raw = json.loads(path.read_text())
    raw["iteration"] = 1  # an edited iteration count, the checksum left as it was
    path.write_text(json.dumps(raw))


def edit_field_and_checksum(path: Path) -> None:
    raw = json.loads(path.read_text())
    raw["iteration"] = 1
    raw["checksum"] = manifest_checksum(raw)  # a forged checksum: the position no longer adds up
    path.write_text(json.dumps(raw))


Damage = Callable[[Path], None]
DAMAGES: dict[str, tuple[Callable[[Path], Path], Damage, str]] = {
    "bit flip in the state": (newest_state_file, flip_a_bit, "damaged"),
    "state deleted": (newest_state_file, Path.unlink, "missing"),
    "truncated manifest": (lambda run: manifest_path(run / "checkpoints", 3), truncate_manifest, "not a readable"),
    "edited field": (lambda run: manifest_path(run / "checkpoints", 3), edit_field, "checksum does not match"),
    "forged checksum": (
        lambda run: manifest_path(run / "checkpoints", 3),
        edit_field_and_checksum,
        "is not warm-start steps plus RL iterations",
    ),
}


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_newest_checkpoint_falls_back_to_the_newest_intact_one(
    name: str, registry: Registry, tmp_path: Path, uninterrupted: Path
) -> None:
    where, damage, reason = DAMAGES[name]
    run = tmp_path / "run"
    train(registry, run)
    target = where(run)
    damage(target)
    messages: list[str] = []
    outcome = train(registry, run, resume=True, messages=messages)
    assert outcome.iterations == 3
    said = "\n".join(messages)
    assert f"passed over a damaged checkpoint: {target}" in said or f"passed over a damaged checkpoint: {run}" in said
    assert reason in said
    assert "resuming from the newest intact checkpoint, step 2" in said
    assert stable(run / "metrics.jsonl") == stable(uninterrupted / "metrics.jsonl")
    kept = list((run / "set_aside" / "resume_01" / "checkpoints").rglob("*"))
    assert any(p.name == "step_000003.json" for p in kept)  # kept, not deleted
    assert read_checkpoint(manifest_path(run / "checkpoints", 3)).iteration == 3  # redone


def test_every_checkpoint_damaged_starts_over_and_finishes(
    registry: Registry, tmp_path: Path, uninterrupted: Path
) -> None:
    run = tmp_path / "run"
    train(registry, run)
    for manifest in (run / "checkpoints").glob("step_*.json"):
        flip_a_bit(Path(read_checkpoint(manifest).backend_state))
    messages: list[str] = []
    outcome = train(registry, run, resume=True, messages=messages)
    assert outcome.iterations == 3
    assert "no intact checkpoint; starting over" in "\n".join(messages)
    assert stable(run / "metrics.jsonl") == stable(uninterrupted / "metrics.jsonl")


def test_a_run_with_a_damaged_newest_checkpoint_is_refused_as_a_checkpoint_argument(
    registry: Registry, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    train(registry, run)
    newest = Path(read_checkpoint(manifest_path(run / "checkpoints", 3)).backend_state)
    flip_a_bit(newest)
    with pytest.raises(CheckpointError) as raised:
        load_checkpoint_argument(run)
    message = str(raised.value)
    assert str(newest) in message and "damaged" in message
    assert "the newest intact one is" in message and "step_000002.json" in message
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint_argument(manifest_path(run / "checkpoints", 3))
    assert load_checkpoint_argument(manifest_path(run / "checkpoints", 2)).step == 2


def test_a_checkpoint_past_the_end_of_the_config_is_refused_in_one_line(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    assert main(["train", str(run_file), *BASE_OVERRIDES, *RUN, "--run-dir", str(run)]) == 0
    capsys.readouterr()
    code = main(["train", str(run_file), *BASE_OVERRIDES, *RUN, "training.num_iterations=2", "--resume", str(run)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert err[-1].startswith("debate: error: ") and "3 RL iterations done but the run plans 2" in err[-1]
    assert "training.num_iterations" in err[-1] and "Traceback" not in "\n".join(err)
    assert read_checkpoint(manifest_path(run / "checkpoints", 3)).iteration == 3  # nothing lost
