"""The report page: one self-contained HTML file (inline CSS and SVG, no script, no network)."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from html import escape
from typing import Any, TypeGuard

from debate_core.report.charts import Series, line_chart
from debate_core.report.debate_view import render_debate
from debate_core.report.run_data import RunData
from debate_core.training.evaluation_records import metric_matches, paired_changes

EVALUATION_ROWS: tuple[tuple[str, str], ...] = (
    ("direct/correct", "direct accuracy (mean over direct answers)"),
    ("debate/cons@k", "debate accuracy (the debate's final answer)"),
    ("debate_minus_direct", "debate − direct (paired per problem)"),
    ("debate/correct", "agents' final answers correct"),
    ("debate/judge_accuracy", "judge accuracy (decidable votes)"),
    ("debate/judge_decidable_votes", "decidable votes"),
    ("debate/judge_ties", "ties on decidable pairs"),
    ("judge/accuracy", "judge benchmark: strict accuracy on controlled pairs"),
    ("judge/consistency", "judge benchmark: same verdict in both orders"),
    ("judge/tie_rate", "judge benchmark: ties"),
    ("judge/accuracy_own_right", "judge benchmark: accuracy when its own answer is right"),
    ("judge/accuracy_own_wrong", "judge benchmark: accuracy when its own answer is wrong"),
    ("debate/consensus_accuracy", "consensus YES/NO right (informed turns)"),
    ("debate/comparison_rate", "comparison rate"),
    ("debate/rounds_played", "rounds played"),
    ("debate/ended_by_consensus", "ended by consensus"),
    ("debate/round1_disagreement", "round-1 answers differ"),
    ("debate/round1_disagreement_continued", "… and a round 2 was played"),
    ("debate/wrong_to_right", "wrong → right (first to last answer)"),
    ("debate/right_to_wrong", "right → wrong (first to last answer)"),
    ("direct/format", "format rate, direct"),
    ("debate/format", "format rate, debate"),
    ("debate/parse_error", "parse errors, debate"),
    ("role_averaged/correct", "role-averaged: the policy's final answers correct"),
    ("role_averaged/opponent_correct", "role-averaged: the opponent's final answers correct"),
    ("role_averaged/judge_accuracy", "role-averaged: the policy's judge accuracy"),
)
"""Evaluation metrics the table shows first (without their ``eval_<dataset>/`` prefix; a trailing
``@k`` stands for any k), with a label."""

COUNT_METRICS: frozenset[str] = frozenset(
    {
        "debate/judge_decidable_votes",
        "debate/judge_ties",
        "role_averaged/judge_decidable_votes",
        "debate/consensus_turns",
        "judge/num_pairs",
        "judge/own_right_judgements",
        "judge/own_wrong_judgements",
    }
)
"""Evaluation metrics that are counts, not rates: shown as whole numbers, their change without colour."""

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
td.label{text-align:left}.se{color:#777;font-size:12px}.up{color:#16803c}.down{color:#b3261e}
.charts{display:flex;flex-wrap:wrap;gap:10px}svg.chart{background:#fff;border:1px solid #d5dae0;border-radius:6px}
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
pre.config{background:#fff;border:1px solid #d5dae0;padding:10px;font-size:12px;overflow:auto;max-height:520px}
"""


def _fmt(value: Any, count: bool = False) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    if count or (float(value).is_integer() and abs(value) >= 1):
        return f"{round(value)}"
    return f"{value:.3f}"


def _with_se(metrics: dict[str, Any], name: str) -> str:
    value = metrics.get(name)
    if value is None:
        return "–"
    if name in COUNT_METRICS:
        return _fmt(value, count=True)
    error = metrics.get(f"{name}_se")
    se = f' <span class="se">± {_fmt(error)}</span>' if isinstance(error, int | float) else ""
    return f"{_fmt(value)}{se}"


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _change(first: dict[str, Any], last: dict[str, Any], name: str) -> str:
    """The change of ``name`` since the first evaluation: the paired ``<name>_change`` (with
    ``<name>_change_se``) when the evaluation reports it, else the difference with the two taken
    as independent (its SE from both SEs); a count's change as a plain whole number."""
    paired = last.get(f"{name}_change")
    if _number(paired):
        change, error, kind = float(paired), last.get(f"{name}_change_se"), "paired"
    else:
        a, b = first.get(name), last.get(name)
        if not _number(a) or not _number(b) or first is last:
            return "–"
        change, kind = float(b) - float(a), "independent"
        ea, eb = first.get(f"{name}_se"), last.get(f"{name}_se")
        error = math.hypot(ea, eb) if _number(ea) and _number(eb) else None
    if name in COUNT_METRICS:
        return f"{round(change):+d}"
    css = "up" if change > 0 else ("down" if change < 0 else "")
    text = f'<span class="{css}">{change:+.3f}</span>'
    if _number(error) and error > 0:
        text += f' <span class="se">± {error:.3f} ({change / error:+.1f} SE, {kind})</span>'
    elif _number(error):
        text += f' <span class="se">(no spread, {kind})</span>'
    return text


def _per_problem(record: dict[str, Any]) -> dict[str, list[float]]:
    """A record's per-problem values, with ``debate_minus_direct`` per problem (the debate's
    answer minus the direct answers) where the record predates its being kept."""
    kept = record.get("per_problem")
    if not isinstance(kept, dict):
        return {}
    values = {
        name: [float(x) for x in v] for name, v in kept.items() if isinstance(v, list) and all(_number(x) for x in v)
    }
    for name, direct in list(values.items()):
        prefix, _, rest = name.rpartition("/direct/correct")
        if rest or not prefix or f"{prefix}/debate_minus_direct" in values:
            continue
        debate = [v for n, v in values.items() if re.fullmatch(re.escape(prefix) + r"/debate/cons@\d+", n)]
        if len(debate) == 1 and len(debate[0]) == len(direct):
            values[f"{prefix}/debate_minus_direct"] = [b - a for a, b in zip(direct, debate[0], strict=True)]
    return values


def with_paired_changes(evaluations: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The evaluations, the last one's metrics completed with the paired ``<metric>_change`` and
    ``<metric>_change_se`` since the first from both records' per-problem values, where it did
    not record them itself (a run made before a metric was kept per problem); what a record
    holds is never replaced."""
    out = [dict(e) for e in evaluations]
    if len(out) > 1:
        derived = paired_changes(_per_problem(out[0]), _per_problem(out[-1]))
        out[-1]["metrics"] = {**derived, **out[-1]["metrics"]}
    return out


def evaluation_prefixes(evaluations: Sequence[dict[str, Any]]) -> list[str]:
    """The ``eval_<dataset>`` prefixes the evaluations report."""
    return sorted({name.split("/", 1)[0] for e in evaluations for name in e["metrics"] if name.startswith("eval_")})


def headline_rows(present: set[str]) -> list[tuple[str, str]]:
    """The headline metrics present, in :data:`EVALUATION_ROWS` order (``@k`` rows matched to the
    run's k), then every ``pass@k``."""
    shown = [
        (name, label) for pattern, label in EVALUATION_ROWS for name in sorted(present) if metric_matches(name, pattern)
    ]
    shown += [(name, "pass@k") for name in sorted(present) if re.fullmatch(r"(direct|debate)/pass@\d+", name)]
    return shown


CHANGE_NOTE = (
    '<p class="note">Each value ± its standard error over problems (judge accuracy: over votes). A change is '
    "<i>paired</i> when the evaluation recorded it per problem (every evaluation of a run uses the same problems "
    "and seeds), else <i>independent</i>: its SE treats the two evaluations as unrelated (judge accuracy, whose "
    "votes differ). <code>debate_minus_direct</code> is debate accuracy minus direct accuracy, paired per problem: "
    "what the debate adds.</p>"
)


def evaluation_table(evaluations: Sequence[dict[str, Any]]) -> str:
    """Per evaluation dataset: the headline metrics at each evaluation, with standard errors,
    and their change since the first evaluation; every other metric in a folded table."""
    if not evaluations:
        return '<p class="note">No evaluation yet.</p>'
    evaluations = with_paired_changes(evaluations)
    prefixes = evaluation_prefixes(evaluations)
    if not prefixes:
        return '<p class="note">The evaluations hold no <code>eval_&lt;dataset&gt;/</code> metric.</p>'
    out = []
    for prefix in prefixes:
        columns = [
            {k.split("/", 1)[1]: v for k, v in e["metrics"].items() if k.startswith(prefix + "/")} for e in evaluations
        ]
        present = set().union(*columns)
        head = "".join(f"<th>{escape(str(e['label']))}<br><small>step {e['step']}</small></th>" for e in evaluations)
        if len(evaluations) > 1:
            head += f"<th>change since {escape(str(evaluations[0]['label']))}</th>"

        def row(name: str, label: str, columns: list[dict[str, Any]] = columns) -> str:
            cells = "".join(f"<td>{_with_se(c, name)}</td>" for c in columns)
            if len(columns) > 1:
                cells += f"<td>{_change(columns[0], columns[-1], name)}</td>"
            return f'<tr><td class="label">{escape(label)} <code>{escape(name)}</code></td>{cells}</tr>'

        shown = headline_rows(present)
        rows = "".join(row(name, label) for name, label in shown)
        skip = {n for n, _ in shown}
        others = sorted(n for n in present if n not in skip and not re.search(r"_(se|change|change_se)$", n))
        rest = "".join(row(name, "") for name in others)
        out.append(
            f'<h3><code>{escape(prefix)}</code></h3><table class="evaluation"><tr><th>metric</th>{head}</tr>'
            f"{rows}</table><details><summary>every other metric of {escape(prefix)}</summary>"
            f'<table class="evaluation"><tr><th>metric</th>{head}</tr>{rest}</table></details>'
        )
    return "".join(out) + CHANGE_NOTE


def _eval_series(evaluations: Sequence[dict[str, Any]], metric: str, label: str, dashed: bool = False) -> Series:
    """``metric`` (a trailing ``@k``: any k) of every evaluation over steps, with its standard
    error when recorded (one point per evaluation and dataset)."""
    points: list[tuple[float, float]] = []
    errors: list[float] = []
    for e in evaluations:
        for name, value in e["metrics"].items():
            short = name.split("/", 1)[-1]
            if name.startswith("eval_") and metric_matches(short, metric) and _number(value):
                points.append((float(e["step"]), float(value)))
                error = e["metrics"].get(f"{name}_se")
                errors.append(float(error) if _number(error) else 0.0)
    return Series(label, tuple(points), dashed, tuple(errors) if any(errors) else ())


def charts(run: RunData) -> str:
    """The curves over steps; charts of metrics the run never wrote are left out, except the
    core ones, which say 'no data yet'."""
    m = run.metrics
    names = m.names()
    datasets = sorted({n[len("train_") : -len("/correct")] for n in names if re.fullmatch(r"train_.+/correct", n)})

    def train(metric: str) -> list[Series]:
        return [
            Series(f"train {d}" if len(datasets) > 1 else "training", m.series(f"train_{d}/{metric}")) for d in datasets
        ]

    ev = run.evaluations
    comparison = "debate/comparison_rate" if "debate/comparison_rate" in names else "debate/valid_comparison_rate"
    specs: list[tuple[str, list[Series], bool]] = [
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
                _eval_series(ev, "debate/cons@k", "debate (final answer)"),
                _eval_series(ev, "debate/correct", "debate (agents)", dashed=True),
            ],
            True,
        ),
        ("Debate − direct, held-out (± SE)", [_eval_series(ev, "debate_minus_direct", "debate − direct")], True),
        (
            "Judge accuracy",
            [*train("judge_accuracy"), _eval_series(ev, "debate/judge_accuracy", "held-out", dashed=True)],
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
        (
            "Format and parse errors (training)",
            [
                *(Series(f"format {s.label}", s.points) for s in train("format")),
                Series("parse errors", m.series("parse_error")),
            ],
            True,
        ),
        ("KL(sampler ‖ trainer)", [Series("kl v1", m.series("optim/kl_sample_train_v1"))], True),
        ("Entropy of sampled tokens", [Series("entropy", m.series("optim/entropy"))], True),
        ("Training accuracy", train("correct"), False),
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
    drawn = [line_chart(title, series) for title, series, core in specs if core or any(s.points for s in series)]
    return '<div class="charts">' + "".join(drawn) + "</div>"


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


def report_html(run: RunData, generated: float | None = None) -> str:
    """The whole report page."""
    now = generated or time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    notes = ""
    if run.notes:
        items = "".join(f"<li>{escape(n)}</li>" for n in run.notes)
        notes = f'<div class="notes"><b>Notes while reading the run</b><ul>{items}</ul></div>'
    shown = len(run.debates)
    debates = "".join(render_debate(d, open_=i == len(run.debates) - 1) for i, d in enumerate(run.debates))
    if not debates:
        debates = '<p class="note">No transcript logged yet.</p>'
    config = escape(run.config_text) if run.config_text is not None else "(no config.toml)"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>debate report: {escape(run.root.name)}</title><style>{STYLE}</style></head>
<body><header><h1>debate run <code>{escape(run.root.name)}</code></h1>
<div class="status">{escape(run.status(now))} · {len(run.metrics.records)} metrics records · report made {stamp}
· <code>{escape(str(run.root))}</code></div></header><main>{notes}
<h2 id="evaluation">Held-out evaluation</h2>{evaluation_table(run.evaluations)}{_evaluation_debates(run)}
<h2 id="curves">Curves over steps</h2>{charts(run)}
<h2 id="debates">Sampled debates ({shown} of {run.debates_logged} logged)</h2>
<p class="note">Sections are marked by the parser's spans; dimmed text lies outside every section. Per step:
<i>r</i> the stream's reward, <i>A</i> its advantage as the update used it.</p>{debates}
<h2 id="checkpoints">Checkpoints</h2>{_checkpoints(run)}
<h2 id="config">Resolved configuration</h2><pre class="config">{config}</pre>
</main></body></html>
"""
