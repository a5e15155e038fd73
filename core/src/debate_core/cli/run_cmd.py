"""``debate run CONFIG --question ...``: debates at test time through the training code path.

The run file chooses the backend, the model and every debate component; each question is
debated with ``run_debate`` (the same function training uses), then the transcript, the vote
tally and the final answer are printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from debate_core.errors import DebateError

if TYPE_CHECKING:
    from debate_core.config import RunConfig
    from debate_core.plugin import Registry
    from debate_core.records import DebateAnswer, DebateRecord, Problem
    from debate_core.runtime.session import BackendSession


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        help="debate questions at test time with the configured backend and print the result",
        description=(
            "Run one debate per question with the run file's backend, model and debate components, and print "
            "the transcript, the vote tally and the final answer under the run's answer rule (debate.final_answer, "
            "docs/answer-rules.md). Overrides (section.key=value) go right after CONFIG or in --set."
        ),
    )
    parser.add_argument("config", metavar="CONFIG", help="run file (TOML)")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="overrides of the run file")
    questions = parser.add_mutually_exclusive_group(required=True)
    questions.add_argument("--question", metavar="TEXT", help="one question")
    questions.add_argument(
        "--questions",
        metavar="FILE.jsonl",
        help='one JSON object per line: {"question": ..., "answer": ... (optional), "id": ... (optional)}',
    )
    parser.add_argument("--answer", metavar="TEXT", help="the ground-truth answer of --question, for grading")
    parser.add_argument(
        "--set", dest="more_overrides", action="append", default=[], metavar="section.key=value", help="an override"
    )
    parser.add_argument(
        "--out", metavar="FILE", help="write the transcript (JSON; one transcript per line with --questions)"
    )
    parser.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="sample from saved weights instead of the base model: a checkpoint manifest, a run directory "
        "(its latest checkpoint) or a backend path; the weights saved for sampling are opened",
    )
    parser.add_argument(
        "--temperature",
        metavar="T",
        help="sampling temperature of every agent: sets evaluation.temperature (default: the run file's, "
        "as in evaluation; unset, the personas' own, else debate.temperature)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the tally and the final answer")
    parser.set_defaults(handler=run)


def _open_session(config: RunConfig, registry: Registry, checkpoint: str | None) -> BackendSession:
    """The backend session, sampling only: on the base model, or on the weights a checkpoint saved
    (which checkpoint, its step and the weights' path said on standard error)."""
    from debate_core.runtime.interrupts import run_interruptibly
    from debate_core.training.evaluation.policy_debate import open_weights_session
    from debate_core.training.policy_weights import resolve_policy_weights

    weights = resolve_policy_weights(checkpoint, "--checkpoint") if checkpoint is not None else None
    if weights is not None:
        print(f"debate: {weights.describe(checkpoint or '')}", file=sys.stderr)
    return run_interruptibly(open_weights_session(config, registry, weights))


def read_questions(path: str) -> list[Problem]:
    """The problems of a JSONL file; errors name the line."""
    from debate_core.files import read_jsonl
    from debate_core.records import Problem

    problems: list[Problem] = []
    for where, obj in read_jsonl(Path(path), DebateError, "questions file"):
        if not isinstance(obj, dict):
            raise DebateError(f"{where}: expected a JSON object with a 'question' key")
        question = obj.get("question")
        if not isinstance(question, str) or not question.strip():
            raise DebateError(f"{where}: 'question' must be a non-empty string")
        answer = obj.get("answer")
        if answer is not None and (isinstance(answer, bool) or not isinstance(answer, str | int | float)):
            raise DebateError(f"{where}: 'answer' must be a string or a number")
        problem_id = str(obj.get("id", f"q{len(problems)}"))
        problems.append(Problem(id=problem_id, question=question, answer=None if answer is None else str(answer)))
    if not problems:
        raise DebateError(f"{path}: no questions")
    return problems


def format_transcript(record: DebateRecord) -> list[str]:
    """The turns of a debate as readable text."""
    from debate_core.debate.seating import seats_note

    lines = [f"Question: {record.question}"]
    for turn in record.turns:
        persona = f" ({turn.persona})" if turn.persona else ""
        lines.append(f"--- Round {turn.round}, Agent {turn.agent}{persona} ---")
        note = seats_note(turn.agent, turn.seats)
        if note is not None:
            lines.append(f"({note})")
        lines.append(turn.text.strip() or "(no text)")
        if turn.response.error is not None:
            lines.append(f"[{turn.response.error.code}] {turn.response.error.message}")
    return lines


def answer_basis(answer: DebateAnswer) -> str:
    """Which answer rule gave the answer, and what it weighed (docs/answer-rules.md)."""
    if answer.fallback:
        return f"{answer.rule}: no vote to count, so {answer.fallback}"
    if answer.rule == "majority" or not answer.candidates:
        return str(answer.rule)
    return f"{answer.rule}, vote score {answer.candidates[0].score:g}"


def format_outcome(record: DebateRecord, answer: DebateAnswer) -> list[str]:
    """Vote tally, consensus and final answer of a debate."""
    from debate_core.debate.final_answer import format_vote_counts, runoff_candidates
    from debate_core.debate.runoff_protocol import RunoffTurns
    from debate_core.records import vote_counts

    runoff = record.protocol == RunoffTurns.protocol_name
    candidates = {t.agent for t in runoff_candidates(record)} if runoff else set()
    counts = vote_counts(record)
    if runoff:  # its judges are never voted on: the tally is the candidates'
        counts = tuple(c for c in counts if c.agent in candidates)
    lines = ["Votes:"] + [f"  {line}" for line in format_vote_counts(counts)]
    rounds = f"{record.rounds_played} of {record.max_rounds} rounds"
    if record.aborted:
        lines.append(f"Debate aborted after {rounds}: {record.abort_reason}")
    elif runoff and record.rounds_played < record.max_rounds and len(answer.candidates) == 1:
        lines.append(f"Debate over after {rounds}: the candidates agree, nothing to judge.")
    else:
        reached = "consensus reached" if record.consensus_reached else "no consensus"
        lines.append(f"Debate over after {rounds}, {reached}.")
    if answer.answer is None:
        lines.append("Final answer: none (no agent gave a valid response)")
    else:
        verdict = "" if answer.correct is None else (" [correct]" if answer.correct else " [wrong]")
        held = f"{answer.support} of {record.num_agents} agents"
        basis = answer_basis(answer)
        if runoff:  # its judges' own answers are not candidates; agreeing ones were not judged
            held = f"{answer.support} of {len(candidates)} candidates"
            basis = f"{answer.rule}, the only answer given" if len(answer.candidates) == 1 else basis
        lines.append(f"Final answer: {answer.answer} ({held}; {basis}){verdict}")
    return lines


def run(args: argparse.Namespace) -> int:
    import asyncio

    from debate_core.config import load_run_config, option_value
    from debate_core.debate.transcripts import dumps_transcript, save_transcript
    from debate_core.files import atomic_write_text
    from debate_core.plugin import get_registry
    from debate_core.records import Problem
    from debate_core.runtime.context_guard import check_run_fits_context

    if args.temperature is not None:  # checked as evaluation.temperature, which it stands in for
        args.temperature = option_value("--temperature", args.temperature, "evaluation.temperature")
    overrides: Sequence[str] = [*args.overrides, *args.more_overrides]
    if args.temperature is not None:  # validated with the run file, like any override
        overrides = [*overrides, f"evaluation.temperature={args.temperature!r}"]
    config = load_run_config(args.config, overrides, registry=get_registry())
    check_run_fits_context(config, get_registry())
    if args.questions is not None:
        problems = read_questions(args.questions)
    else:
        if not args.question.strip():
            raise DebateError("--question must not be empty")
        problems = [Problem(id="q0", question=args.question, answer=args.answer)]

    registry = get_registry()
    session = _open_session(config, registry, args.checkpoint)
    status = "errored"
    try:
        records = _debate_each(args, config, registry, session, problems)
        status = "success"
    finally:
        asyncio.run(session.close(status))

    if args.out is not None:
        if args.questions is None:
            save_transcript(records[0], args.out)
        else:
            atomic_write_text(Path(args.out), "".join(dumps_transcript(r, indent=None) + "\n" for r in records))
        print(f"Transcript written to {args.out}")
    return 0


def _debate_each(
    args: argparse.Namespace, config: RunConfig, registry: Registry, session: BackendSession, problems: list[Problem]
) -> list[DebateRecord]:
    """Debate each problem on the open session, printing each transcript and outcome."""

    from debate_core.debate.final_answer import final_answer
    from debate_core.runtime.interrupts import run_interruptibly
    from debate_core.runtime.sampling_failures import raise_backend_failure
    from debate_core.terminal import visible
    from debate_core.training.evaluation.policy_debate import PolicyDebate

    debate = PolicyDebate.build(config, registry, session.tokenizer)
    sampler = session.sampler()

    records = []
    for index, problem in enumerate(problems):
        episode = run_interruptibly(debate.play(problem, sampler, seed=config.run.seed + index, debate_id=problem.id))
        raise_backend_failure(sampler, [episode], config)
        record = episode.record
        records.append(record)
        answer = final_answer(record, debate.grader, rule=debate.setup.answer_rule)
        if len(problems) > 1:
            print(visible(f"=== Debate {index + 1} of {len(problems)} ({problem.id}) ==="))
        lines = [] if args.quiet else format_transcript(record)
        print(visible("\n".join([*lines, *format_outcome(record, answer)])))
        if len(problems) > 1:
            print()

    return records
