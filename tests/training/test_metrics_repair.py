"""Resuming reads metrics.jsonl strictly up to the checkpoint's step (docs/training.md, "Damaged
checkpoints"): damaged lines are named by number and dropped, the original is kept beside, and a
torn last line (a crash mid-write) is dropped quietly."""

from __future__ import annotations

import json
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from debate_core.plugins import Registry
from debate_core.runtime.manifests import manifest_path
from debate_core.training.run_dir import RunDirectory
from tests.training.fault_runs import stable, train


def record(step: int) -> bytes:
    return json.dumps({"step": step, "loss": step / 10}).encode() + b"\n"


CASES: dict[str, tuple[bytes, int, list[int], str | None]] = {
    "intact": (record(1) + record(2) + record(3), 3, [1, 2, 3], None),
    "later steps are redone": (record(1) + record(2) + record(3), 1, [1], None),
    "torn last line": (record(1) + record(2) + b'{"step": 3, "lo', 2, [1, 2], None),
    "torn middle line": (record(1) + b'{"step": 2, "lo\n' + record(3), 3, [1, 3], "line 2: not valid JSON"),
    "non-UTF-8 bytes": (record(1) + b'{"step": 2, "x": "\xff\xfe"}\n' + record(3), 3, [1, 3], "line 2: not UTF-8"),
    "step not a number": (record(1) + b'{"step": "x"}\n' + record(2), 2, [1, 2], "line 2: not a metrics record"),
    "step true": (record(1) + b'{"step": true}\n' + record(2), 2, [1, 2], "line 2: not a metrics record"),
    "a list": (record(1) + b"[1, 2]\n", 1, [1], "line 2: not a metrics record"),
    "duplicate step": (record(1) + record(2) + record(2) + record(3), 3, [1, 2, 3], "line 3: step 2 repeats"),
    "a step going back": (record(1) + record(3) + record(2), 3, [1, 3], "line 3: step 2 repeats or goes back"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_kind_of_damage_is_named_and_dropped(name: str, tmp_path: Path) -> None:
    content, up_to, steps, problem = CASES[name]
    run = RunDirectory(tmp_path)
    run.metrics_path.write_bytes(content)
    repair = run.repair_metrics(up_to)
    assert [json.loads(line)["step"] for line in run.metrics_path.read_text().splitlines()] == steps
    if problem is None:
        assert repair.damaged == () and repair.original is None and repair.messages() == []
    else:
        assert len(repair.damaged) == 1 and problem in repair.damaged[0]
        assert repair.original is not None and repair.original.read_bytes() == content  # kept as it was
        assert any(problem in line for line in repair.messages())


def test_the_damaged_original_is_never_overwritten(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path)
    firsts = []
    for attempt in range(3):
        run.metrics_path.write_bytes(record(1) + b"garbage %d\n" % attempt)
        firsts.append(run.repair_metrics(1).original)
    assert [p.name for p in firsts if p] == [f"metrics.jsonl.damaged-{n}" for n in (1, 2, 3)]
    assert [p.read_bytes() for p in firsts if p] == [record(1) + b"garbage %d\n" % n for n in range(3)]


@settings(max_examples=200, deadline=None)
@given(
    garbage=st.lists(st.binary(max_size=40), max_size=6),
    positions=st.lists(st.integers(0, 5), max_size=6),
    up_to=st.integers(0, 6),
)
def test_any_garbage_between_records_keeps_every_intact_record(
    garbage: list[bytes], positions: list[int], up_to: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    lines = [record(step) for step in range(1, 6)]
    for junk, where in zip(garbage, positions, strict=False):
        lines.insert(where, junk.replace(b"\n", b" ") + b"\n")
    run = RunDirectory(tmp_path_factory.mktemp("m"))
    run.metrics_path.write_bytes(b"".join(lines))
    repair = run.repair_metrics(up_to)
    kept = [json.loads(line) for line in run.metrics_path.read_text().splitlines()]
    assert [r["step"] for r in kept][: min(up_to, 5)] == list(range(1, min(up_to, 5) + 1))
    assert all(r["step"] <= up_to for r in kept) and repair.kept == len(kept)


def test_a_resumed_run_with_a_torn_middle_line_says_so_and_keeps_the_rest(
    registry: Registry, tmp_path: Path, uninterrupted: Path
) -> None:
    run = tmp_path / "run"
    train(registry, run)
    metrics = run / "metrics.jsonl"
    lines = metrics.read_bytes().split(b"\n")
    lines[1] = lines[1][: len(lines[1]) // 2]  # step 2's line torn in the middle of the file
    metrics.write_bytes(b"\n".join(lines))
    damaged = metrics.read_bytes()
    manifest_path(run / "checkpoints", 3).unlink()  # resume from step 2: step 3 is redone
    messages: list[str] = []
    train(registry, run, resume=True, messages=messages)
    said = "\n".join(messages)
    assert "metrics.jsonl line 2: not valid JSON" in said and "no record of step(s) 2" in said, said
    assert (run / "metrics.jsonl.damaged-1").read_bytes() == damaged
    expected = [r for r in stable(uninterrupted / "metrics.jsonl") if r["step"] != 2]
    assert stable(metrics) == expected
