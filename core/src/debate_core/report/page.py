"""The report page: one self-contained HTML file (inline CSS and SVG, no script, no network)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from html import escape

from debate_core.records.json_values import JsonObject
from debate_core.report.charts import Marker, Series, line_chart
from debate_core.report.costs_view import cost_section
from debate_core.report.debate_view import DebateAnswerer, render_debate
from debate_core.report.evaluation_table import evaluation_table, with_paired_changes
from debate_core.report.run_data import RunData
from debate_core.report.segments import Segment
from debate_core.rundir.evaluation_figures import read_figure
from debate_core.rundir.evaluation_headline import headline_table
from debate_core.rundir.evaluation_records import metric_matches

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1d2b3a;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header .status{opacity:.85}main{padding:8px 24px 40px;max-width:1500px}
h2{margin:26px 0 8px;font-size:17px;border-bottom:1px solid #d5dae0;padding-bottom:4px}
.notes{background:#fff4d6;border:1px solid #e8c660;padding:8px 12px;border-radius:6px}
.notes li{font-family:ui-monospace,monospace;font-size:12px}
table{border-collapse:collapse;background:#fff;margin:6px 12px 10px 0}
td,th{border:1px solid #d5dae0;padding:3px 8px;text-align:right;vertical-align:top}
th{background:#eef1f4;text-align:left;font-weight:600}caption{text-align:left;font-size:12px;color:#555;padding:2px}
td.label{text-align:left}.se{color:#777;font-size:12px}.better{color:#16803c;font-weight:600}.worse{color:#b3261e;font-weight:600}
.charts,.headline{display:flex;flex-wrap:wrap;gap:10px}.headline{align-items:flex-start}
svg.chart{background:#fff;border:1px solid #d5dae0;border-radius:6px}
.chart-title{font-size:13px;font-weight:600;fill:#1d232b}.tick{font-size:10px;fill:#555}.axis{font-size:11px;fill:#333}
.legend{font-size:11px;fill:#333}.empty{font-size:13px;fill:#999}.grid{stroke:#e6e9ed}.plot{fill:none;stroke:#c9ced5}
details.debate{background:#fff;border:1px solid #d5dae0;border-radius:6px;margin:8px 0;padding:6px 10px}
details.debate summary{cursor:pointer;font-weight:600}.question{margin:6px 0}
.debate-tables{display:flex;flex-wrap:wrap;align-items:flex-start}
.votes-matrix td{text-align:center;min-width:34px}.votes-matrix td.voted{background:#e3efff}
.votes-matrix td.self{color:#bbb}.votes-matrix td.truth{text-align:left}
.turn{border-left:4px solid #999;margin:8px 0;padding:4px 8px;background:#fbfbfc}
.agent-0{border-color:#1f77b4}.agent-1{border-color:#d62728}.agent-2{border-color:#2ca02c}.agent-3{border-color:#9467bd}
.agent-4{border-color:#ff7f0e}.agent-5{border-color:#17becf}.agent-6{border-color:#8c564b}.agent-7{border-color:#e377c2}
.turn-head{font-size:13px}.votes,.step-rewards{margin-left:10px;color:#444;font-size:12px}.stream{font-weight:600}
pre.text{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12px/1.4 ui-monospace,monospace}
.outside{color:#9aa1a9}.sec{border-radius:3px;padding:0 2px}
.sec::before{content:attr(data-section);font:600 9px system-ui,sans-serif;text-transform:uppercase;
 color:#fff;background:#6b7785;border-radius:3px;padding:0 3px;margin-right:4px;vertical-align:1px}
.sec-solution{background:#e8f4ea}.sec-solution::before{background:#2e7d32}
.sec-evaluation{background:#fff5e0}.sec-evaluation::before{background:#b26a00}
.sec-comparison{background:#e8efff}.sec-comparison::before{background:#1a56c4}
.sec-consensus{background:#f3e8ff}.sec-consensus::before{background:#7b3fbf}
.sec-consensus_reason{background:#f6f0fb}.sec-consensus_reason::before{background:#8d6bb0}
.grade{font-size:12px;font-weight:600}.grade.right{color:#16803c}.grade.wrong{color:#b3261e}.grade.none{color:#888}
.failed{color:#b3261e;font-size:12px}.note{color:#666;font-size:12px}.zero{stroke:#8a939c;stroke-width:1}
.marker-label{font-size:10px;fill:#4a5560}ul.segments{margin:2px 0 8px;font-size:12px}
pre.config{background:#fff;border:1px solid #d5dae0;padding:10px;font-size:12px;overflow:auto;max-height:520px}
"""


def _eval_series(evaluations: Sequence[JsonObject], metric: str, label: str, dashed: bool = False) -> Series:
    """``metric`` (a trailing ``@k``: any k) of every evaluation over steps, with its standard
    error when recorded and measured over enough observations (one point per evaluation and dataset)."""
    points: list[tuple[float, float]] = []
    errors: list[float] = []
    for e in evaluations:
        for name in e["metrics"]:
            short = name.split("/", 1)[-1]
            figure = read_figure(e["metrics"], name) if name.startswith("eval_") else None
            if figure is not None and metric_matches(short, metric):
                points.append((float(e["step"]), figure.value))
                errors.append(figure.error if figure.error is not None and not figure.few else 0.0)
    return Series(label, tuple(points), dashed, tuple(errors) if any(errors) else ())


def _debate_accuracy_series(evaluations: Sequence[JsonObject]) -> Series:
    """Debate accuracy: the debate's answer under its rule (``debate/answer_correct``), or, for runs
    recorded before answer rules, the majority of the final answers (``debate/cons@k``)."""
    series = _eval_series(evaluations, "debate/answer_correct", "debate (its answer)")
    return series if series.points else _eval_series(evaluations, "debate/cons@k", "debate (final answer)")


ChartSpec = tuple[str, list[Series], bool]
"""One chart of the report: its title, its curves, and whether it is a core chart (drawn, saying
'no data yet', even when the run never wrote its metrics)."""


def charts(run: RunData) -> str:
    """The curves over steps; charts of metrics the run never wrote are left out, except the
    core ones, which say 'no data yet' below the drawn ones; a configuration change at a resume
    is a dashed vertical line on every chart."""
    names = run.metrics.names()
    datasets = sorted({n[len("train_") : -len("/correct")] for n in names if re.fullmatch(r"train_.+/correct", n)})
    specs = [*_outcome_charts(run, datasets), *_collapse_charts(run), *_diagnostic_charts(run, datasets)]
    markers = resume_markers(run.segments)
    shown = [(title, series) for title, series, core in specs if core or any(s.points for s in series)]
    # the live curves first: a panel with no data yet goes below every drawn one
    shown.sort(key=lambda spec: not any(s.points for s in spec[1]))
    return '<div class="charts">' + "".join(line_chart(t, series, markers=markers) for t, series in shown) + "</div>"


def _train_series(run: RunData, datasets: Sequence[str], metric: str) -> list[Series]:
    """``train_<dataset>/<metric>`` of every training dataset, one curve each (``training`` when
    there is one dataset)."""
    return [
        Series(f"train {d}" if len(datasets) > 1 else "training", run.metrics.series(f"train_{d}/{metric}"))
        for d in datasets
    ]


def _outcome_charts(run: RunData, datasets: Sequence[str]) -> list[ChartSpec]:
    """The charts a run is judged by: rewards, held-out accuracy, the judges and their comparisons."""
    m = run.metrics
    ev = run.evaluations
    comparison = "debate/comparison_rate" if "debate/comparison_rate" in m.names() else "debate/valid_comparison_rate"
    return [
        (
            "Reward per stream (training)",
            [
                Series("configured reward", m.series("reward/configured")),
                Series("generator", m.series("reward/gen/mean")),
                Series("judge", m.series("reward/judge/mean")),
                Series("total return", m.series("env/all/reward/total"), dashed=True),
            ],
            True,
        ),
        (
            "Held-out accuracy (± SE)",
            [
                _eval_series(ev, "direct/correct", "direct"),
                _debate_accuracy_series(ev),
                _eval_series(ev, "direct/cons@k", "direct, majority of k", dashed=True),
                _eval_series(ev, "debate/correct", "debate (agents)", dashed=True),
            ],
            True,
        ),
        ("Debate − direct, held-out (± SE)", [_eval_series(ev, "debate_minus_direct", "debate − direct")], True),
        (
            "Judge accuracy",
            [
                *_train_series(run, datasets, "judge_accuracy"),
                _eval_series(ev, "debate/judge_accuracy", "held-out", dashed=True),
            ],
            True,
        ),
        (
            "Judge benchmark (held-out)",
            [
                _eval_series(ev, "judge/accuracy", "strict accuracy"),
                _eval_series(ev, "judge/consistency", "consistency"),
            ],
            False,
        ),
        (
            "Comparison rate",
            [Series("training", m.series(comparison)), _eval_series(ev, "debate/comparison_rate", "held-out")],
            True,
        ),
    ]


def _collapse_charts(run: RunData) -> list[ChartSpec]:
    """The collapse monitors of the training debates (docs/training.md#collapse-alarms)."""
    m = run.metrics
    return [
        (
            "Collapse monitors (training, no labels)",
            [
                Series("answer diversity", m.series("monitor/answer_diversity")),
                Series("agree from round 1", m.series("monitor/degenerate_consensus")),
                Series("no signal", m.series("monitor/no_signal")),
                Series("top-answer share", m.series("monitor/top_answer_share")),
                Series("unreadable answers", m.series("monitor/unreadable_answers"), dashed=True),
            ],
            False,
        ),
        (
            "Reward and label accuracy (training, ground truth, monitoring only)",
            [
                Series("reward accuracy", m.series("monitor/reward_accuracy")),
                Series("label accuracy", m.series("monitor/label_accuracy")),
            ],
            False,
        ),
    ]


def _diagnostic_charts(run: RunData, datasets: Sequence[str]) -> list[ChartSpec]:
    """The charts that explain the training: format, the optimiser's view, the reward's parts, the warm-start."""
    m = run.metrics
    return [
        (
            "Format and parse errors (training)",
            [
                *(Series(f"format {s.label}", s.points) for s in _train_series(run, datasets, "format")),
                Series("parse errors", m.series("parse_error")),
            ],
            True,
        ),
        ("KL(sampler ‖ trainer)", [Series("kl v1", m.series("optim/kl_sample_train_v1"))], True),
        ("KL penalty: policy against its reference", [Series("d̄", m.series("optim/kl_policy_reference"))], False),
        ("Entropy of sampled tokens", [Series("entropy", m.series("optim/entropy"))], True),
        ("Training accuracy", _train_series(run, datasets, "correct"), False),
        (
            "Judge weight and agreement",
            [Series("judge weight", m.series("judge/weight")), Series("agreement", m.series("judge/agreement"))],
            False,
        ),
        (
            "Ground truth in the reward (gt_mix)",
            [
                Series("correctness", m.series("gt_mix/correctness_mean")),
                Series("judges right", m.series("gt_mix/judge_truth_mean")),
                Series("graded share", m.series("gt_mix/graded_fraction"), dashed=True),
            ],
            False,
        ),
        ("Warm-start loss per token", [Series("loss", m.series("warmstart/loss_per_token"))], False),
    ]


def headline_html(run: RunData) -> str:
    """What the report leads with: the headline table of the run's evaluations (direct, the
    debate's answer, cons@k, judge accuracy, each with its interval or SE and its change from
    the first evaluation to the last, as ``debate train`` ends with), and the held-out accuracy
    and judge charts beside it; every other metric is in the full table below."""
    if not run.evaluations:
        return ""
    evaluations = with_paired_changes(run.evaluations)
    by_label = {str(e["label"]): e["metrics"] for e in evaluations}
    table = headline_table(by_label)
    if not table.rows:
        return ""
    head = "".join(f"<th>{escape(label)}</th>" for label in table.labels)
    head += "<th>change</th>" if len(table.labels) > 1 else ""
    rows = ""
    for row, cells in zip(table.rows, table.cells(), strict=True):
        label, *figures = cells[: 1 + len(table.labels)]
        change = escape(cells[-1]) if len(table.labels) > 1 else None
        verdict = row.change.verdict if row.change is not None and not row.change.few else None
        if change is not None and verdict:
            change = f'<span class="{verdict}">{change}</span>'
        rows += f'<tr><td class="label">{escape(label)}</td>' + "".join(f"<td>{escape(f)}</td>" for f in figures)
        rows += (f"<td>{change}</td>" if change is not None else "") + "</tr>"
    size = f" ({table.problems} problems)" if table.problems is not None else ""
    note = table.note()
    ev, markers = run.evaluations, resume_markers(run.segments)
    accuracy = [
        _eval_series(ev, "direct/correct", "direct"),
        _debate_accuracy_series(ev),
        _eval_series(ev, "direct/cons@k", "direct, majority of k", dashed=True),
    ]
    judge = [_eval_series(ev, "judge/accuracy", "judge benchmark")]
    return (
        f'<h2 id="headline">Headline{escape(size)}</h2><div class="headline">'
        f'<div><table class="headline-table"><tr><th>held-out</th>{head}</tr>{rows}</table>'
        + (f'<p class="note">{escape(note)}</p>' if note else "")
        + '<p class="note">Every metric: <a href="#evaluation">the full table</a> below.</p></div>'
        + "".join(
            line_chart(title, series, markers=markers)
            for title, series in (
                ("Headline: held-out accuracy (± SE)", accuracy),
                ("Headline: judge benchmark", judge),
            )
            if any(s.points for s in series)  # an empty panel would push the figures down
        )
        + "</div>"
    )


def alarms_html(run: RunData) -> str:
    """One line per collapse alarm the run tripped (``alarm/<name>`` = 1 in an RL record,
    docs/training.md#collapse-alarms): at how many iterations, and the steps of the first and last."""
    items = []
    for name in sorted(n for n in run.metrics.names() if n.startswith("alarm/")):
        series = run.metrics.series(name)
        steps = [int(step) for step, value in series if value > 0]
        if steps:
            items.append(
                f"<li>{escape(name.removeprefix('alarm/').replace('_', ' '))}: tripped at {len(steps)} of "
                f"{len(series)} RL iterations, steps {steps[0]}–{steps[-1]}</li>"
            )
    if not items:
        return ""
    return (
        '<div class="notes"><b>Collapse alarms</b> (a label-free figure of the training debates past its '
        f"threshold, <code>[alarms]</code>; docs/training.md#collapse-alarms)<ul>{''.join(items)}</ul></div>"
    )


def judge_silence_html(run: RunData) -> str:
    """One line when the run's external judge gave no verdict on any pair at some RL iterations
    (``judge/silent`` = 1, docs/rewards.md#when-the-judge-gives-no-verdict): those iterations
    trained on the peer reward alone."""
    steps = [int(step) for step, value in run.metrics.series("judge/silent") if value > 0]
    if not steps:
        return ""
    return (
        '<div class="notes"><b>The external judge gave no verdict</b> on any of its pairs at '
        f"{len(steps)} RL iteration{'s' if len(steps) != 1 else ''} (steps {steps[0]}–{steps[-1]}): those "
        "iterations trained on the peer reward alone (<code>judge/silent</code>, <code>judge/failed</code>, "
        "<code>judge/unreadable</code>; docs/rewards.md#when-the-judge-gives-no-verdict)</div>"
    )


def resume_markers(segments: Sequence[Segment]) -> list[Marker]:
    """A marker per configuration change at a resume, between the last step before it and the
    first after it."""
    return [Marker(s.after + 0.5, f"segment {s.number}", s.describe()) for s in segments[1:]]


def _checkpoints(run: RunData) -> str:
    if not run.checkpoints:
        return '<p class="note">No checkpoint yet.</p>'
    rows = "".join(
        f'<tr><td>{c.step}</td><td class="label">{escape(c.reason)}</td><td class="label">'
        f"<code>{escape(c.backend_state)}</code></td></tr>"
        for c in run.checkpoints
    )
    last = run.checkpoints[-1]
    name = run.root.name
    return (
        f'<table><tr><th>step</th><th>reason</th><th>backend state</th></tr>{rows}</table><p class="note">'
        f"Evaluate or debate with the latest: <code>debate eval CONFIG --checkpoint {escape(str(run.root))}</code>, "
        f"<code>debate run CONFIG --checkpoint {escape(str(run.root))} --question ...</code> "
        f"(step {last.step}; run {escape(name)}).</p>"
    )


def _evaluation_debates(run: RunData) -> str:
    """Where each evaluation's saved debates are (``eval/step_NNNNNN_<label>/``): named, not
    linked, since the page loads nothing from anywhere."""
    folders = (
        sorted(p for p in run.evaluations_dir.glob("step_*") if p.is_dir()) if run.evaluations_dir.is_dir() else []
    )
    if not folders:
        return ""
    links = ", ".join(
        f"<code>eval/{escape(p.name)}/</code> "
        f"({sum(1 for f in p.glob('*.json') if not f.name.endswith('.rewards.json'))} debates)"
        for p in folders
    )
    return (
        f'<p class="note">Every evaluation debate, with its grades and rewards: {links}. '
        "Read one with <code>debate show FILE</code>.</p>"
    )


def _environment(run: RunData) -> str:
    """Where each part of the run computed (``environment.json``): a row per start and resume."""
    if not run.environment:
        return '<p class="note">No environment.json: the run was made before debate-core recorded where it ran.</p>'
    rows = "".join(
        f'<tr><td>{escape(str(e.get("step", "")))}</td><td class="label">{escape(str(e.get("started", "")))}</td>'
        f'<td class="label">{escape(str(e.get("processor", "")))} ({escape(str(e.get("cpu_count", "")))} cores)</td>'
        f'<td class="label">Python {escape(str(e.get("python", "")))}, {escape(str(e.get("platform", "")))}</td>'
        f'<td class="label">{escape(_backend_facts(e.get("backend")))}</td></tr>'
        for e in run.environment
    )
    return (
        "<table><tr><th>from step</th><th>started</th><th>processor</th><th>system</th><th>backend</th></tr>"
        f'{rows}</table><p class="note">Another processor, thread count or library version rounds floating-point '
        "sums differently: the same run file can train another model there "
        "(docs/local-backend.md#what-is-reproducible).</p>"
    )


def _backend_facts(facts: object) -> str:
    return ", ".join(f"{k} {v}" for k, v in facts.items()) if isinstance(facts, dict) else ""


def _costs(run: RunData) -> str:
    section = cost_section(run, resume_markers(run.segments))
    return f'<h2 id="cost">Tokens and cost</h2>{section}' if section else ""


def run_answerer(run: RunData) -> DebateAnswerer | None:
    """The run's answer rule (``debate.final_answer``) with its grader, built from its config.toml;
    ``None`` (no answer line) when the config or a plugin it names cannot be had here."""
    import tomllib

    from debate_core.debate import final_answer
    from debate_core.debate.final_answer import NamedAnswerRule
    from debate_core.errors import DebateError
    from debate_core.plugin import get_registry

    if run.config_text is None:
        return None
    try:
        raw = tomllib.loads(run.config_text)
        chosen = raw.get("debate", {}).get("final_answer", {"name": "vote_winner"})
        graded_by = raw.get("grader", {"name": "boxed"})
        registry = get_registry()
        rule = NamedAnswerRule(chosen["name"], registry.build("answer_rule", chosen["name"], chosen.get("options")))
        grader = registry.build("grader", graded_by["name"], graded_by.get("options"))
    except (DebateError, KeyError, TypeError, AttributeError, tomllib.TOMLDecodeError):
        return None
    return lambda record: final_answer(record, grader, rule=rule)


def report_html(run: RunData, generated: float | None = None) -> str:
    """The whole report page."""
    now = generated or time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    notes = ""
    if run.notes:
        items = "".join(f"<li>{escape(n)}</li>" for n in run.notes)
        notes = f'<div class="notes"><b>Notes while reading the run</b><ul>{items}</ul></div>'
    shown = len(run.debates)
    rule = run_answerer(run)
    debates = "".join(render_debate(d, i == len(run.debates) - 1, rule) for i, d in enumerate(run.debates))
    if not debates:
        debates = '<p class="note">No transcript logged yet.</p>'
    config = escape(run.config_text) if run.config_text is not None else "(no config.toml)"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>debate report: {escape(run.root.name)}</title><style>{STYLE}</style></head>
<body><header><h1>debate run <code>{escape(run.root.name)}</code></h1>
<div class="status">{escape(run.status(now))} · {len(run.metrics.records)} metrics records · report made {stamp}
· <code>{escape(str(run.root))}</code></div></header><main>{notes}{alarms_html(run)}{judge_silence_html(run)}
{headline_html(run)}
<h2 id="evaluation">Held-out evaluation: every metric</h2>{evaluation_table(run.evaluations, run.segments)}
{_evaluation_debates(run)}
{_costs(run)}<h2 id="curves">Curves over steps</h2>{charts(run)}
<h2 id="debates">Sampled debates ({shown} of {run.debates_logged} logged)</h2>
<p class="note">Sections are marked by the parser's spans; dimmed text lies outside every section. Per step:
<i>r</i> the stream's reward, <i>A</i> its advantage as the update used it.</p>{debates}
<h2 id="checkpoints">Checkpoints</h2>{_checkpoints(run)}
<h2 id="environment">Where it ran</h2>{_environment(run)}
<h2 id="config">Resolved configuration</h2><pre class="config">{config}</pre>
</main></body></html>
"""
