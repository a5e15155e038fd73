"""The evaluation records of a run directory (``eval/step_NNNNNN_<label>.json``), read back: in the
order they were made, the baseline of paired changes, and the best step by a metric; and the
evaluation file of ``debate eval --out``, a record that carries its own resolved run file."""

from __future__ import annotations

import math
import re
from pathlib import Path

from debate_core.errors import DebateError
from debate_core.limits import loads_json, read_limited_text
from debate_core.records.json_values import JsonObject
from debate_core.stats import paired_difference

EVALUATION_FILE_LABEL = "eval"
"""The label of an evaluation that ``debate eval --out`` writes, unless ``--label`` names another."""

NOT_AN_EVALUATION_FILE = "is a file, not a run directory nor an evaluation file of debate eval --out"
"""What a file named where a run directory or an evaluation file may go is, when it is neither."""


class EvaluationFileError(DebateError):
    """A file named as an evaluation file is not one."""


def read_evaluation_file(path: Path) -> tuple[JsonObject, str | None]:
    """The record of an evaluation file (``debate eval --out``) and its resolved run file (``None``
    in a file written before it carried one); a file that is not such a record is an error naming
    it and what is wrong."""
    try:
        record = loads_json(read_limited_text(path, "evaluation file"))
    except ValueError as exc:
        raise EvaluationFileError(f"{path}: {NOT_AN_EVALUATION_FILE}: {exc}") from exc
    if not isinstance(record, dict) or not isinstance(record.get("metrics"), dict):
        raise EvaluationFileError(f"{path}: {NOT_AN_EVALUATION_FILE}: no 'metrics' object")
    config = record.get("config")
    if config is not None and not isinstance(config, str):
        raise EvaluationFileError(f"{path}: its 'config' is not the text of a run file")
    if not isinstance(record.get("label"), str):
        record["label"] = EVALUATION_FILE_LABEL
    record.setdefault("step", 0)
    return record, config


def _made(record: JsonObject) -> tuple[int, int]:
    """When a record was made: its step, then its training progress (an evaluation at the start
    and the first iteration's share step 0 when there is no warm-start)."""
    progress = sum(v for v in (record.get("warmstart_steps"), record.get("iteration")) if isinstance(v, int))
    return int(record["step"]), progress


def read_evaluation_records(directory: Path) -> list[JsonObject]:
    """Every readable evaluation record in ``directory``, in the order they were made (unreadable
    files are skipped: a run may be writing one)."""
    records: list[JsonObject] = []
    if not directory.is_dir():
        return records
    for path in sorted(directory.glob("step_*.json")):
        try:
            record = loads_json(read_limited_text(path, "evaluation record"))
        except (DebateError, ValueError):
            continue
        if (
            isinstance(record, dict)
            and isinstance(record.get("metrics"), dict)
            and isinstance(record.get("step"), int)
            and not isinstance(record.get("step"), bool)
        ):
            records.append(record)
    return sorted(records, key=_made)


def first_evaluation(directory: Path) -> JsonObject | None:
    """The run's earliest evaluation record (the baseline of paired changes), if any."""
    records = read_evaluation_records(directory)
    return records[0] if records else None


def latest_by_label(directory: Path) -> dict[str, dict[str, float]]:
    """The metrics of every evaluation by label (the latest of each label), in the order made."""
    found: dict[str, dict[str, float]] = {}
    for record in read_evaluation_records(directory):
        found.pop(str(record.get("label")), None)
        found[str(record.get("label"))] = dict(record["metrics"])
    return found


def paired_changes(baseline: object, current: dict[str, list[float]]) -> dict[str, float]:
    """``<metric>_change`` and ``<metric>_change_se``: the mean per-problem change of each metric
    since the baseline evaluation, paired by problem (every evaluation of a run uses the same
    problems and seeds), and its standard error (docs/training.md#evaluation)."""
    out: dict[str, float] = {}
    if not isinstance(baseline, dict):
        return out
    for name, values in current.items():
        before = baseline.get(name)
        if isinstance(before, list) and len(before) == len(values):
            change, error = paired_difference([float(x) for x in before], values)
            out[f"{name}_change"] = change
            out[f"{name}_change_se"] = error
    return out


def metric_matches(name: str, metric: str) -> bool:
    """Whether the evaluation metric ``name`` (without its ``eval_<dataset>/`` prefix) is ``metric``;
    a trailing ``@k`` in ``metric`` stands for any k (``debate/cons@k`` is ``debate/cons@3`` with
    three agents)."""
    if metric.endswith("@k"):
        return re.fullmatch(re.escape(metric[:-1]) + r"\d+", name) is not None
    return name == metric


def best_steps(directory: Path, metric: str) -> set[int]:
    """The step whose evaluation has the highest ``eval_<dataset>/<metric>`` (ties: the newest of
    them, so a metric that never moves keeps one checkpoint, not all); empty when ``metric`` is
    empty or no evaluation reports it."""
    if not metric:
        return set()
    scores: dict[int, float] = {}
    for record in read_evaluation_records(directory):
        values = [
            float(value)
            for name, value in record["metrics"].items()
            if name.startswith("eval_")
            and metric_matches(name.split("/", 1)[-1], metric)
            and isinstance(value, int | float)
        ]
        if values and all(math.isfinite(v) for v in values):
            scores[int(record["step"])] = max(values)
    if not scores:
        return set()
    best = max(scores.values())
    return {max(step for step, value in scores.items() if value == best)}
