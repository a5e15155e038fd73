"""The evaluation records of a run directory (``eval/step_NNNNNN_<label>.json``), read back."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def read_evaluation_records(directory: Path) -> list[dict[str, Any]]:
    """Every readable evaluation record, by step (unreadable files are skipped: a run may be writing one)."""
    records: list[dict[str, Any]] = []
    if not directory.is_dir():
        return records
    for path in sorted(directory.glob("step_*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and isinstance(record.get("metrics"), dict) and isinstance(record.get("step"), int):
            records.append(record)
    return sorted(records, key=lambda r: int(r["step"]))


def best_steps(directory: Path, metric: str) -> set[int]:
    """The steps whose evaluation has the highest ``eval_<dataset>/<metric>`` (ties: all of them);
    empty when ``metric`` is empty or no evaluation reports it."""
    if not metric:
        return set()
    scores: dict[int, float] = {}
    for record in read_evaluation_records(directory):
        values = [
            float(value)
            for name, value in record["metrics"].items()
            if name.startswith("eval_") and name.split("/", 1)[-1] == metric and isinstance(value, int | float)
        ]
        if values and all(math.isfinite(v) for v in values):
            scores[int(record["step"])] = max(values)
    if not scores:
        return set()
    best = max(scores.values())
    return {step for step, value in scores.items() if value == best}
