"""Debate records built without a model or a parser: for reward tests and the contract suite.

A synthetic debate follows the fixed agent order of the built-in coordinators: turn ``k``
(commit order) belongs to agent ``k % N`` in round ``k // N + 1``. Comparisons are given
as raw ``(a, op, b)`` lines and go through the authorship rules (``apply_authorship``) exactly as a
coordinator applies them (:func:`~debate_core.debate.authorship.apply_authorship`): a line
naming its author is a self-comparison first, whatever the other id; of the rest, an id out
of range or ``a == b`` is malformed. A failed turn (a parse error) contributes no votes and
no counts, since its parse is not trusted.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

import attrs

from debate_core.debate.protocols import visibility_rule
from debate_core.debate.xml_parser import XML_CONTRACT
from debate_core.records import (
    CheckedComparisons,
    Comparison,
    ComparisonOp,
    DebateRecord,
    ParsedResponse,
    ParseError,
    ResponseContent,
    SectionSpan,
    Turn,
    apply_authorship,
)

TurnProtocol = Literal["sequential", "parallel"]
"""The built-in turn protocols a synthetic debate can follow."""


@attrs.frozen(kw_only=True)
class TurnSpec:
    """What one synthetic turn says. ``comparisons`` are raw lines (ids unchecked);
    ``invalid_lines`` adds that many non-comparison lines to the comparison section."""

    solution: str = "42"
    evaluation: str = "N/A"
    comparisons: tuple[tuple[int, ComparisonOp, int], ...] = ()
    invalid_lines: int = 0
    consensus: bool = False
    failed: bool = False
    grade: float | None = None


def response_text(spec: TurnSpec) -> tuple[str, tuple[SectionSpan, ...]]:
    """The text of a turn in the XML output contract, and the character spans of its sections."""
    rendered = XML_CONTRACT.render(
        ResponseContent(
            solution=spec.solution,
            evaluation=spec.evaluation,
            comparisons=tuple(Comparison(a, op, b) for a, op, b in spec.comparisons),
            extra_comparison_lines=("I prefer the first one.",) * spec.invalid_lines,
            consensus=spec.consensus,
            consensus_reason="synthetic",
        )
    )
    return rendered.text, rendered.spans


def synthetic_debate(
    num_agents: int,
    turns: Sequence[TurnSpec],
    *,
    protocol: TurnProtocol = "sequential",
    answer: str | None = None,
    question: str = "What is 6 * 7?",
    max_rounds: int | None = None,
    debate_id: str = "synthetic",
) -> DebateRecord:
    """A debate record from turn specs in commit order (agent ``k % N`` speaks at turn ``k``).

    Under ``sequential`` turns each turn sees every earlier turn; under ``parallel`` rounds
    it sees the earlier rounds only. The debate is marked aborted when a turn failed.
    """
    if num_agents < 1:
        raise ValueError("a debate needs at least one agent")
    built = [_synthetic_turn(spec, k, num_agents, protocol) for k, spec in enumerate(turns)]
    failed = next((t for t in built if t.failed), None)
    rounds = max((t.round for t in built), default=0)
    last_round = [t for t in built if t.round == rounds]
    consensus = bool(last_round) and len(last_round) == num_agents and all(t.response.consensus for t in last_round)
    return DebateRecord(
        question=question,
        num_agents=num_agents,
        turns=tuple(built),
        protocol=protocol,
        max_rounds=max(max_rounds or 0, rounds, 1),
        answer=answer,
        debate_id=debate_id,
        consensus_reached=consensus and failed is None,
        aborted=failed is not None,
        abort_reason=None if failed is None else f"turn {failed.turn_index} of agent {failed.agent} failed to parse",
    )


def _synthetic_turn(spec: TurnSpec, k: int, num_agents: int, protocol: str) -> Turn:
    """Turn ``k`` of the commit order: agent ``k % N`` in round ``k // N + 1``, its comparisons
    through the authorship rules (none for a failed turn), seeing what the protocol shows it."""
    agent, step = k % num_agents, k // num_agents
    text, spans = response_text(spec)
    response = _synthetic_response(spec, spans)
    authored = CheckedComparisons() if spec.failed else apply_authorship(response.comparisons, agent, num_agents)
    visible = _visible_turns(protocol, k, step * num_agents)
    return Turn(
        round=step + 1,
        agent=agent,
        step=step,
        turn_index=k,
        visible_turns=visible,
        text=text,
        response=response,
        persona=f"persona-{agent}",
        comparisons=authored.valid,
        self_comparisons=authored.self_comparisons,
        malformed_comparisons=authored.malformed,
        grade=None if spec.failed else spec.grade,
    )


def _synthetic_response(spec: TurnSpec, spans: tuple[SectionSpan, ...]) -> ParsedResponse:
    """The parse of a synthetic turn, as the spec says it (raw comparisons, unchecked); a failed
    turn has a parse error and no spans."""
    raw = tuple(Comparison(a, op, b) for a, op, b in spec.comparisons)
    error = ParseError("missing_tag", "synthetic failure: the response broke the contract") if spec.failed else None
    return ParsedResponse(
        solution=spec.solution,
        evaluation=spec.evaluation,
        comparison="\n".join(f"Agent {c.a} {c.op} Agent {c.b}" for c in raw) or "N/A",
        consensus=spec.consensus,
        consensus_reason="synthetic",
        comparisons=raw,
        invalid_comparison_lines=spec.invalid_lines,
        spans=() if spec.failed else spans,
        error=error,
    )


def random_debate(
    rng: random.Random,
    *,
    max_agents: int = 5,
    max_rounds: int = 3,
    failure_rate: float = 0.05,
    bad_line_rate: float = 0.15,
) -> DebateRecord:
    """A random debate: random votes (ties, out-of-range ids, self-comparisons included),
    random grades, sometimes aborted by a failed turn, under either protocol."""
    num_agents = rng.randint(1, max_agents)
    rounds = rng.randint(1, max_rounds)
    protocol: TurnProtocol = rng.choice(("sequential", "parallel"))
    specs: list[TurnSpec] = []
    for _ in range(num_agents * rounds):
        comparisons: list[tuple[int, ComparisonOp, int]] = []
        for _ in range(rng.randint(0, 2 * num_agents)):
            if rng.random() < bad_line_rate:
                a, b = rng.randint(-1, num_agents), rng.randint(-1, num_agents)
            else:
                a, b = rng.randrange(num_agents), rng.randrange(num_agents)
            op: ComparisonOp = ">" if rng.random() < 0.75 else "="
            comparisons.append((a, op, b))
        failed = rng.random() < failure_rate
        specs.append(
            TurnSpec(
                solution=" ".join(["word"] * rng.randint(0, 40)),
                comparisons=tuple(comparisons),
                invalid_lines=rng.choice((0, 0, 0, 1, 2)),
                consensus=rng.random() < 0.3,
                failed=failed,
                grade=rng.choice((None, 0.0, 1.0)),
            )
        )
        if failed:
            break
    return synthetic_debate(
        num_agents,
        specs,
        protocol=protocol,
        answer=rng.choice((None, "42")),
        max_rounds=rounds,
        debate_id=f"random-{rng.randrange(10**9)}",
    )


def _visible_turns(protocol: str, turn_index: int, round_start: int) -> int:
    """What the turn could see, by the coordinator's rule for ``protocol``."""
    rule = visibility_rule(protocol)
    seen = None if rule is None else rule(turn_index, round_start)
    if seen is None:
        raise ValueError(f"protocol {protocol!r} has no fixed visibility rule")
    return seen
