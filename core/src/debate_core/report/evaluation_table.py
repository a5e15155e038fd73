"""The evaluation table of the report and of ``debate compare``: headline metrics first, each
value as :mod:`debate_core.rundir.evaluation_figures` states it (a proportion's Wilson interval,
a small count instead of an SE), each change coloured by the metric's declared direction."""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from debate_core.records.json_values import JsonMapping, JsonObject
from debate_core.report.segments import Segment, segment_of
from debate_core.rundir.evaluation_figures import (
    Change,
    Paired,
    change_in,
    is_number,
    read_figure,
    recorded_paired,
)
from debate_core.rundir.evaluation_records import metric_matches, paired_changes

EVALUATION_ROWS: tuple[tuple[str, str], ...] = (
    ("direct/correct", "direct accuracy (mean over direct answers)"),
    ("debate/answer_correct", "debate accuracy (the debate's answer under its rule, debate.final_answer)"),
    ("debate_minus_direct", "debate − direct (paired per problem)"),
    ("direct/cons@k", "self-consistency: the majority of the k direct answers"),
    ("debate/rule/vote_winner/correct", "debate's answer by vote_winner (the best-voted solution)"),
    ("debate/rule/answer_votes/correct", "debate's answer by answer_votes (votes summed per answer)"),
    ("debate/rule/majority/correct", "debate's answer by majority (of the final answers)"),
    ("debate/cons@k", "majority of the agents' final answers (cons@k)"),
    ("debate/round1_cons@k", "majority of the agents' round-1 answers"),
    ("debate/round1_pass@k", "any round-1 answer right"),
    ("direct/sampled_tokens_per_answer", "sampled tokens per answer, direct (all k samples)"),
    ("debate/sampled_tokens_per_answer", "sampled tokens per answer, debate"),
    ("debate/correct", "agents' final answers correct"),
    ("debate/judge_accuracy", "judge accuracy (decidable votes)"),
    ("debate/judge_decidable_votes", "decidable votes"),
    ("debate/judge_ties", "ties on decidable pairs"),
    ("judge/accuracy", "judge benchmark: strict accuracy on controlled pairs"),
    ("judge/consistency", "judge benchmark: same verdict in both orders"),
    ("judge/tie_rate", "judge benchmark: ties"),
    ("judge/accuracy_own_right", "judge benchmark: accuracy when its own answer is right"),
    ("judge/accuracy_own_wrong", "judge benchmark: accuracy when its own answer is wrong"),
    ("judge/own_correct_round1", "judge benchmark: its own answer right, round 1 (blind)"),
    ("judge/own_correct", "judge benchmark: its own answer right, round 2 (after reading the pair)"),
    *(
        row
        for family, what in (
            ("own", "the policy's own wrong answers"),
            ("far", "the right working, a final answer 11–39 away"),
            ("bare", "a wrong answer with no working"),
            ("both_right", "two right answers (a tie is right)"),
        )
        for row in (
            (f"judge/{family}/accuracy", f"judge benchmark, {what}: accuracy"),
            (f"judge/{family}/tie_rate", f"judge benchmark, {what}: ties"),
            (f"judge/{family}/own_correct_round1", f"judge benchmark, {what}: its own answer right, round 1"),
            (f"judge/{family}/own_correct", f"judge benchmark, {what}: its own answer right, round 2"),
        )
    ),
    ("judge/own/num_pairs", "judge benchmark: problems with a wrong answer of the policy's own"),
    ("debate/consensus_accuracy", "consensus YES/NO right (informed turns)"),
    ("debate/comparison_rate", "comparison rate"),
    ("debate/rounds_played", "rounds played"),
    ("debate/ended_by_consensus", "ended by consensus"),
    ("direct/wrong_mode_share", "the most common wrong answer's share, direct"),
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

DERIVED = re.compile(r"_(se|n|change|change_se)$")
"""Suffixes of a metric's companions (its SE, count and change), shown with it, not as rows."""

CHANGE_NOTE = (
    '<p class="note">Each value ± its standard error over problems; a proportion of trials (a debate\'s answer, '
    "judge accuracy over decidable votes, answer changes over agents) with its 95% Wilson interval "
    "<code>[low, high]</code> and its count <code>n</code>. A figure over fewer than 20 observations shows its "
    "count and no SE: too few for a verdict. A change is <i>paired</i> when measured per problem (the same "
    "problems and seeds), else <i>independent</i>: its SE treats the two evaluations as unrelated. Green is "
    "better and red worse by the metric's declared direction; a metric without one is not coloured. "
    "<code>debate_minus_direct</code> is debate accuracy minus direct accuracy, paired per problem: what the "
    "debate adds.</p>"
)


def per_problem(record: JsonMapping) -> dict[str, list[float]]:
    """A record's per-problem values, with ``debate_minus_direct`` per problem (the debate's
    answer minus the direct answers) where the record predates its being kept."""
    kept = record.get("per_problem")
    if not isinstance(kept, dict):
        return {}
    values = {
        name: [float(x) for x in v] for name, v in kept.items() if isinstance(v, list) and all(is_number(x) for x in v)
    }
    for name, direct in list(values.items()):
        prefix, _, rest = name.rpartition("/direct/correct")
        if rest or not prefix or f"{prefix}/debate_minus_direct" in values:
            continue
        debate = [v for n, v in values.items() if n == f"{prefix}/debate/answer_correct"] or [
            v for n, v in values.items() if re.fullmatch(re.escape(prefix) + r"/debate/cons@\d+", n)
        ]
        if len(debate) == 1 and len(debate[0]) == len(direct):
            values[f"{prefix}/debate_minus_direct"] = [b - a for a, b in zip(direct, debate[0], strict=True)]
    return values


def paired_between(before: JsonMapping, after: JsonMapping) -> dict[str, Paired]:
    """The paired change of every metric both evaluation records hold per problem (equally many
    values), by full metric name. Only meaningful for evaluations of the same problems in the same
    order."""
    derived = paired_changes(per_problem(before), per_problem(after))
    return {
        name[: -len("_change")]: Paired(value, derived[f"{name}_se"], len(per_problem(after)[name[: -len("_change")]]))
        for name, value in derived.items()
        if name.endswith("_change")
    }


def with_paired_changes(evaluations: Sequence[JsonObject]) -> list[JsonObject]:
    """The evaluations, the last one's metrics completed with the paired ``<metric>_change`` and
    ``<metric>_change_se`` since the first from both records' per-problem values, where it did
    not record them itself (a run made before a metric was kept per problem); what a record
    holds is never replaced."""
    out = [dict(e) for e in evaluations]
    if len(out) > 1:
        derived = paired_changes(per_problem(out[0]), per_problem(out[-1]))
        out[-1]["metrics"] = {**derived, **out[-1]["metrics"]}
    return out


def evaluation_prefixes(evaluations: Sequence[JsonMapping]) -> list[str]:
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


def other_rows(present: set[str], shown: Sequence[tuple[str, str]]) -> list[str]:
    """Every metric present that is neither a headline row nor a companion of one."""
    skip = {n for n, _ in shown}
    return sorted(n for n in present if n not in skip and not DERIVED.search(n))


def metrics_of(record: JsonMapping, prefix: str) -> set[str]:
    """The metric names (without ``prefix/``) an evaluation record holds under ``prefix``."""
    return {k.split("/", 1)[1] for k in record["metrics"] if k.startswith(prefix + "/")}


def figure_html(metrics: JsonMapping, name: str) -> str:
    """A value with its interval or SE and count (``–`` when absent)."""
    figure = read_figure(metrics, name)
    if figure is None:
        return "–"
    detail = figure.detail_text()
    return escape(figure.main_text()) + (f' <span class="se">{escape(detail)}</span>' if detail else "")


def change_html(change: Change | None) -> str:
    """A change, coloured by its verdict, with its SE or count."""
    if change is None:
        return "–"
    main = escape(change.main_text())
    detail = change.detail_text()
    return (f'<span class="{change.verdict}">{main}</span>' if change.verdict else main) + (
        f' <span class="se">{escape(detail)}</span>' if detail else ""
    )


def _heading(record: JsonMapping, segments: Sequence[Segment]) -> str:
    where = f"step {record['step']}"
    if len(segments) > 1:
        where += f" · segment {segment_of(segments, int(record['step'])).number}"
    return f"<th>{escape(str(record['label']))}<br><small>{where}</small></th>"


def segments_note(segments: Sequence[Segment]) -> str:
    """The list of a resumed run's segments (nothing for a run with one)."""
    if len(segments) < 2:
        return ""
    items = "".join(f'<li class="segment">{escape(s.describe())}</li>' for s in segments)
    return f'<p class="note">The configuration changed at a resume; segments:</p><ul class="segments">{items}</ul>'


def evaluation_table(evaluations: Sequence[JsonObject], segments: Sequence[Segment] = ()) -> str:
    """Per evaluation dataset: the headline metrics at each evaluation, and their change since the
    first evaluation; every other metric in a folded table. With ``segments`` of a resumed run,
    each column names its segment."""
    if not evaluations:
        return '<p class="note">No evaluation yet.</p>'
    evaluations = with_paired_changes(evaluations)
    prefixes = evaluation_prefixes(evaluations)
    if not prefixes:
        return '<p class="note">The evaluations hold no <code>eval_&lt;dataset&gt;/</code> metric.</p>'
    first, last = evaluations[0]["metrics"], evaluations[-1]["metrics"]
    out = [segments_note(segments)]
    for prefix in prefixes:
        head = "".join(_heading(e, segments) for e in evaluations)
        if len(evaluations) > 1:
            head += f"<th>change since {escape(str(evaluations[0]['label']))}</th>"

        def row(name: str, label: str, prefix: str = prefix) -> str:
            full = f"{prefix}/{name}"
            cells = "".join(f"<td>{figure_html(e['metrics'], full)}</td>" for e in evaluations)
            if len(evaluations) > 1:
                cells += f"<td>{change_html(change_in(first, last, full, recorded_paired(last, full)))}</td>"
            return f'<tr><td class="label">{escape(label)} <code>{escape(name)}</code></td>{cells}</tr>'

        present = set().union(*(metrics_of(e, prefix) for e in evaluations))
        shown = headline_rows(present)
        rows = "".join(row(name, label) for name, label in shown)
        rest = "".join(row(name, "") for name in other_rows(present, shown))
        out.append(
            f'<h3><code>{escape(prefix)}</code></h3><table class="evaluation"><tr><th>metric</th>{head}</tr>'
            f"{rows}</table><details><summary>every other metric of {escape(prefix)}</summary>"
            f'<table class="evaluation"><tr><th>metric</th>{head}</tr>{rest}</table></details>'
        )
    return "".join(out) + CHANGE_NOTE
