"""``debate compare``: runs side by side. What differs in their resolved configs, their
evaluations in chosen columns with each change against the first column (paired per problem
where the runs evaluate the same problems), and their curves overlaid, one colour per run
(docs/training.md#comparing-runs)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from debate_core.errors import DebateError
from debate_core.records.json_values import JsonMapping
from debate_core.report.charts import PALETTE
from debate_core.report.evaluation_table import (
    evaluation_prefixes,
    headline_rows,
    metrics_of,
    other_rows,
    paired_between,
)
from debate_core.report.run_data import RunData, read_evaluation_run, read_run
from debate_core.report.segments import flatten
from debate_core.rundir.environment import latest_facts
from debate_core.rundir.evaluation_figures import Change, change_in, recorded_paired
from debate_core.rundir.evaluation_records import metric_matches

PROBLEM_KEYS = re.compile(r"(dataset|evaluation\.(split|num_problems))(\..*)?")
"""The resolved-config keys that fix which problems an evaluation runs on, in which order."""


class CompareError(DebateError):
    """The runs or the columns asked for cannot be compared."""


@attrs.frozen
class ComparedRun:
    """One run of a comparison: its name on the page, its colour, what was read of it and its
    resolved config flattened to dotted keys (empty when unreadable), with where it last computed
    under ``environment.`` (``rundir.environment``)."""

    name: str
    colour: str
    data: RunData
    config: Mapping[str, object]


@attrs.frozen
class Column:
    """One evaluation shown in the table: its title and which run's which record."""

    title: str
    run: int
    """The run's position in the comparison (0-based)."""
    record: JsonMapping


def read_runs(roots: Sequence[Path]) -> list[ComparedRun]:
    """Read every run directory, or evaluation file of ``debate eval --out`` (a run that cannot be
    read at all is an error naming it); runs of the same name are told apart by their position."""
    if not roots:
        raise CompareError("name at least one run directory")
    names = [root.resolve().name for root in roots]
    runs = []
    for index, root in enumerate(roots):
        data = read_evaluation_run(root) if root.is_file() else read_run(root, max_debates=0)
        config: dict[str, object] = {}
        if data.config_text is not None:
            try:
                config = flatten(tomllib.loads(data.config_text))
            except (ValueError, RecursionError):  # not TOML, an integer too long, nested too deeply
                config = {}
        config.update(flatten({"environment": latest_facts(data.environment)}))  # none for an evaluation file
        name = names[index] if names.count(names[index]) == 1 else f"{names[index]} ({index + 1})"
        runs.append(ComparedRun(name, PALETTE[index % len(PALETTE)], data, config))
    return runs


def config_differences(runs: Sequence[ComparedRun]) -> list[tuple[str, list[object]]]:
    """Every resolved-config key whose value is not the same in all runs, with each run's value
    (``None`` where a run has no such key)."""
    keys = sorted(set().union(*(run.config for run in runs)))
    out = []
    for key in keys:
        values = [run.config.get(key) for run in runs]
        if any(v != values[0] for v in values[1:]):
            out.append((key, values))
    return out


def same_problems(a: ComparedRun, b: ComparedRun) -> bool:
    """Whether two runs evaluate the same problems in the same order (the same run, or resolved
    configs that agree on the dataset and the evaluation's split and number of problems). A key
    only one config holds is an option added after the other run was made, which ran with its
    default, so only the keys both hold are compared."""
    if a is b:
        return True
    if not a.config or not b.config:
        return False
    keys = {k for k in a.config if k in b.config and PROBLEM_KEYS.fullmatch(k)}
    return bool(keys) and all(a.config[k] == b.config[k] for k in keys)


def pick_evaluation(run: ComparedRun, which: str) -> JsonMapping:
    """A run's evaluation record: ``first``, ``last`` or the latest one labelled ``which``."""
    records = run.data.evaluations
    if not records:
        raise CompareError(f"{run.data.root}: holds no evaluation yet (eval/step_*.json)")
    if which == "first":
        return records[0]
    if which == "last":
        return records[-1]
    labelled = [r for r in records if str(r.get("label")) == which]
    if not labelled:
        labels = ", ".join(dict.fromkeys(str(r.get("label")) for r in records))
        raise CompareError(f"{run.data.root}: no evaluation labelled '{which}' (it has: {labels}; or first, last)")
    return labelled[-1]


def parse_column(spec: str, runs: Sequence[ComparedRun]) -> Column:
    """``TITLE=RUN:WHICH``: RUN a run's position (1 for the first named), WHICH ``first``, ``last``
    or an evaluation label (``warmstart``, ``final``, ...)."""
    title, equals, where = spec.rpartition("=")
    run_text, colon, which = where.partition(":")
    if not equals or not title or not colon or not which or not run_text.isdigit():
        raise CompareError(f"--column {spec!r}: expected TITLE=RUN:WHICH, e.g. 'after warm-start=1:first'")
    position = int(run_text)
    if not 1 <= position <= len(runs):
        raise CompareError(f"--column {spec!r}: run {position} is not one of the {len(runs)} runs named")
    return Column(title, position - 1, pick_evaluation(runs[position - 1], which))


def default_columns(runs: Sequence[ComparedRun]) -> list[Column]:
    """The first evaluation of the first run that has one (the baseline), then every run's last
    evaluation; a run with no evaluation yet (still in its warm-start) has no column."""
    evaluated = [index for index, run in enumerate(runs) if run.data.evaluations]
    if not evaluated:
        return []
    first = runs[evaluated[0]]
    baseline = first.data.evaluations[0]
    columns = [Column(f"{first.name} {baseline.get('label')}", evaluated[0], baseline)]
    for index in evaluated:
        last = runs[index].data.evaluations[-1]
        if last is not baseline:
            columns.append(Column(f"{runs[index].name} {last.get('label')}", index, last))
    return columns


def column_change(runs: Sequence[ComparedRun], base: Column, column: Column, name: str) -> Change | None:
    """The change of ``name`` from the ``base`` column to ``column``: paired per problem where both
    evaluations ran on the same problems and kept their per-problem values (or, within one run, the
    change the later evaluation recorded against its run's baseline), else independent."""
    before, after = base.record["metrics"], column.record["metrics"]
    paired = None
    if same_problems(runs[base.run], runs[column.run]):
        paired = paired_between(base.record, column.record).get(name)
        first_of_run = runs[column.run].data.evaluations[0] if runs[column.run].data.evaluations else None
        if paired is None and base.run == column.run and base.record is first_of_run:
            paired = recorded_paired(after, name)
    return change_in(before, after, name, paired)


@attrs.frozen
class Rows:
    """The rows of one ``eval_<dataset>`` table: ``(metric, label)`` shown first, and the rest."""

    shown: tuple[tuple[str, str], ...]
    rest: tuple[tuple[str, str], ...]


def table_rows(columns: Sequence[Column], only: Sequence[str] = ()) -> dict[str, Rows]:
    """Per ``eval_<dataset>`` prefix, the rows to show: ``only`` (metric names without the prefix,
    a trailing ``@k`` any k) in that order and nothing else, else the headline rows then the rest."""
    out: dict[str, Rows] = {}
    for prefix in evaluation_prefixes([c.record for c in columns]):
        present = set().union(*(metrics_of(c.record, prefix) for c in columns))
        if only:
            labels = dict(headline_rows(present))
            picked = tuple(
                (name, labels.get(name, ""))
                for pattern in only
                for name in sorted(present)
                if metric_matches(name, pattern)
            )
            rows = Rows(picked, ())
        else:
            shown = headline_rows(present)
            rows = Rows(tuple(shown), tuple((name, "") for name in other_rows(present, shown)))
        if rows.shown or rows.rest:
            out[prefix] = rows
    return out


def compare_runs(roots: Sequence[Path], column_specs: Sequence[str] = ()) -> tuple[list[ComparedRun], list[Column]]:
    """Read the runs and resolve the columns (the default ones without ``column_specs``)."""
    runs = read_runs(roots)
    columns = [parse_column(spec, runs) for spec in column_specs] if column_specs else default_columns(runs)
    return runs, columns
