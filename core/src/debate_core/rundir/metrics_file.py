"""``metrics.jsonl``, the run directory's own record of its steps: written a record a line
(:class:`MetricsRecord`, whatever metric sinks are configured), read line by line with a bounded
read (which lines are intact records, which are damaged), and the clean file a resumed run
continues (docs/training.md#the-metrics-file-on-resume).

A line is an intact record when it is UTF-8, a JSON object, and has an integer ``step`` of at
least 1 (``true`` is not an integer). Each record is written as one line ending in a newline, so
a crash or a full disk can tear only the last line, which then has no newline.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import attrs

from debate_core.files import StepRecords, atomic_write_text, output_write_errors
from debate_core.limits import loads_json, read_limited_bytes
from debate_core.records.json_values import JsonObject

METRICS_NAME = "metrics.jsonl"
"""The file of the run directory that holds one record per step."""

MAX_LINES_NAMED = 10
"""Damaged lines named one by one in the messages of a repair; the rest are counted."""


@attrs.frozen
class MetricsLine:
    """One line of the file: its record when intact, else why it is not (``problem``)."""

    number: int
    text: str
    record: JsonObject | None
    problem: str | None
    ends_with_newline: bool

    @property
    def blank(self) -> bool:
        return self.problem is None and self.record is None


def metrics_lines(data: bytes) -> Iterator[MetricsLine]:
    """Every line of ``data`` (a ``metrics.jsonl`` file's bytes), numbered from 1, classified."""
    lines = data.split(b"\n")
    last = len(lines) - 1
    for index, raw in enumerate(lines):
        if index == last and not raw:
            return  # the file ends with a newline
        yield _classify(index + 1, raw, ends_with_newline=index < last)


def _classify(number: int, raw: bytes, *, ends_with_newline: bool) -> MetricsLine:
    def damaged(text: str, problem: str) -> MetricsLine:
        return MetricsLine(number, text, None, problem, ends_with_newline)

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return damaged(raw.decode("utf-8", errors="replace"), f"not UTF-8 (byte {exc.start + 1})")
    if not text.strip():
        return MetricsLine(number, text, None, None, ends_with_newline)
    try:
        record = loads_json(text)
    except ValueError as exc:
        return damaged(text, str(exc).split(": line ")[0])
    if not isinstance(record, dict):
        return damaged(text, f"a JSON {type(record).__name__}, not an object")
    if "step" not in record:
        return damaged(text, "no 'step'")
    step = record["step"]
    if not isinstance(step, int) or isinstance(step, bool):
        return damaged(text, f"'step' is {_as_json(step)}, not an integer")
    if step < 1:
        return damaged(text, f"'step' is {step}; steps count from 1")
    return MetricsLine(number, text, record, None, ends_with_newline)


def _as_json(value: object, limit: int = 40) -> str:
    """``value`` as it reads in the file (``"x"``, ``true``), cut to ``limit`` characters."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


class MetricsRecord(StepRecords):
    """Appends ``{"step": step, ...metrics}`` to the run's ``metrics.jsonl`` as one line
    (``files.StepRecords``: unbuffered, fsynced, non-finite numbers as ``null``)."""


def read_metrics_lines(path: Path) -> Iterator[MetricsLine]:
    """Every line of the file at ``path``, read up to the ``metrics_bytes`` limit (docs/limits.md).

    Raises:
        DebateError: the file cannot be read, or is longer than the limit (the message names it).
    """
    return metrics_lines(read_limited_bytes(path, "metrics file", limit="metrics_bytes"))


def intact_records(path: Path, up_to_step: int) -> list[JsonObject]:
    """The intact records of steps ``1..up_to_step`` in file order (none when the file is
    missing); damaged lines are left out, as the resume's repair leaves them.

    Raises:
        DebateError: the file cannot be read, or is longer than the limit.
    """
    if not path.exists():
        return []
    return [
        line.record
        for line in read_metrics_lines(path)
        if line.record is not None and int(line.record["step"]) <= up_to_step
    ]


@attrs.frozen
class DamagedLine:
    """A line left out of the clean file, and why."""

    number: int
    problem: str


@attrs.frozen
class MetricsRepair:
    """What resuming kept of ``metrics.jsonl``: the records of steps up to ``up_to_step`` in
    file order, each step once; ``dropped`` intact records past it (the resumed run redoes those
    steps); a ``torn_last_line`` (a crash mid-write) left out quietly; the ``damaged`` lines; and
    where the damaged original was kept (``original``; ``None`` when nothing was damaged); the
    ``missing`` steps up to ``up_to_step`` that have no record."""

    path: Path
    up_to_step: int
    kept: int
    dropped: int
    torn_last_line: bool
    damaged: tuple[DamagedLine, ...]
    missing: tuple[int, ...]
    original: Path | None
    absent: bool = False
    """The file did not exist (deleted, or never written)."""

    def messages(self) -> list[str]:
        """One line per damaged line (the first ``MAX_LINES_NAMED``), where the original went, and
        the steps up to the checkpoint that have no record; nothing for an intact file."""
        out = [
            f"debate: {self.path} line {line.number}: {line.problem}; left out"
            for line in self.damaged[:MAX_LINES_NAMED]
        ]
        if len(self.damaged) > MAX_LINES_NAMED:
            out.append(f"debate: {self.path}: {len(self.damaged) - MAX_LINES_NAMED} more damaged lines left out")
        if self.original is not None:
            out.append(
                f"debate: {self.path} had {len(self.damaged)} damaged line(s); the original is kept as "
                f"{self.original}, and the {self.kept} intact record(s) up to step {self.up_to_step} were "
                "written back"
            )
        if self.missing:
            gone = "is gone: it " if self.absent else ""
            out.append(
                f"debate: {self.path} {gone}has no record of step(s) {ranges(self.missing)} (the run resumes "
                f"after step {self.up_to_step}); those steps stay missing from the metrics"
            )
        return out


def repair_metrics(path: Path, up_to_step: int) -> MetricsRepair:
    """Rewrite ``path`` (atomically) with its intact records of steps ``1..up_to_step`` in file
    order; a record whose step does not follow the previous kept one is damaged. When any line
    other than a torn last one is damaged, the original is first kept beside as
    ``<name>.damaged-<n>`` (a fresh ``n``, never overwriting). A missing file is left missing, and
    every step up to ``up_to_step`` is then ``missing``.

    Raises:
        OutputWriteError: the original or the clean file cannot be written.
    """
    if not path.exists():
        return MetricsRepair(path, up_to_step, 0, 0, False, (), tuple(range(1, up_to_step + 1)), None, absent=True)
    data = read_limited_bytes(path, "metrics file", limit="metrics_bytes")
    kept: list[str] = []
    kept_steps: set[int] = set()
    last_kept = 0
    dropped = 0
    torn = False
    damaged: list[DamagedLine] = []
    for line in metrics_lines(data):
        if line.record is None:
            if line.problem is None:
                continue  # a blank line holds nothing
            if not line.ends_with_newline:
                torn = True  # the sink's last write, cut short
            else:
                damaged.append(DamagedLine(line.number, line.problem))
            continue
        step = int(line.record["step"])
        if step > up_to_step:
            dropped += 1
        elif step <= last_kept:
            damaged.append(DamagedLine(line.number, f"step {step} after step {last_kept} (repeated or out of order)"))
        else:
            kept.append(line.text.rstrip("\r"))
            kept_steps.add(step)
            last_kept = step
    missing = tuple(step for step in range(1, up_to_step + 1) if step not in kept_steps)
    original = _keep_original(path, data) if damaged else None
    atomic_write_text(path, "".join(text + "\n" for text in kept))
    return MetricsRepair(path, up_to_step, len(kept), dropped, torn, tuple(damaged), missing, original)


def _keep_original(path: Path, data: bytes) -> Path:
    """Write ``data`` to the first ``<name>.damaged-<n>`` that does not exist yet."""
    number = 1
    while True:
        candidate = path.with_name(f"{path.name}.damaged-{number}")
        with output_write_errors(candidate):
            try:
                with open(candidate, "xb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
            except FileExistsError:
                number += 1
                continue
            except BaseException:
                candidate.unlink(missing_ok=True)
                raise
        return candidate


def ranges(steps: tuple[int, ...]) -> str:
    """``1-3, 7``: consecutive steps as ranges."""
    parts: list[str] = []
    start = previous = steps[0]
    for step in (*steps[1:], None):
        if step is not None and step == previous + 1:
            previous = step
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if step is not None:
            start = previous = step
    return ", ".join(parts)
