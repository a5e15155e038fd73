"""The three-section output contract of the v2 debate write-up (docs/protocol.md#the-three-section-contract):
``<solution>``, ``<evaluation>`` and ``<comparison>``, read leniently.

A section that is missing is empty, one that is not closed runs to the end of the response,
and the order is free; nothing about the format ever fails a turn, so no debate is aborted over
format. What the format costs instead is the ``v2`` reward's format penalty: a response that
should have compared and resolved no vote gets -0.5 on its judge stream
(docs/rewards.md#format-penalty). There is no consensus section, so debates run ``max_rounds``
(pair it with ``debate.stop_on_consensus = "never"``). ``<think>`` markers are dropped as the
``xml`` parser drops them.
"""

from __future__ import annotations

import re

from debate_core.debate.xml_parser import comparison_line, parse_comparisons, render_tagged_sections
from debate_core.records import OutputContract, ParsedResponse, RenderedResponse, ResponseContent, SectionSpan

THREE_SECTIONS: tuple[str, ...] = ("solution", "evaluation", "comparison")
"""The sections of the three-section contract, in the order they are written."""

THREE_SECTION_INSTRUCTIONS = """\
Answer with these three sections, in this order:
<solution>your complete solution to the question</solution>
<evaluation>your critique of the other agents' solutions, or N/A</evaluation>
<comparison>your pairwise rankings of other agents, one per line, or N/A</comparison>

Rules:
- Reason before judging: work out your own solution and your evaluation first; write comparisons only after them.
- A comparison line is "Agent A > Agent B" (Agent A's response is better than Agent B's) or \
"Agent A = Agent B" (equally good), with agent numbers for A and B.
- Never include yourself (Agent {agent_id}) in a comparison, and compare only agents whose responses you were shown.
- Write N/A in <comparison> only when fewer than two other agents have answered: once two have, \
a response without a valid comparison is penalised."""
"""The contract and its rules, as every agent's system prompt states them."""

# possessive `\s*+` and never two adjacent `\s*`: no backtracking over "<" and a run of spaces
# (`<\s*/?\s*` is quadratic there), so reading stays linear in the response (docs/limits.md)
_TAG = re.compile(r"<\s*+(?:(?P<close>/)\s*+)?(?P<name>solution|evaluation|comparison)\s*+>", re.IGNORECASE)
_THINK_MARKER = re.compile(r"<\s*+(?:/\s*+)?think\s*+>", re.IGNORECASE)


def _blank_think_markers(text: str) -> str:
    """The text with ``<think>`` markers replaced by spaces of the same length (offsets stay raw)."""
    return _THINK_MARKER.sub(lambda m: " " * len(m.group(0)), text)


def parse_three_sections(text: str) -> ParsedResponse:
    """Read the three sections of one response; never raises and never reports a format error.

    Each section is the text after its first opening tag up to its closing tag (or the next
    opening tag of the contract, or the end). Spans are raw character offsets, in text order.
    """
    body = _blank_think_markers(text)
    tags = list(_TAG.finditer(body))
    fields: dict[str, str] = {}
    spans: list[SectionSpan] = []
    for name in THREE_SECTIONS:
        opening = next((t for t in tags if not t.group("close") and t.group("name").lower() == name), None)
        if opening is None:
            continue
        end = next((t.start() for t in tags if t.start() >= opening.end()), len(body))
        fields[name] = body[opening.end() : end].strip()
        spans.append(SectionSpan(name, opening.end(), end))
    comparisons, invalid_lines = parse_comparisons(fields.get("comparison", ""))
    return ParsedResponse(
        solution=fields.get("solution", ""),
        evaluation=fields.get("evaluation", ""),
        comparison=fields.get("comparison", ""),
        comparisons=comparisons,
        invalid_comparison_lines=invalid_lines,
        spans=tuple(sorted(spans, key=lambda s: s.start)),
    )


def render_three_sections(content: ResponseContent) -> RenderedResponse:
    """A response in the three-section contract, one section per line (consensus is not written)."""
    lines = [comparison_line(c) for c in content.comparisons] + list(content.extra_comparison_lines)
    sections = (
        ("solution", content.solution),
        ("evaluation", content.evaluation or THREE_SECTION_CONTRACT.empty_marker),
        ("comparison", "\n".join(lines) or THREE_SECTION_CONTRACT.empty_marker),
    )
    return render_tagged_sections(sections)


THREE_SECTION_CONTRACT = OutputContract(
    name="three_sections",
    sections=THREE_SECTIONS,
    section_labels={name: f"<{name}>" for name in THREE_SECTIONS},
    empty_marker="N/A",
    stop_marker="</comparison>",
    instructions=THREE_SECTION_INSTRUCTIONS,
    render=render_three_sections,
)
"""The three-section contract: solution, evaluation, comparison; ``N/A`` for nothing; ended by ``</comparison>``."""


class ThreeSectionParser:
    """The ``three_sections`` output parser: :func:`parse_three_sections` with its contract."""

    contract = THREE_SECTION_CONTRACT

    def parse(self, text: str) -> ParsedResponse:
        """Read one raw response; never raises, never a format error."""
        return parse_three_sections(text)
