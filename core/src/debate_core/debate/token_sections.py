"""Which section of the output contract each sampled token belongs to.

The parser reports character spans in the decoded text; this module finds the characters
each token contributes by incremental decoding (a window of the previous tokens keeps
tokenizers with leading-space rules and multi-byte characters split over tokens right),
then gives each token the section that holds most of its characters (a token such as
``42</`` that carries content and part of a tag belongs to the content's section). Tokens
with no character in any section (tags, text outside the sections, a stop token that
decodes to nothing) belong to no section.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from debate_core.records import SectionSpan

Decode = Callable[[Sequence[int]], str]

_REPLACEMENT = "\ufffd"


def token_char_ranges(decode: Decode, tokens: Sequence[int]) -> list[tuple[int, int]]:
    """The character range ``[start, end)`` of ``decode(tokens)`` that each token produced.

    Tokens that together make one character (a multi-byte character split over tokens)
    share its range; tokens that produce nothing get an empty range.
    """
    ranges: list[tuple[int, int]] = []
    produced = 0
    prefix_offset = read_offset = pending_from = 0
    prefix_text = ""
    for k in range(len(tokens)):
        window_text = decode(tokens[prefix_offset : k + 1])
        if (
            len(window_text) > len(prefix_text)
            and window_text.startswith(prefix_text)
            and not window_text.endswith(_REPLACEMENT)
        ):
            start, produced = produced, produced + len(window_text) - len(prefix_text)
            ranges.extend([(start, produced)] * (k + 1 - pending_from))
            pending_from = k + 1
            prefix_offset, read_offset = read_offset, k + 1
            prefix_text = decode(tokens[prefix_offset:read_offset])
    if pending_from < len(tokens):
        window_text = decode(tokens[prefix_offset:])
        extra = max(0, len(window_text) - len(prefix_text)) if window_text.startswith(prefix_text) else 0
        start, produced = produced, produced + extra
        ranges.extend([(start, produced)] * (len(tokens) - pending_from))
    if produced != len(decode(tokens)):
        return _ranges_by_prefix_decoding(decode, tokens)
    return ranges


def _ranges_by_prefix_decoding(decode: Decode, tokens: Sequence[int]) -> list[tuple[int, int]]:
    """The slow, always-consistent fallback: decode every prefix (quadratic)."""
    ranges: list[tuple[int, int]] = []
    previous = 0
    for k in range(len(tokens)):
        length = max(previous, len(decode(tokens[: k + 1])))
        ranges.append((previous, length))
        previous = length
    return ranges


def token_sections(decode: Decode, tokens: Sequence[int], spans: Sequence[SectionSpan]) -> tuple[str | None, ...]:
    """The section name of each token (``None`` outside every section).

    Args:
        decode: the renderer's decode; ``spans`` must be offsets into ``decode(tokens)``.
        tokens: the sampled tokens of one turn.
        spans: the parser's section spans.
    """
    ordered = sorted((s for s in spans if s.end > s.start), key=lambda s: s.start)
    sections: list[str | None] = []
    for start, end in token_char_ranges(decode, tokens):
        best: str | None = None
        best_overlap = 0
        for span in ordered:
            if span.start >= end:
                break
            overlap = min(end, span.end) - max(start, span.start)
            if overlap > best_overlap:
                best, best_overlap = span.name, overlap
        sections.append(best)
    return tuple(sections)
