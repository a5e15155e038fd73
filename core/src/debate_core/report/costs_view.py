"""The report's tokens and cost (docs/training.md#tokens-and-cost): what the run asked the backend
to compute, by kind, for training and for evaluation; and, with a ``[pricing]`` table, what it has
cost so far, what it is projected to cost by its end, its budget, and both as curves over steps."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from html import escape

from debate_core.records.json_values import JsonObject, JsonValue
from debate_core.report.charts import Marker, Series, line_chart
from debate_core.report.run_data import MetricsLog, RunData
from debate_core.stats import dollars

KINDS = (
    ("prompt tokens sampled (prefill)", "tokens/prompt_sampled", "tokens/eval_prompt_sampled", "prompt_tokens"),
    ("tokens sampled", "tokens/sampled", "tokens/eval_sampled", "sampled_tokens"),
    ("tokens trained", "tokens/trained", "", "trained_tokens"),
)
"""Each billed kind: its name on the page, its training and evaluation metrics, its ``[pricing]`` key."""


def total(metrics: MetricsLog, name: str) -> int:
    """``name`` summed over every step recorded (0 for no name or no record)."""
    return int(sum(value for _, value in metrics.series(name))) if name else 0


def _run_file_tables(run: RunData) -> tuple[JsonObject, JsonObject]:
    """The run's ``[pricing]`` and ``[training]`` tables from its config.toml (empty when unreadable)."""
    try:
        config = tomllib.loads(run.config_text or "")
    except tomllib.TOMLDecodeError:
        return {}, {}
    return dict(config.get("pricing") or {}), dict(config.get("training") or {})


def cost_section(run: RunData, markers: Sequence[Marker]) -> str:
    """The section's table and charts ('' for a run that recorded no token counts)."""
    metrics = run.metrics
    if not any(name.startswith("tokens/") for name in metrics.names()):
        return ""
    pricing, training = _run_file_tables(run)
    rows = []
    for label, trained, evaluated, key in KINDS:
        train, evaluation = total(metrics, trained), total(metrics, evaluated)
        price = pricing.get(key)
        price_text = f"{dollars(float(price))} per million" if price is not None else "–"
        rows.append(
            f'<tr><td class="label">{escape(label)}</td><td>{train:,}</td><td>{evaluation:,}</td>'
            f"<td>{train + evaluation:,}</td><td>{escape(price_text)}</td></tr>"
        )
    table = (
        "<table><caption>tokens over the steps recorded, and the run file's prices (US dollars)</caption>"
        "<tr><th>kind</th><th>training</th><th>evaluation</th><th>all</th><th>price</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    charts = [
        line_chart(
            "Tokens per step",
            [
                Series("prompt sampled", metrics.series("tokens/prompt_sampled")),
                Series("sampled", metrics.series("tokens/sampled")),
                Series("trained", metrics.series("tokens/trained")),
                Series("evaluation prompt", metrics.series("tokens/eval_prompt_sampled"), dashed=True),
            ],
            markers=markers,
        )
    ]
    spent = metrics.series("cost/total")
    if spent:
        table += _cost_table(metrics, training.get("max_cost"))
        charts.insert(0, _cost_chart(metrics, training.get("max_cost"), markers))
    return table + '<div class="charts">' + "".join(charts) + "</div>"


def _cost_table(metrics: MetricsLog, budget: JsonValue) -> str:
    so_far = metrics.series("cost/total")[-1][1]
    projected = metrics.series("cost/projected")
    cells = [("cost so far", dollars(so_far))]
    cells.append(("projected by the end", dollars(projected[-1][1]) if projected else "? (a phase not started)"))
    steps = metrics.series("cost/step")
    if steps:
        cells.append(("last step", dollars(steps[-1][1])))
    if budget is not None:
        cells.append(("budget (training.max_cost)", dollars(float(budget))))
    head = "".join(f"<th>{escape(name)}</th>" for name, _ in cells)
    body = "".join(f"<td>{escape(value)}</td>" for _, value in cells)
    return f'<table class="cost"><tr>{head}</tr><tr>{body}</tr></table>'


def _cost_chart(metrics: MetricsLog, budget: JsonValue, markers: Sequence[Marker]) -> str:
    series = [
        Series("so far", metrics.series("cost/total")),
        Series("projected by the end", metrics.series("cost/projected"), dashed=True),
        Series("per step", metrics.series("cost/step")),
    ]
    if budget is not None:
        steps = [step for step, _ in metrics.series("cost/total")]
        series.append(Series("budget", ((steps[0], float(budget)), (steps[-1], float(budget))), dashed=True))
    return line_chart("Cost (US dollars)", series, y_label="$", markers=markers)
