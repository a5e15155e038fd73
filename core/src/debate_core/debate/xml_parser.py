"""The XML output contract (docs/protocol.md#the-output-contract): five tags in a fixed order,
parsed without ever raising.

Normalisations:

* Markdown code fences around the response: text outside the five sections is never part of
  a field, so fences (and anything else) before, between or after the sections are ignored.
  A fence *inside* a section is content (a code block in a solution) and is kept.
* ``<think>`` / ``</think>`` markers (any case, any spacing) are removed wherever they are;
  what they wrapped is kept.
* Preamble: parsing begins at the first opening tag of the five.

Spans are character offsets into the raw text (before normalisation), so the trainer can map
them onto sampled tokens.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from debate_core.records import (
    Comparison,
    ComparisonOp,
    OutputContract,
    ParsedResponse,
    ParseError,
    RenderedResponse,
    ResponseContent,
    SectionSpan,
)

SECTION_NAMES: tuple[str, ...] = ("solution", "evaluation", "comparison", "consensus", "consensus_reason")
"""The five tags of the XML contract, in the order they must appear."""

XML_TAGS: tuple[str, ...] = tuple(f"<{closing}{tag}>" for tag in SECTION_NAMES for closing in ("", "/"))
"""Every opening and closing tag of the contract (the embedded tokenizer makes each one token)."""

XML_INSTRUCTIONS = """\
Answer with exactly these five tags, in this order, and nothing outside them:
<solution>your complete solution to the question</solution>
<evaluation>your assessment of the other agents' responses, or N/A</evaluation>
<comparison>your comparisons of other agents, one per line, or N/A</comparison>
<consensus>YES or NO</consensus>
<consensus_reason>one or two sentences on why the agents do or do not agree</consensus_reason>

Rules:
- Reason before judging: work out your own solution and your evaluation first; write comparisons only after them.
- A comparison line is "Agent A > Agent B" (Agent A's response is better than Agent B's) or \
"Agent A = Agent B" (equally good), with agent numbers for A and B.
- Never include yourself (Agent {agent_id}) in a comparison, and compare only agents whose responses you were shown.
- Write N/A in <comparison> when there is nobody you may compare.
- Write YES in <consensus> only when every agent's latest solution agrees with yours; otherwise NO."""
"""The contract and its rules, as every agent's system prompt states them."""

XML_BRIEF_INSTRUCTIONS = """\
Answer in <solution>, <evaluation>, <comparison> ("Agent A > Agent B" or "Agent A = Agent B" \
per line, never Agent {agent_id}, or N/A), <consensus> (YES or NO) and <consensus_reason>."""
"""The contract in one sentence (``xml`` option ``instructions = "brief"``): about 50 tokens
instead of 230, for small models that learn the format in a warm-start, where every prompt
token is trained on and sampled through many times."""

_TAG = re.compile(
    r"<\s*(?:(?P<close>/)\s*)?(?P<name>solution|evaluation|comparison|consensus_reason|consensus)\s*>",
    re.IGNORECASE,
)
_THINK_MARKER = re.compile(r"<\s*(?:/\s*)?think\s*>", re.IGNORECASE)
_COMPARISON_LINE = re.compile(
    r"(?:[-*+\u2022]\s*|[0-9]{1,3}[.)]\s*)?"  # an optional list marker
    r"agent\s*(?P<a>[0-9]{1,18})\s*(?P<op>[<>=])\s*agent\s*(?P<b>[0-9]{1,18})"
    r"\s*[.,;]?",
    re.IGNORECASE,
)
_NO_COMPARISON = re.compile(r"(?:n\s*/\s*a|na|none)\s*\.?", re.IGNORECASE)
_CONSENSUS = re.compile(r"[\s*_`'\"]*(?P<value>yes|no)[\s.!*_`'\"]*", re.IGNORECASE)

_ORDER = ", ".join(SECTION_NAMES)


@attrs.frozen
class _Tag:
    name: str
    closing: bool
    start: int
    end: int

    def label(self) -> str:
        return f"</{self.name}>" if self.closing else f"<{self.name}>"


class _Normalised:
    """The text with ``<think>`` markers removed, and the way back to raw offsets."""

    def __init__(self, raw: str) -> None:
        pieces: list[str] = []
        # _cut_at[k]: normalised offset of the k-th removal; _shift[k]: raw chars removed up to it.
        self._cut_at: list[int] = []
        self._shift: list[int] = []
        removed = 0
        last = 0
        length = 0
        for match in _THINK_MARKER.finditer(raw):
            pieces.append(raw[last : match.start()])
            length += match.start() - last
            removed += match.end() - match.start()
            self._cut_at.append(length)
            self._shift.append(removed)
            last = match.end()
        pieces.append(raw[last:])
        self.text = "".join(pieces)

    def raw_index(self, index: int) -> int:
        """Raw offset of the normalised character at ``index``."""
        k = bisect.bisect_right(self._cut_at, index) - 1
        return index + (self._shift[k] if k >= 0 else 0)

    def raw_span(self, name: str, start: int, end: int) -> SectionSpan:
        """Raw span of the normalised range ``[start, end)`` (``start > 0``: a tag precedes it)."""
        if end > start:
            return SectionSpan(name, self.raw_index(start), self.raw_index(end - 1) + 1)
        at = self.raw_index(start - 1) + 1
        return SectionSpan(name, at, at)


def parse_comparisons(block: str) -> tuple[tuple[Comparison, ...], int]:
    """Comparison lines of a ``<comparison>`` block and the number of lines that are not one.

    ``Agent A > Agent B`` and ``Agent A = Agent B`` as written; ``Agent A < Agent B`` becomes
    ``B > A``. Spacing and case are free, a list marker (``-``, ``*``, ``1.``) may lead and one
    of ``.,;`` may end a line. Empty lines and ``N/A`` / ``none`` lines are neither.
    """
    found: list[Comparison] = []
    invalid = 0
    for line in block.splitlines():
        stripped = line.strip()
        if not stripped or _NO_COMPARISON.fullmatch(stripped):
            continue
        match = _COMPARISON_LINE.fullmatch(stripped)
        if match is None:
            invalid += 1
            continue
        a, b = int(match.group("a")), int(match.group("b"))
        op = match.group("op")
        if op == "<":
            found.append(Comparison(b, ">", a))
        else:
            operator: ComparisonOp = ">" if op == ">" else "="
            found.append(Comparison(a, operator, b))
    return tuple(found), invalid


def _consensus_value(content: str) -> bool | None:
    match = _CONSENSUS.fullmatch(content)
    if match is None:
        return None
    return match.group("value").lower() == "yes"


def _shorten(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _error_expecting_open(name: str, found: _Tag, later: Sequence[_Tag]) -> ParseError:
    if found.closing and found.name == name:
        return ParseError("missing_tag", f"<{name}> is missing: found </{name}> without its opening tag")
    if any(not t.closing and t.name == name for t in later):
        return ParseError(
            "out_of_order",
            f"{found.label()} comes where <{name}> was expected; the tags must appear in the order {_ORDER}",
        )
    return ParseError("missing_tag", f"<{name}> is missing (found {found.label()} where it was expected)")


def parse_response(text: str) -> ParsedResponse:
    """Parse one raw response against the output contract. Never raises.

    On failure the fields hold the sections read before the problem, and ``error`` says what
    is missing or out of order.
    """
    if not text.strip():
        return ParsedResponse(error=ParseError("empty", "the response is empty"))
    normalised = _Normalised(text)
    tags = _tags_from_first_opening(normalised.text)
    if not tags:
        return ParsedResponse(
            error=ParseError("missing_tag", "no <solution> tag found: the response opens none of the five sections")
        )
    sections = _read_sections(normalised, tags)
    comparisons, invalid_lines = parse_comparisons(sections.fields.get("comparison", ""))
    return ParsedResponse(
        solution=sections.fields.get("solution", ""),
        evaluation=sections.fields.get("evaluation", ""),
        comparison=sections.fields.get("comparison", ""),
        consensus=sections.consensus,
        consensus_reason=sections.fields.get("consensus_reason", ""),
        comparisons=comparisons,
        invalid_comparison_lines=invalid_lines,
        spans=sections.spans,
        error=sections.error,
    )


@attrs.frozen
class _Sections:
    """The sections read in order up to the first problem: their stripped contents, their raw
    spans, the consensus value, and the problem (``None`` when all five were read)."""

    fields: Mapping[str, str]
    spans: tuple[SectionSpan, ...]
    consensus: bool
    error: ParseError | None


def _tags_from_first_opening(body: str) -> list[_Tag]:
    """The contract's tags in ``body`` from the first opening one on (the preamble is skipped);
    empty when no section is opened."""
    tags = [_Tag(m.group("name").lower(), bool(m.group("close")), m.start(), m.end()) for m in _TAG.finditer(body)]
    first_open = next((k for k, t in enumerate(tags) if not t.closing), None)
    return [] if first_open is None else tags[first_open:]


def _section_error(name: str, tags: Sequence[_Tag], position: int) -> ParseError | None:
    """What is wrong with the tags at ``position`` as section ``name``: its opening tag must come
    there, followed by its closing tag; ``None`` when they do."""
    if position >= len(tags):
        return ParseError("missing_tag", f"<{name}> is missing (the response ends after the previous section)")
    opening = tags[position]
    if opening.closing or opening.name != name:
        return _error_expecting_open(name, opening, tags[position + 1 :])
    if position + 1 >= len(tags):
        return ParseError("unclosed_tag", f"<{name}> is not closed: the response ends before </{name}>")
    closing = tags[position + 1]
    if not closing.closing or closing.name != name:
        return ParseError("unclosed_tag", f"<{name}> is not closed: found {closing.label()} before </{name}>")
    return None


def _read_sections(normalised: _Normalised, tags: Sequence[_Tag]) -> _Sections:
    """The five sections in contract order, each an opening and a closing tag, until the first
    one that is missing, out of order, unclosed or (for ``consensus``) neither YES nor NO."""
    fields: dict[str, str] = {}
    spans: list[SectionSpan] = []
    error: ParseError | None = None
    consensus = False
    for k, name in enumerate(SECTION_NAMES):
        position = 2 * k  # each section read so far took an opening and a closing tag
        error = _section_error(name, tags, position)
        if error is not None:
            break
        opening, closing = tags[position], tags[position + 1]
        content = normalised.text[opening.end : closing.start]
        spans.append(normalised.raw_span(name, opening.end, closing.start))
        fields[name] = content.strip()
        if name == "consensus":
            value = _consensus_value(content)
            if value is None:
                error = ParseError("bad_consensus", f"<consensus> must be YES or NO, got {_shorten(content.strip())!r}")
                break
            consensus = value
    return _Sections(fields, tuple(spans), consensus, error)


def comparison_line(comparison: Comparison) -> str:
    """One comparison as the contract writes it: ``Agent 0 > Agent 2``."""
    return f"Agent {comparison.a} {comparison.op} Agent {comparison.b}"


def render_tagged_sections(sections: Sequence[tuple[str, str]]) -> RenderedResponse:
    """``<name>body</name>`` for each ``(name, body)`` in order, one per line, with the span of
    each body: how every tag-based contract writes a response."""
    text = ""
    spans: list[SectionSpan] = []
    for name, body in sections:
        text += ("\n" if text else "") + f"<{name}>"
        spans.append(SectionSpan(name, len(text), len(text) + len(body)))
        text += f"{body}</{name}>"
    return RenderedResponse(text, tuple(spans))


def render_xml(content: ResponseContent) -> RenderedResponse:
    """A response in the XML contract: the five sections in order, one per line."""
    lines = [comparison_line(c) for c in content.comparisons] + list(content.extra_comparison_lines)
    sections = (
        ("solution", content.solution),
        ("evaluation", content.evaluation or XML_CONTRACT.empty_marker),
        ("comparison", "\n".join(lines) or XML_CONTRACT.empty_marker),
        ("consensus", "YES" if content.consensus else "NO"),
        ("consensus_reason", content.consensus_reason),
    )
    return render_tagged_sections(sections)


XML_CONTRACT = OutputContract(
    name="xml",
    sections=SECTION_NAMES,
    section_labels={name: f"<{name}>" for name in SECTION_NAMES},
    empty_marker="N/A",
    stop_marker="</consensus_reason>",
    instructions=XML_INSTRUCTIONS,
    render=render_xml,
)
"""The XML output contract: five tags in order, ``N/A`` for nothing, ended by ``</consensus_reason>``."""


XML_BRIEF_CONTRACT = attrs.evolve(XML_CONTRACT, instructions=XML_BRIEF_INSTRUCTIONS)
"""The XML contract with its rules stated in one sentence."""


@attrs.frozen(kw_only=True)
class XmlParserOptions:
    """Options of the ``xml`` output parser."""

    instructions: Literal["full", "brief"] = "full"
    """How the system prompt states the contract: ``full`` (the tags and five rules) or ``brief``
    (one sentence, for small models that learn the format in a warm-start)."""


class XmlParser:
    """The ``xml`` output parser: :func:`parse_response` as an ``OutputParser``, with the XML contract."""

    def __init__(self, options: XmlParserOptions | None = None) -> None:
        self.options = options or XmlParserOptions()
        self.contract = XML_BRIEF_CONTRACT if self.options.instructions == "brief" else XML_CONTRACT

    def parse(self, text: str) -> ParsedResponse:
        """Parse one raw response; never raises."""
        return parse_response(text)
