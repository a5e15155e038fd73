"""``debate show TRANSCRIPT [--turn N]``: a saved debate as readable text.

Reads one transcript, a JSON list of them, or the JSON Lines file ``debate run --questions ...
--out`` writes, and prints each debate: its question, every turn with its sections, valid votes,
grade and parse error, then the vote tally, how it ended and its final answer under ``--rule``
(default ``vote_winner``, the default of ``debate.final_answer``; docs/answer-rules.md).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from debate_core.errors import DebateError

if TYPE_CHECKING:
    from debate_core.records import AnswerRule, DebateRecord, Grader, Turn

SECTION_ORDER = ("solution", "evaluation", "comparison", "consensus", "consensus_reason")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "show",
        help="print a saved debate transcript as readable text",
        description="Print saved debates (a transcript, or the JSON Lines of `debate run --questions --out`) as "
        "text: rounds, agents, sections, votes, grades, the vote tally and the final answer.",
    )
    parser.add_argument("transcript", metavar="TRANSCRIPT", help="a transcript file (.json) or JSON Lines (.jsonl)")
    parser.add_argument("--turn", type=int, metavar="N", help="only turn N (its turn_index: 0 is the first turn)")
    parser.add_argument("--debate", metavar="ID", help="only the debate with this debate_id (or 0-based position)")
    parser.add_argument(
        "--grader",
        default="boxed",
        metavar="NAME",
        help="the grader that reads and checks final answers (default boxed; 'none' shows raw solutions)",
    )
    parser.add_argument(
        "--rule",
        default="vote_winner",
        metavar="NAME",
        help="the answer rule that gives the debate's answer (default vote_winner, as debate.final_answer; "
        "majority, answer_votes or an installed rule)",
    )
    parser.set_defaults(handler=run)


def turn_lines(turn: Turn) -> list[str]:
    """One turn: who, grade, each section's content as the parser found it, votes and errors."""
    from debate_core.debate.seating import seats_note

    persona = f" ({turn.persona})" if turn.persona else ""
    grade = "" if turn.grade is None else ("  [correct]" if turn.grade >= 1.0 else "  [wrong]")
    lines = [f"--- Turn {turn.turn_index}: round {turn.round}, agent {turn.agent}{persona}{grade} ---"]
    note = seats_note(turn.agent, turn.seats)
    if note is not None:
        lines.append(f"  ({note})")
    spans = sorted(turn.response.spans, key=lambda s: SECTION_ORDER.index(s.name) if s.name in SECTION_ORDER else 99)
    if spans:
        for span in spans:
            content = turn.text[span.start : span.end].strip()
            indented = content.replace("\n", "\n    ")
            lines.append(f"  [{span.name}] {indented}" if content else f"  [{span.name}] (empty)")
    else:
        lines.append("  " + (turn.text.strip().replace("\n", "\n  ") or "(no text)"))
    if turn.comparisons:
        lines.append("  votes: " + ", ".join(f"Agent {c.a} {c.op} Agent {c.b}" for c in turn.comparisons))
    dropped = turn.self_comparisons + turn.malformed_comparisons
    if dropped:
        lines.append(
            f"  dropped comparisons: {turn.self_comparisons} naming the author, {turn.malformed_comparisons} malformed"
        )
    if turn.response.error is not None:
        lines.append(f"  FAILED [{turn.response.error.code}] {turn.response.error.message}")
    return lines


def debate_lines(
    record: DebateRecord, turn: int | None, grader: Grader | None = None, rule: AnswerRule | None = None
) -> list[str]:
    """A whole debate (or one of its turns), its answer under ``rule`` (default ``majority``)."""
    from debate_core.cli.run_cmd import format_outcome
    from debate_core.debate.final_answer import final_answer

    ident = f" {record.debate_id}" if record.debate_id else ""
    answer = f" (ground truth {record.answer})" if record.answer is not None else ""
    header = [
        f"=== Debate{ident}: {record.num_agents} agents, {record.protocol}, max {record.max_rounds} rounds ===",
        f"Question: {record.question}{answer}",
    ]
    if turn is not None:
        if not 0 <= turn < len(record.turns):
            raise DebateError(
                f"--turn {turn}: debate{ident} has {len(record.turns)} turns (0 to {len(record.turns) - 1})"
            )
        return [*header, *turn_lines(record.turns[turn])]
    body = [line for t in record.turns for line in turn_lines(t)]
    return [*header, *body, *format_outcome(record, final_answer(record, grader, rule=rule))]


def run(args: argparse.Namespace) -> int:
    from debate_core.debate.final_answer import NamedAnswerRule
    from debate_core.debate.transcripts import load_transcripts
    from debate_core.plugin import get_registry
    from debate_core.terminal import visible

    records = load_transcripts(args.transcript)
    grader = None if args.grader == "none" else get_registry().build("grader", args.grader, None, "--grader")
    rule = NamedAnswerRule(args.rule, get_registry().build("answer_rule", args.rule, None, "--rule"))
    if args.debate is not None:
        chosen = [r for r in records if r.debate_id == args.debate]
        if not chosen and args.debate.isdigit() and int(args.debate) < len(records):
            chosen = [records[int(args.debate)]]
        if not chosen:
            ids = ", ".join(r.debate_id or "(no id)" for r in records[:10])
            raise DebateError(f"--debate {args.debate}: no such debate in {args.transcript} (ids: {ids})")
        records = chosen
    blocks = ["\n".join(debate_lines(r, args.turn, grader, rule)) for r in records]
    print(visible("\n\n".join(blocks)))  # model text: escape sequences shown, not obeyed
    return 0
