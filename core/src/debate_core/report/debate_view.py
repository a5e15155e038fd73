"""One logged debate as HTML: each turn with its sections marked, the rewards and advantages of
every step, and per round the vote matrix (who preferred whom) beside the ground truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from debate_core.records import DebateAnswer, DebateRecord, Turn
from debate_core.records.json_values import JsonMapping, JsonValue
from debate_core.report.run_data import LoggedDebate

DebateAnswerer = Callable[[DebateRecord], DebateAnswer]
"""The debate's answer under the run's rule, answers read by its grader (``report.page.run_answerer``)."""


def _number(value: object) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:+.3f}" if value else "0"
    return "–"


def _grade_mark(grade: float | None) -> str:
    if grade is None:
        return '<span class="grade none" title="not graded">–</span>'
    if grade >= 1.0:
        return '<span class="grade right" title="correct">✓ right</span>'
    return '<span class="grade wrong" title="wrong">✗ wrong</span>'


def marked_text(turn: Turn) -> str:
    """The raw text with each section's content wrapped in ``<span class="sec" data-section=...>``;
    text outside every section (tags, preambles) is shown dimmed."""
    text = turn.text
    spans = sorted(
        (s for s in turn.response.spans if 0 <= s.start <= s.end <= len(text)), key=lambda s: (s.start, s.end)
    )
    out: list[str] = []
    position = 0
    for span in spans:
        if span.start < position:  # overlapping spans: show the text once
            continue
        if span.start > position:
            out.append(f'<span class="outside">{escape(text[position : span.start])}</span>')
        name = escape(span.name)
        out.append(
            f'<span class="sec sec-{name}" data-section="{name}">{escape(text[span.start : span.end]) or " "}</span>'
        )
        position = span.end
    if position < len(text):
        out.append(f'<span class="outside">{escape(text[position:])}</span>')
    return "".join(out) or '<span class="outside">(no text)</span>'


def _stream_values(rewards: JsonMapping | None, key: str, agent: int, step: int) -> dict[str, float]:
    """``stream -> value`` of one agent's step in a sidecar table (``streams`` or ``stream_advantages``)."""
    out: dict[str, float] = {}
    for stream, rows in ((rewards or {}).get(key) or {}).items():
        try:
            out[str(stream)] = float(rows[agent][step])
        except (IndexError, TypeError, ValueError, KeyError):
            continue
    return out


def _turn_rewards(rewards: JsonMapping | None, turn: Turn) -> str:
    """``generator r +0.500 A +0.250 · judge ...``: the step's reward and advantage per stream."""
    step_rewards = _stream_values(rewards, "streams", turn.agent, turn.step)
    step_advantages = _stream_values(rewards, "stream_advantages", turn.agent, turn.step)
    streams = sorted(set(step_rewards) | set(step_advantages))
    if not streams:
        return ""
    cells = [
        f'<span class="stream">{escape(s)}</span> r {_number(step_rewards.get(s))} A {_number(step_advantages.get(s))}'
        for s in streams
    ]
    return '<span class="step-rewards">' + " · ".join(cells) + "</span>"


def render_turn(turn: Turn, rewards: JsonMapping | None) -> str:
    """One turn: who spoke, its grade, its step rewards, and its text with sections marked."""
    persona = f" ({escape(turn.persona)})" if turn.persona else ""
    failed = ""
    if turn.response.error is not None:
        failed = (
            f'<div class="failed">failed: {escape(turn.response.error.code)}: '
            f"{escape(turn.response.error.message)}</div>"
        )
    votes = ", ".join(f"{c.a} {c.op} {c.b}" for c in turn.comparisons)
    vote_line = f'<span class="votes">votes: {escape(votes)}</span>' if votes else ""
    return (
        f'<div class="turn agent-{turn.agent % 8}">'
        f'<div class="turn-head"><b>Round {turn.round} · Agent {turn.agent}</b>{persona} {_grade_mark(turn.grade)} '
        f"{vote_line} {_turn_rewards(rewards, turn)}</div>{failed}"
        f'<pre class="text">{marked_text(turn)}</pre></div>'
    )


def vote_matrix(record: DebateRecord, round_: int) -> str:
    """The votes of one round as a table: row ``a``, column ``b`` lists the agents who voted
    ``a > b`` (``=`` marks a tie vote), beside each agent's grade in that round."""
    n = record.num_agents
    cells: dict[tuple[int, int], list[str]] = {}
    for turn in record.turns:
        if turn.round != round_:
            continue
        for c in turn.comparisons:
            mark = str(turn.agent) if c.op == ">" else f"={turn.agent}"
            cells.setdefault((c.a, c.b), []).append(mark)
            if c.op == "=":
                cells.setdefault((c.b, c.a), []).append(mark)
    grades = {t.agent: t.grade for t in record.turns if t.round == round_}
    head = "".join(f"<th>&gt; {b}</th>" for b in range(n))
    rows = []
    for a in range(n):
        row = "".join(
            f'<td class="{"self" if a == b else ("voted" if cells.get((a, b)) else "")}">'
            f"{escape(' '.join(cells.get((a, b), []))) if a != b else '·'}</td>"
            for b in range(n)
        )
        grade = _grade_mark(grades.get(a)) if a in grades else '<span class="grade none">no turn</span>'
        rows.append(f'<tr><th>Agent {a}</th>{row}<td class="truth">{grade}</td></tr>')
    return (
        f'<table class="votes-matrix"><caption>Round {round_}: row beat column, by whose vote</caption>'
        f"<tr><th></th>{head}<th>ground truth</th></tr>{''.join(rows)}</table>"
    )


def reward_table(record: DebateRecord, rewards: JsonMapping | None) -> str:
    """Per agent: final grade, the configured reward, failure penalty and advantage."""
    if rewards is None:
        return '<p class="note">No rewards beside this transcript (written by an older trainer, or not logged).</p>'

    def at(key: str, agent: int) -> JsonValue:
        values = rewards.get(key)
        return values[agent] if isinstance(values, Sequence) and agent < len(values) else None

    rows = []
    for agent in range(record.num_agents):
        final = record.final_turn(agent)
        penalty = at("failure_penalties", agent)
        rows.append(
            f"<tr><th>Agent {agent}</th><td>{_grade_mark(final.grade if final else None)}</td>"
            f"<td>{_number(at('rewards', agent))}</td><td>{'–' if penalty is None else -int(penalty) or 0}</td>"
            f"<td>{_number(at('advantages', agent))}</td></tr>"
        )
    dropped = ' <span class="note">(dropped as uniform)</span>' if rewards.get("advantages") is None else ""
    return (
        f'<table class="rewards"><caption>reward <code>{escape(str(rewards.get("reward", "?")))}</code>{dropped}'
        "</caption><tr><th></th><th>final answer</th><th>reward</th><th>failure penalty</th><th>advantage</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def answer_line(record: DebateRecord, rule: DebateAnswerer | None) -> str:
    """The debate's answer under the run's rule (``debate.final_answer``), with the rule named and
    the grade of the solution that stands for it, as the run graded it."""
    if rule is None:
        return ""
    answer = rule(record)
    if answer.answer is None:
        return f" · the debate's answer ({escape(answer.rule)}): none"
    graded = next((t.grade for t in record.turns if t.response.solution == answer.solution), None)
    basis = f"{answer.rule}, fell back to {answer.fallback}" if answer.fallback else answer.rule
    return f" · the debate's answer ({escape(basis)}): <b>{escape(answer.answer)}</b> {_grade_mark(graded)}"


def render_debate(debate: LoggedDebate, open_: bool = False, rule: DebateAnswerer | None = None) -> str:
    """A ``<details>`` block with the whole debate, its answer under ``rule`` when given."""
    title = f"step {debate.step} · debate {debate.index}"
    if debate.record is None:
        return (
            f'<details class="debate"><summary>{escape(title)}: unreadable</summary>'
            f'<p class="note">{escape(debate.error or "")}</p></details>'
        )
    record = debate.record
    if record.aborted:
        ending = f"aborted: {record.abort_reason}"
    else:
        ending = "consensus reached" if record.consensus_reached else "no consensus"
    summary = (
        f"{escape(title)} · <code>{escape(record.debate_id)}</code> · {record.rounds_played}/{record.max_rounds} "
        f"rounds · {escape(ending)} · {escape(record.question[:80])}"
    )
    matrices = "".join(vote_matrix(record, r) for r in range(1, record.rounds_played + 1))
    turns = "".join(render_turn(t, debate.rewards) for t in record.turns)
    answer = f" · ground truth <b>{escape(record.answer)}</b>" if record.answer is not None else ""
    return (
        f'<details class="debate"{" open" if open_ else ""}><summary>{summary}</summary>'
        f'<p class="question">{escape(record.question)}{answer} · protocol {escape(record.protocol)}'
        f"{answer_line(record, rule)}</p>"
        f'<div class="debate-tables">{reward_table(record, debate.rewards)}{matrices}</div>{turns}</details>'
    )
