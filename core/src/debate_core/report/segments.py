"""The segments of a run: the steps trained under one configuration. A resume with a changed
configuration writes ``config.resumed_step_NNNNNN.toml`` (docs/training.md#checkpoints-stops-faults); each such file
starts a segment after step ``NNNNNN``, and the report names the segment of every evaluation and
marks the change on the curves."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from debate_core.errors import DebateError
from debate_core.limits import read_limited_text

RESUMED = re.compile(r"config\.resumed_step_(\d+)\.toml")


@attrs.frozen
class Segment:
    """Steps after ``after`` (until the next segment) trained under the config in ``config_file``."""

    number: int
    """1 for the run's start, then 2, 3, ... in step order."""
    after: int
    """The checkpoint step it continued from (0 for the first)."""
    config_file: str
    changed: tuple[str, ...]
    """Config keys that differ from the previous segment's (empty for the first, or unreadable)."""

    def describe(self) -> str:
        """One line: where it starts, its config file and what changed."""
        if self.number == 1:
            return f"segment 1: from the start, {self.config_file}"
        changed = ", ".join(self.changed) if self.changed else "(the differences could not be read)"
        return f"segment {self.number}: resumed after step {self.after}, {self.config_file}; changed: {changed}"


def flatten(table: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """A nested config table as ``dotted.key -> value``."""
    out: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _read(path: Path) -> dict[str, object] | None:
    try:
        return flatten(tomllib.loads(read_limited_text(path, "run file")))
    except (DebateError, ValueError, RecursionError):
        return None


def read_segments(root: Path) -> tuple[Segment, ...]:
    """The run's segments in step order (one when it was never resumed with another config)."""
    resumed = sorted(
        (int(match.group(1)), path)
        for path in root.glob("config.resumed_step_*.toml")
        if (match := RESUMED.fullmatch(path.name))
    )
    segments = [Segment(1, 0, "config.toml", ())]
    previous = _read(root / "config.toml")
    for after, path in resumed:
        current = _read(path)
        changed: tuple[str, ...] = ()
        if previous is not None and current is not None:
            changed = tuple(k for k in sorted(set(previous) | set(current)) if previous.get(k) != current.get(k))
        segments.append(Segment(len(segments) + 1, after, path.name, changed))
        previous = current
    return tuple(segments)


def segment_of(segments: Sequence[Segment], step: int) -> Segment:
    """The segment an evaluation or record of ``step`` (updates done) belongs to: the last one
    that continued from an earlier step (an evaluation at the resumed step was made before it)."""
    found = segments[0]
    for segment in segments[1:]:
        if segment.after < step:
            found = segment
    return found
