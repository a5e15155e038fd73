"""The page and the Markdown table of ``debate compare`` (one self-contained HTML file, like the
report's: inline CSS and SVG, no script, nothing loaded)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from html import escape

from debate_core.report.charts import Marker, Series, line_chart
from debate_core.report.compare import Column, ComparedRun, column_change, config_differences, table_rows
from debate_core.report.evaluation_table import CHANGE_NOTE, DERIVED, change_html, figure_html, headline_rows
from debate_core.report.page import STYLE
from debate_core.rundir.evaluation_figures import read_figure
from debate_core.rundir.metric_directions import metric_facts

TRAINING_CURVES: tuple[tuple[str, str], ...] = (
    ("reward/configured", "Configured reward (training)"),
    ("env/all/reward/total", "Total return (training)"),
    ("train_*/correct", "Training accuracy"),
    ("train_*/judge_accuracy", "Judge accuracy (training)"),
    ("parse_error", "Parse errors (training)"),
    ("optim/kl_sample_train_v1", "KL(sampler ‖ trainer)"),
    ("optim/entropy", "Entropy of sampled tokens"),
    ("warmstart/loss_per_token", "Warm-start loss per token"),
)
"""Training metrics overlaid when any run wrote them (``*``: the first matching name of a run)."""

COMPARE_STYLE = """
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px}
table.config-diff td{text-align:left;font:12px ui-monospace,monospace}th.run{border-top:4px solid}
"""


def _value(value: object) -> str:
    return "(absent)" if value is None else json.dumps(value, ensure_ascii=False)


def _training_series(run: ComparedRun, pattern: str) -> Series:
    names = sorted(n for n in run.data.metrics.names() if re.fullmatch(pattern.replace("*", "[^/]+"), n))
    points = run.data.metrics.series(names[0]) if names else ()
    return Series(run.name, points, colour=run.colour)


def _evaluation_series(run: ComparedRun, prefix: str, name: str) -> Series:
    points, errors = [], []
    for record in run.data.evaluations:
        figure = read_figure(record["metrics"], f"{prefix}/{name}")
        if figure is not None:
            points.append((float(record["step"]), figure.value))
            errors.append(figure.error if figure.error is not None and not figure.few else 0.0)
    return Series(run.name, tuple(points), errors=tuple(errors) if any(errors) else (), colour=run.colour)


def _markers(runs: Sequence[ComparedRun]) -> list[Marker]:
    return [
        Marker(s.after + 0.5, f"{run.name}: segment {s.number}", f"{run.name}: {s.describe()}")
        for run in runs
        for s in run.data.segments[1:]
    ]


def compare_charts(runs: Sequence[ComparedRun]) -> str:
    """The evaluation metrics with a declared direction (headline rows first) and the
    training curves, one chart each, one line per run in its colour; charts no run has data for
    are left out."""
    markers = _markers(runs)
    charts = []
    records = [r for run in runs for r in run.data.evaluations]
    for prefix in sorted({n.split("/", 1)[0] for r in records for n in r["metrics"] if n.startswith("eval_")}):
        present = {n.split("/", 1)[1] for r in records for n in r["metrics"] if n.startswith(prefix + "/")}
        headline = [name for name, _ in headline_rows(present)]
        others = sorted(n for n in present if n not in headline and not DERIVED.search(n))
        shown = [n for n in (*headline, *others) if _has_direction(n)]
        for name in shown:
            series = [_evaluation_series(run, prefix, name) for run in runs]
            if any(s.points for s in series):
                charts.append(line_chart(f"{prefix}/{name}", series, markers=markers))
    for pattern, title in TRAINING_CURVES:
        series = [_training_series(run, pattern) for run in runs]
        if any(s.points for s in series):
            charts.append(line_chart(title, series, markers=markers))
    if not charts:
        return '<p class="note">No run has recorded a metric yet.</p>'
    return '<div class="charts">' + "".join(charts) + "</div>"


def _has_direction(name: str) -> bool:
    facts = metric_facts(name)
    return facts is not None and facts.better is not None and not facts.count


def _runs_list(runs: Sequence[ComparedRun]) -> str:
    items = []
    for index, run in enumerate(runs):
        segments = "".join(f"<li>{escape(s.describe())}</li>" for s in run.data.segments[1:])
        items.append(
            f'<li class="run"><span class="swatch" style="background:{run.colour}"></span><b>{index + 1}. '
            f"{escape(run.name)}</b> <code>{escape(str(run.data.root))}</code> · {escape(run.data.status())} · "
            f"{len(run.data.evaluations)} evaluations{f'<ul>{segments}</ul>' if segments else ''}</li>"
        )
    return f'<ul class="runs">{"".join(items)}</ul>'


def _config_table(runs: Sequence[ComparedRun]) -> str:
    differences = config_differences(runs)
    if not differences:
        return '<p class="note">The resolved configs are the same.</p>'
    head = "".join(f'<th class="run" style="border-top-color:{r.colour}">{escape(r.name)}</th>' for r in runs)
    rows = "".join(
        f"<tr><td><code>{escape(key)}</code></td>{''.join(f'<td>{escape(_value(v))}</td>' for v in values)}</tr>"
        for key, values in differences
    )
    return f'<table class="config-diff"><tr><th>key</th>{head}</tr>{rows}</table>'


def _evaluation_tables(runs: Sequence[ComparedRun], columns: Sequence[Column], only: Sequence[str] = ()) -> str:
    if not columns:
        return '<p class="note">No evaluation to compare.</p>'
    head = "".join(
        f'<th class="run" style="border-top-color:{runs[c.run].colour}">{escape(c.title)}<br><small>'
        f"{escape(runs[c.run].name)} · {escape(str(c.record.get('label')))} · step {c.record['step']}</small></th>"
        for c in columns
    )

    def row(prefix: str, name: str, label: str) -> str:
        full = f"{prefix}/{name}"
        cells = [f"<td>{figure_html(columns[0].record['metrics'], full)}</td>"]
        for column in columns[1:]:
            change = change_html(column_change(runs, columns[0], column, full))
            cells.append(f"<td>{figure_html(column.record['metrics'], full)}<br>{change}</td>")
        return f'<tr><td class="label">{escape(label)} <code>{escape(name)}</code></td>{"".join(cells)}</tr>'

    out = []
    for prefix, rows in table_rows(columns, only).items():
        table = f'<table class="evaluation compared"><tr><th>metric</th>{head}</tr>'
        out.append(
            f"<h3><code>{escape(prefix)}</code></h3>{table}{''.join(row(prefix, *r) for r in rows.shown)}</table>"
        )
        if rows.rest:
            rest = "".join(row(prefix, *r) for r in rows.rest)
            out.append(
                f"<details><summary>every other metric of {escape(prefix)}</summary>{table}{rest}</table></details>"
            )
    title = escape(columns[0].title)
    note = f'<p class="note">Under each value after the first column: its change since <i>{title}</i>. '
    note += "Paired per problem where both evaluations ran on the same problems (the same dataset, split and "
    note += "number of problems), else independent.</p>"
    return "".join(out) + note + CHANGE_NOTE


def compare_html(
    runs: Sequence[ComparedRun], columns: Sequence[Column], rows: Sequence[str] = (), generated: float | None = None
) -> str:
    """The whole comparison page (``rows``: the evaluation metrics to show, as for :func:`compare_markdown`)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(generated or time.time()))
    names = " vs ".join(r.name for r in runs)
    notes = [f"{r.name}: {n}" for r in runs for n in r.data.notes]
    noted = ""
    if notes:
        noted = '<div class="notes"><b>Notes while reading the runs</b><ul>'
        noted += "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul></div>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>debate compare: {escape(names)}</title><style>{STYLE}{COMPARE_STYLE}</style></head>
<body><header><h1>debate compare: {escape(names)}</h1>
<div class="status">{len(runs)} runs · made {stamp}</div></header><main>{noted}
<h2 id="runs">Runs</h2>{_runs_list(runs)}
<h2 id="config">Resolved configuration: what differs</h2>{_config_table(runs)}
<h2 id="evaluation">Held-out evaluation</h2>{_evaluation_tables(runs, columns, rows)}
<h2 id="curves">Curves over steps</h2>{compare_charts(runs)}
</main></body></html>
"""


def compare_markdown(
    runs: Sequence[ComparedRun], columns: Sequence[Column], rows: Sequence[str] = (), percent: bool = False
) -> str:
    """One Markdown table per evaluation dataset: a row per metric (``rows``, else the headline
    rows then the rest), a column per :class:`Column`, each later value followed by its change
    since the first column (``percent``: rates in percent, their changes in points)."""
    out = []
    for prefix, table in table_rows(columns, rows).items():
        lines = [
            "| " + " | ".join([prefix, *(c.title for c in columns)]) + " |",
            "|" + "---|" * (len(columns) + 1),
        ]
        for name, label in (*table.shown, *table.rest):
            full = f"{prefix}/{name}"
            cells = [f"{label} `{name}`" if label else f"`{name}`"]
            for index, column in enumerate(columns):
                figure = read_figure(column.record["metrics"], full)
                cell = figure.text(percent) if figure is not None else "–"
                change = column_change(runs, columns[0], column, full) if index else None
                if change is not None:
                    cell += f"; {change.text(percent)}" + (f", {change.verdict}" if change.verdict else "")
                cells.append(cell)
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n" if out else ""
