"""Resuming reads metrics.jsonl strictly up to the checkpoint's step, names each damaged line and
keeps the damaged original beside the clean file (docs/training.md#the-metrics-file-on-resume)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from debate_core.plugin import Registry
from debate_core.rundir.directory import RunDirectory
from debate_core.rundir.metrics_file import MetricsRepair, repair_metrics
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.training.trainer_harness import make_config, read_metrics, train_quietly, without_timings

train = train_quietly
stable = without_timings


def record(step: int, **extra: object) -> bytes:
    return json.dumps({"step": step, "phase": "rl", "loss": 0.5 * step, **extra}).encode() + b"\n"


def steps_of(path: Path) -> list[int]:
    return [json.loads(line)["step"] for line in path.read_text(encoding="utf-8").splitlines()]


# (name, file bytes, checkpoint step, kept steps, damaged line numbers, torn last line)
CASES = [
    ("intact", record(1) + record(2) + record(3), 3, [1, 2, 3], [], False),
    ("records past the checkpoint are redone", record(1) + record(2) + record(3), 1, [1], [], False),
    ("torn last line", record(1) + record(2) + b'{"step": 3, "phase": "rl", "lo', 2, [1, 2], [], True),
    ("torn last line cut inside a character", record(1) + '{"step": 2, "name": "é'.encode()[:-1], 1, [1], [], True),
    ("torn line in the middle", record(1) + b'{"step": 2, "phase": "r\n' + record(3), 3, [1, 3], [2], False),
    ("bytes that are not UTF-8", record(1) + b'{"step": 2, "x": "\xff\xfe"}\n' + record(2), 2, [1, 2], [2], False),
    ('step "x"', record(1) + b'{"step": "x"}\n' + record(2), 2, [1, 2], [2], False),
    ("step true", record(1) + b'{"step": true}\n' + record(2), 2, [1, 2], [2], False),
    ("step 2.0", record(1) + b'{"step": 2.0}\n' + record(2), 2, [1, 2], [2], False),
    ("step 0", b'{"step": 0}\n' + record(1), 1, [1], [1], False),
    ("no step", record(1) + b'{"phase": "rl"}\n', 1, [1], [2], False),
    ("not an object", b"[1, 2]\n" + record(1) + b"null\n", 1, [1], [1, 3], False),
    ("duplicate step", record(1) + record(2) + record(2, loss=9) + record(3), 3, [1, 2, 3], [3], False),
    ("step going back", record(1) + record(3) + record(2), 3, [1, 3], [3], False),
    ("a duplicate past the checkpoint is redone anyway", record(1) + record(2) + record(2), 1, [1], [], False),
    ("a damaged line after the checkpoint's records", record(1) + b"{oops\n" + record(2), 1, [1], [2], False),
    ("blank lines hold nothing", record(1) + b"\n  \n" + record(2), 2, [1, 2], [], False),
    ("nested too deeply", record(1) + b"[" * 100_000 + b"]" * 100_000 + b"\n", 1, [1], [2], False),
    ("an integer too long to read", record(1) + b'{"step": ' + b"9" * 10_000 + b"}\n", 1, [1], [2], False),
    ("windows line ends", record(1).replace(b"\n", b"\r\n") + record(2), 2, [1, 2], [], False),
]


@pytest.mark.parametrize(
    ("data", "up_to", "kept", "damaged", "torn"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_damaged_files(
    tmp_path: Path, data: bytes, up_to: int, kept: list[int], damaged: list[int], torn: bool
) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(data)
    repair = repair_metrics(path, up_to)
    assert steps_of(path) == kept
    assert [line.number for line in repair.damaged] == damaged
    assert repair.torn_last_line is torn
    assert repair.kept == len(kept)
    assert repair.missing == tuple(s for s in range(1, up_to + 1) if s not in kept)
    if damaged:
        assert repair.original == tmp_path / "metrics.jsonl.damaged-1"
        assert repair.original.read_bytes() == data  # the damaged original, byte for byte
    else:
        assert repair.original is None and not list(tmp_path.glob("*.damaged-*"))
    # the clean file is clean: repairing it again changes nothing and finds nothing
    clean = path.read_bytes()
    again = repair_metrics(path, up_to)
    assert path.read_bytes() == clean and not again.damaged and not again.torn_last_line


def test_every_damaged_line_is_named_once_and_where_the_original_went(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(record(1) + b'{"step": 2, "lo\n' + b'{"step": "x"}\n' + record(2) + record(2) + b"\xff\n")
    lines = repair_metrics(path, 2).messages()
    assert lines[:4] == [
        f"debate: {path} line 2: not valid JSON: Unterminated string starting at; left out",
        f"debate: {path} line 3: 'step' is \"x\", not an integer; left out",
        f"debate: {path} line 5: step 2 after step 2 (repeated or out of order); left out",
        f"debate: {path} line 6: not UTF-8 (byte 1); left out",
    ]
    assert lines[4] == (
        f"debate: {path} had 4 damaged line(s); the original is kept as {path}.damaged-1, and the 2 intact "
        "record(s) up to step 2 were written back"
    )
    assert len(lines) == 5


def test_many_damaged_lines_are_counted_past_the_first_ten(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(record(1) + b"garbage\n" * 25)
    lines = repair_metrics(path, 1).messages()
    assert len(lines) == 12 and lines[10] == f"debate: {path}: 15 more damaged lines left out"


def test_missing_steps_are_said_as_ranges(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(record(1) + record(4) + record(7))
    repair = repair_metrics(path, 8)
    assert repair.missing == (2, 3, 5, 6, 8) and repair.original is None
    assert repair.messages() == [
        f"debate: {path} has no record of step(s) 2-3, 5-6, 8 (the run resumes after step 8); those steps "
        "stay missing from the metrics"
    ]


def test_an_intact_file_gives_no_message_and_a_missing_one_is_said_and_stays_missing(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    repair = repair_metrics(path, 3)
    assert repair == MetricsRepair(path, 3, 0, 0, False, (), (1, 2, 3), None, absent=True)
    assert repair.messages() == [
        f"debate: {path} is gone: it has no record of step(s) 1-3 (the run resumes after step 3); those steps "
        "stay missing from the metrics"
    ]
    assert not path.exists()
    assert repair_metrics(path, 0).messages() == []  # a fresh run: nothing to miss
    path.write_bytes(record(1) + record(2) + b'{"step": 3, "lo')
    repair = repair_metrics(path, 2)
    assert repair.messages() == [] and repair.torn_last_line


def test_a_kept_original_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    first = record(1) + b"first damage\n"
    path.write_bytes(first)
    assert repair_metrics(path, 1).original == tmp_path / "metrics.jsonl.damaged-1"
    second = record(1) + b"second damage\n"
    path.write_bytes(second)
    assert repair_metrics(path, 1).original == tmp_path / "metrics.jsonl.damaged-2"
    assert (tmp_path / "metrics.jsonl.damaged-1").read_bytes() == first
    assert (tmp_path / "metrics.jsonl.damaged-2").read_bytes() == second


# ---------------------------------------------------------------- any file, any damage

records = st.lists(
    st.fixed_dictionaries({"loss": st.floats(allow_nan=False, allow_infinity=False), "tag": st.text(max_size=8)}),
    max_size=8,
)


def _torn(line: bytes) -> st.SearchStrategy[bytes]:
    """A strict, non-empty prefix of a record's line (no newline): never a whole JSON object."""
    body = line.rstrip(b"\n")
    return st.integers(1, len(body) - 1).map(lambda n: body[:n])


garbage = st.one_of(
    st.binary(max_size=20).map(lambda b: b"\xff" + b.replace(b"\n", b"")),  # not UTF-8
    st.sampled_from([b'{"step": "x"}', b'{"step": true}', b'{"step": null}', b'{"step": 1.5}', b"[]", b"{}", b"42"]),
    st.integers(1, 9).flatmap(lambda s: _torn(record(s))),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    metrics=records,
    damage=st.lists(st.tuples(st.integers(0, 20), garbage, st.booleans()), max_size=5),
    up_to=st.integers(0, 10),
    torn_end=st.booleans(),
)
def test_any_damage_keeps_exactly_the_intact_records_up_to_the_checkpoint(
    tmp_path: Path, metrics: list[dict[str, object]], damage: list[tuple[int, bytes, bool]], up_to: int, torn_end: bool
) -> None:
    # the file an uninterrupted run writes, then damage: garbage lines and repeated records
    # inserted anywhere, and maybe a torn last line
    lines: list[tuple[bytes, int | None]] = [  # (line, its step; None for garbage)
        (record(step, **extra), step) for step, extra in enumerate(metrics, start=1)
    ]
    for position, junk, repeat in damage:
        at = min(position, len(lines))
        lines.insert(at, lines[at - 1] if repeat and at > 0 else (junk + b"\n", None))
    data = b"".join(line for line, _ in lines) + (b'{"step": 99, "lo' if torn_end else b"")
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(data)
    for old in tmp_path.glob("metrics.jsonl.damaged-*"):
        old.unlink()

    repair = repair_metrics(path, up_to)

    intact_up_to = [record(step, **extra) for step, extra in enumerate(metrics, start=1) if step <= up_to]
    assert path.read_bytes() == b"".join(intact_up_to)
    expected_damaged = []
    seen_steps: set[int] = set()
    for number, (_, step) in enumerate(lines, start=1):
        if step is None or (step in seen_steps and step <= up_to):
            expected_damaged.append(number)  # garbage, or a repeat of a kept record
        else:
            seen_steps.add(step)
    assert [line.number for line in repair.damaged] == expected_damaged
    assert repair.torn_last_line is torn_end
    assert (repair.original is not None) == bool(expected_damaged)
    if repair.original is not None:
        assert repair.original.read_bytes() == data


# ---------------------------------------------------------------- a resumed run


def test_a_run_resumed_over_a_damaged_file_has_the_uninterrupted_runs_metrics(
    registry: Registry, tmp_path: Path, straight_run: Path
) -> None:
    run = tmp_path / "run"
    stopper = make_config("logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=2}}]")
    first = train(stopper, registry, run)
    assert first.stopped_by == "SIGTERM" and first.last_checkpoint == 2
    one, two = (run / "metrics.jsonl").read_bytes().splitlines(keepends=True)
    past = json.dumps({**json.loads(two), "step": 3}).encode() + b"\n"
    damaged = b"".join(
        [
            one,
            two[:40] + b"\n",  # torn in the middle of the file
            b'{"step": "x", "phase": "rl"}\n',
            b'{"step": 2, "phase": "\xff"}\n',  # not UTF-8
            one,  # step 1 again
            two,
            b'{"step": true}\n',
            past,  # a record after the checkpoint: redone, not damage
            two[:25],  # torn last line: a crash mid-write, left out quietly
        ]
    )
    (run / "metrics.jsonl").write_bytes(damaged)

    shown = io.StringIO()
    resumed = asyncio.run(
        run_training(
            make_config(),
            registry,
            RunDirectory(run),
            resume=True,
            progress=Progress("off", shown),
            handle_signals=False,
        )
    )
    assert resumed.iterations == 4
    assert stable(read_metrics(run / "metrics.jsonl")) == stable(read_metrics(straight_run / "metrics.jsonl"))
    assert (run / "metrics.jsonl.damaged-1").read_bytes() == damaged
    # the damaged lines' messages (the record's own line about the resume aside)
    lines = shown.getvalue().splitlines()
    messages = [line for line in lines if "metrics.jsonl" in line and not line.startswith("metrics: appends")]
    assert [m.split(": ")[1] for m in messages[:5]] == [f"{run / 'metrics.jsonl'} line {n}" for n in (2, 3, 4, 5, 7)]
    assert f"the original is kept as {run / 'metrics.jsonl.damaged-1'}" in messages[5] and len(messages) == 6


def test_the_run_directory_writes_metrics_jsonl_whatever_sinks_are_configured(
    registry: Registry, tmp_path: Path
) -> None:
    """The record is the run directory's: with no sink, with a sink of another kind only, with the
    ``jsonl`` sink (its default file is the record itself: one line a step), and with ``jsonl``
    under another name (an extra copy)."""
    runs = {
        "none": "logging.sinks=[]",
        "other": "logging.sinks=[{name='signal_after', options={step=99}}]",
        "jsonl": "logging.sinks=[{name='jsonl'}]",
        "copy": "logging.sinks=[{name='jsonl', options={filename='copy.jsonl'}}]",
    }
    for name, sinks in runs.items():
        train(make_config(sinks, "training.num_iterations=2"), registry, tmp_path / name, handle_signals=False)
    expected = stable(read_metrics(tmp_path / "jsonl" / "metrics.jsonl"))
    assert [r["step"] for r in expected] == [1, 2]
    for name in runs:
        assert stable(read_metrics(tmp_path / name / "metrics.jsonl")) == expected, name
    assert (tmp_path / "copy" / "copy.jsonl").read_bytes() == (tmp_path / "copy" / "metrics.jsonl").read_bytes()


def test_a_run_without_the_jsonl_sink_resumes_from_its_own_record(registry: Registry, tmp_path: Path) -> None:
    """Resume repair and the alarms' replay read the run directory's record, not a sink's file."""
    run = tmp_path / "run"
    sinks = "logging.sinks=[]"
    train(make_config(sinks, "training.num_iterations=2", "training.save_every=1"), registry, run, handle_signals=False)
    with (run / "metrics.jsonl").open("ab") as handle:
        handle.write(record(3)[:-9])  # a torn last line, as a crash leaves it
    train(make_config(sinks, "training.num_iterations=4", "training.save_every=1"), registry, run, resume=True)
    assert steps_of(run / "metrics.jsonl") == [1, 2, 3, 4]


def test_the_records_a_resume_reads_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from debate_core.errors import LimitExceeded

    run = RunDirectory(tmp_path)
    run.metrics_path.write_bytes(record(1) + record(2) + b"not json\n" + record(3))
    assert [r["step"] for r in run.metric_records(2)] == [1, 2]
    monkeypatch.setenv("DEBATE_MAX_METRICS_BYTES", "40")
    with pytest.raises(LimitExceeded, match=r"metrics\.jsonl: longer than the limit of 40 bytes"):
        run.metric_records(2)
