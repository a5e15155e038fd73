"""What an agent sees: its system prompt and a conversation built from the selected history.

The conversation keeps the agent's own earlier responses as its own (assistant) messages,
verbatim, and puts everything else in user messages: each one holds the other agents' turns
that came since the agent's previous turn (as the history policy shows them) followed by that
turn's instructions, and the first one ends with the question, the last thing the agent reads
before its first answer. When the history policy
only ever adds turns (``all``), each prompt therefore extends the previous prompt and
response, and the agent's whole debate is one training sequence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from debate_core.records import HistoryEntry, Message, OutputContract, Persona


@attrs.frozen
class OwnTurn:
    """One of the agent's earlier turns: its raw response, the instructions it answered, and
    how many committed turns it could see (``Turn.visible_turns``)."""

    text: str
    instructions: str
    visible_turns: int


def system_prompt(persona: Persona, contract: OutputContract, agent: int) -> str:
    """An agent's system prompt: its persona's prompt, then the output contract's instructions."""
    return f"{persona.system_prompt}\n\n{contract.instructions_for(agent)}"


def format_entry(entry: HistoryEntry) -> str:
    """One earlier turn of another agent, as shown in a prompt."""
    lines = [
        f"[Agent {entry.agent}, round {entry.round}]",
        f"Solution: {entry.solution or 'N/A'}",
    ]
    if entry.answer is not None:
        lines.append(f"Answer: {entry.answer}")
    lines.append(f"Evaluation: {entry.evaluation or 'N/A'}")
    if entry.comparison is not None:
        lines.append(f"Comparisons: {entry.comparison or 'N/A'}")
    if entry.consensus_reason is not None:
        lines.append(f"Consensus reason: {entry.consensus_reason or 'N/A'}")
    return "\n".join(lines)


def recap(question: str, others: Sequence[HistoryEntry]) -> str:
    """The question and each other agent's latest stated answer in two lines, for the end of a
    prompt (``debate.recap``, docs/protocol.md#what-an-agent-sees)::

        Question: What is 21+7?
        Stated answers: Agent 1 says 27. Agent 2 says 28.

    A small model copies what it needs from a few tokens back far more reliably than from a few
    hundred: the question for its own solution, the stated answers for its judgement.
    """
    latest: dict[int, HistoryEntry] = {}
    for entry in others:
        latest[entry.agent] = entry
    stated = " ".join(
        f"Agent {agent} says {'no answer' if entry.answer is None else entry.answer}."
        for agent, entry in sorted(latest.items())
    )
    lines = [f"Question: {question}"]
    if stated and any(e.answer is not None for e in latest.values()):
        lines.append(f"Stated answers: {stated}")
    return "\n".join(lines)


def _user_message(
    question: str, others: Sequence[HistoryEntry], instructions: str, *, first: bool, with_recap: bool
) -> Message:
    parts: list[str] = []
    if others:
        heading = "Responses of the other agents:" if first else "New responses since your last turn:"
        parts.append(heading + "\n\n" + "\n\n".join(format_entry(e) for e in others))
    parts.append(instructions)
    if first:
        parts.append(f"Question:\n{question}")
    elif with_recap:
        parts.append(recap(question, others))
    return Message("user", "\n\n".join(parts))


def build_messages(
    *,
    question: str,
    system_prompt: str,
    agent: int,
    entries: Sequence[HistoryEntry],
    turn_indices: Sequence[int],
    own_turns: Mapping[int, OwnTurn],
    instructions: str,
    with_recap: bool = False,
) -> list[Message]:
    """The messages of one turn's prompt.

    Each other agent's entry goes into the user message before the agent's first own turn
    that could see it (the current turn when none could), so every earlier user message is
    exactly what the agent was shown then, under either turn protocol.

    Args:
        question: the problem's question, always in the first user message.
        system_prompt: the agent's persona prompt.
        agent: the agent about to answer.
        entries: the earlier turns the history policy selected, in commit order; the agent's
            own entries mark which of its own responses are shown (verbatim, from ``own_turns``).
        turn_indices: the commit-order index of the turn behind each entry.
        own_turns: round -> the agent's own earlier turn.
        instructions: this turn's instructions (``turn_instructions``).
        with_recap: end every user message after the first (which already ends with the
            question) with the :func:`recap` of the question and the answers it shows.
    """
    shown_own = sorted(
        {e.round for e in entries if e.agent == agent and e.round in own_turns},
    )
    before_own: dict[int, list[HistoryEntry]] = {r: [] for r in shown_own}
    current: list[HistoryEntry] = []
    for entry, index in zip(entries, turn_indices, strict=True):
        if entry.agent == agent:
            continue
        seen_at = next((r for r in shown_own if own_turns[r].visible_turns > index), None)
        (current if seen_at is None else before_own[seen_at]).append(entry)

    messages = [Message("system", system_prompt)]
    first = True
    for r in shown_own:
        own = own_turns[r]
        messages.append(_user_message(question, before_own[r], own.instructions, first=first, with_recap=with_recap))
        messages.append(Message("assistant", own.text))
        first = False
    messages.append(_user_message(question, current, instructions, first=first, with_recap=with_recap))
    return messages
