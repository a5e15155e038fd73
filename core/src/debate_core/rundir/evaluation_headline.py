"""The headline figures of a run's evaluations, the table the end of ``debate train``, ``debate
eval`` and the top of the report show: direct accuracy, the debate's answer, the majority of k
direct answers (``cons@k``), the majority of as many as the debate's sampled tokens buy
(``debate/cons_matched``), the runoff's answer and the judge benchmark's accuracy, each as it
may be stated (:mod:`debate_core.rundir.evaluation_figures`) with its change from the first
evaluation to the last. Every other metric is in the evaluation files and the report's full table.

Evaluations of fewer than ``MIN_OBSERVATIONS`` problems are said to be too small for an SE once,
under the table, not on every row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import attrs

from debate_core.config.sections import JUDGE_FAMILIES
from debate_core.rundir.evaluation_figures import (
    MIN_OBSERVATIONS,
    Change,
    Figure,
    change_in,
    is_number,
    read_figure,
    recorded_paired,
)

HEADLINE_FIGURES: tuple[tuple[str, str], ...] = (
    ("direct", "one answer (direct accuracy)"),
    ("debate", "the debate's answer"),
    ("cons", "majority of {k} answers (cons@{k})"),
    ("matched", "majority at the debate's tokens (cons@{k})"),
    ("runoff", "the runoff's answer"),
    ("judge", "judge accuracy (benchmark)"),
)
"""The rows, in order: a short key and the row's label (``{k}``: the number of answers)."""

_CONS = re.compile(r"/direct/cons@(\d+)$")
JUDGE_FAMILIES_AFTER_SLIP = tuple(f for f in JUDGE_FAMILIES if f != "slip")
"""The judge benchmark's families whose accuracy heads the table, in the benchmark's order, when
the ``slip`` family (``judge/accuracy``) was not run (``evaluation.judge_families``)."""


@attrs.frozen
class HeadlineRow:
    """One headline figure: its label, full metric name, value in each evaluation and change."""

    key: str
    label: str
    name: str
    figures: tuple[Figure | None, ...]
    change: Change | None


@attrs.frozen
class HeadlineTable:
    """The headline rows of a sequence of evaluations (labelled ``start``, ``final``, ...)."""

    labels: tuple[str, ...]
    rows: tuple[HeadlineRow, ...]
    problems: int | None
    """Problems in the last evaluation (``None``: not recorded)."""

    @property
    def too_small_for_an_se(self) -> bool:
        """Some figure or change rests on fewer than ``MIN_OBSERVATIONS`` observations."""
        return any(
            (figure is not None and figure.few) or (row.change is not None and row.change.few)
            for row in self.rows
            for figure in row.figures
        )

    def cells(self, percent: bool = True) -> list[list[str]]:
        """Each row's label, its figure in each evaluation and its change, as text; with too few
        observations for an SE, each without its count (said once: :meth:`note`)."""
        return [
            [row.label, *(_figure_text(f, percent) for f in row.figures), _change_text(row.change, percent)]
            for row in self.rows
        ]

    def note(self) -> str | None:
        """The one line that says the evaluations are too small for an SE, if they are."""
        if not self.too_small_for_an_se:
            return None
        size = f"{self.problems} problems" if self.problems is not None else "these evaluations"
        return f"{size}: too few for a standard error ({MIN_OBSERVATIONS} needed), so none is given"

    def text_lines(self, indent: str = "  ") -> list[str]:
        """The table as aligned lines of text: a header, a row per figure, the note if any."""
        if not self.rows:
            return [f"{indent}(no headline figures recorded)"]
        header = ["", *self.labels, "change" if len(self.labels) > 1 else ""]
        table = [header, *self.cells()]
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        lines = [indent + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
        note = self.note()
        return [*lines, f"{indent}{note}"] if note else lines


def headline_table(evaluations: Mapping[str, Mapping[str, object]]) -> HeadlineTable:
    """The headline table of ``evaluations`` (label to metrics, in run order): the figures of the
    first and the last evaluation, and the change between them (paired per problem where the last
    recorded it); one evaluation gives its figures alone."""
    labels = list(evaluations)
    if len(labels) > 2:
        labels = [labels[0], labels[-1]]
    chosen = [evaluations[label] for label in labels]
    last = chosen[-1] if chosen else {}
    rows = []
    for key, label, name in _headline_names(last, chosen):
        figures = tuple(read_figure(metrics, name) for metrics in chosen)
        change = change_in(chosen[0], last, name, recorded_paired(last, name)) if len(chosen) > 1 else None
        rows.append(HeadlineRow(key, label, name, figures, change))
    problems = next((int(v) for k, v in last.items() if k.endswith("/num_problems") and is_number(v)), None)
    return HeadlineTable(tuple(labels), tuple(rows), problems)


def _headline_names(
    metrics: Mapping[str, object], evaluations: Sequence[Mapping[str, object]] = ()
) -> list[tuple[str, str, str]]:
    """``(key, label, full name)`` of each headline figure that ``metrics`` holds; the matched
    majority's label names its k in each of ``evaluations`` where they differ (``cons@10, 11``)."""
    prefixes = sorted({name.split("/", 1)[0] for name in metrics if "/" in name})
    found = []
    for prefix in prefixes:
        for key, label in HEADLINE_FIGURES:
            name = _name_of(key, prefix, metrics)
            if name is None:
                continue
            k = _CONS.search(name)
            if key == "matched":
                label = label.format(k=_matched_ks(f"{name}_k", evaluations or (metrics,)))
            elif k:
                label = label.format(k=k.group(1))
            elif key == "judge" and name != f"{prefix}/judge/accuracy":
                label = f"{label[:-1]}, {name.split('/')[-2]})"
            found.append((key, label, name))
    return found


def _matched_ks(name: str, evaluations: Sequence[Mapping[str, object]]) -> str:
    """The k of each evaluation's matched majority, once each, in order (``11`` or ``10, 11``)."""
    ks: list[str] = []
    for metrics in evaluations:
        value = metrics.get(name)
        if is_number(value) and (text := str(int(value))) not in ks:
            ks.append(text)
    return ", ".join(ks) or "k"


def _name_of(key: str, prefix: str, metrics: Mapping[str, object]) -> str | None:
    if key == "cons":
        return next((n for n in metrics if n.startswith(prefix + "/") and _CONS.search(n)), None)
    if key == "judge":
        names = [f"{prefix}/judge/accuracy", *(f"{prefix}/judge/{f}/accuracy" for f in JUDGE_FAMILIES_AFTER_SLIP)]
        return next((n for n in names if n in metrics), None)
    name = {
        "direct": "direct/correct",
        "matched": "debate/cons_matched",
        "debate": "debate/answer_correct",
        "runoff": "runoff/answer_correct",
    }[key]
    return f"{prefix}/{name}" if f"{prefix}/{name}" in metrics else None


_COUNT = re.compile(r" \(n=\d+\)$")


def _figure_text(figure: Figure | None, percent: bool) -> str:
    """The value with its interval or SE; the count is the table's (its number of problems)."""
    if figure is None:
        return "-"
    return figure.main_text(percent) if figure.few else _COUNT.sub("", figure.text(percent))


def _change_text(change: Change | None, percent: bool) -> str:
    """The change with its SE and, by the metric's direction, ``better`` or ``worse``; over too few
    observations the change alone."""
    if change is None:
        return ""
    if change.few:
        return change.main_text(percent)
    return change.text(percent) + (f", {change.verdict}" if change.verdict else "")


def headline_figures(metrics: Mapping[str, object]) -> dict[str, float]:
    """One evaluation's headline figures by short name (``direct``, ``debate``, ``cons@6``,
    ``judge``), for a progress line."""
    out: dict[str, float] = {}
    for key, _, name in _headline_names(metrics):
        figure = read_figure(metrics, name)
        if figure is not None:
            k = _CONS.search(name)
            out[f"cons@{k.group(1)}" if k and key == "cons" else key] = figure.value
    return out
