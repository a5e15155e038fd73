"""Section names of sampled tokens, from parser spans and incremental decoding."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from debate_core.debate.token_sections import token_char_ranges, token_sections
from debate_core.debate.xml_parser import parse_response
from debate_core.records import SectionSpan
from debate_core.testing.tokenizer import ByteTokenizer


class ChunkTokenizer:
    """Tokens are arbitrary chunks of text (a vocabulary built on the fly), like BPE merges."""

    def __init__(self) -> None:
        self.vocab: list[str] = []

    def tokens(self, chunks: Sequence[str]) -> list[int]:
        ids = []
        for chunk in chunks:
            if chunk not in self.vocab:
                self.vocab.append(chunk)
            ids.append(self.vocab.index(chunk))
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.vocab[i] for i in ids)


class SentencePieceLike:
    """Decoding drops the leading space of the first token, as sentencepiece tokenizers do."""

    def __init__(self, pieces: Sequence[str]) -> None:
        self.pieces = list(pieces)

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.pieces[i] for i in ids).removeprefix(" ")


def test_tags_are_no_section_and_contents_are() -> None:
    tok = ChunkTokenizer()
    chunks = [" <solution>", "4", "2", "</solution>", "<evaluation>", "fine", "</evaluation>"]
    ids = tok.tokens(chunks)
    spans = (SectionSpan("solution", 11, 13), SectionSpan("evaluation", 36, 40))
    assert token_sections(tok.decode, ids, spans) == (None, "solution", "solution", None, None, "evaluation", None)


def test_a_token_straddling_a_boundary_belongs_to_the_section_it_overlaps_most() -> None:
    tok = ChunkTokenizer()
    # "42</" carries the solution's content: it belongs to the solution, tag characters do not compete
    ids = tok.tokens(["<solution>", "42</", "solution>"])
    assert token_sections(tok.decode, ids, (SectionSpan("solution", 10, 12),)) == (None, "solution", None)
    # "A</solution><evaluation>BCD": one character of solution, three of evaluation
    ids = tok.tokens(["<solution>", "A</solution><evaluation>BCD", "</evaluation>"])
    spans = (SectionSpan("solution", 10, 11), SectionSpan("evaluation", 34, 37))
    assert token_sections(tok.decode, ids, spans) == (None, "evaluation", None)


def test_multibyte_characters_split_over_byte_tokens_share_their_section() -> None:
    tok = ByteTokenizer()
    text = " <solution>é😀</solution>"
    ids = tok.encode(text)
    response = parse_response(text)
    sections = token_sections(tok.decode, ids, response.spans)
    content = tok.encode("é😀")
    start = len(tok.encode(" <solution>"))
    assert sections[start : start + len(content)] == ("solution",) * len(content)
    assert sections[:start] == (None,) * start


def test_stop_token_that_decodes_to_nothing_has_no_section() -> None:
    tok = ByteTokenizer()
    ids = [*tok.encode("<consensus_reason>x</consensus_reason>"), tok.eos_token_id]

    def decode(t: Sequence[int]) -> str:
        return tok.decode(t, skip_special_tokens=True)

    sections = token_sections(decode, ids, (SectionSpan("consensus_reason", 18, 19),))
    assert sections[-1] is None and sections[18] == "consensus_reason"


def test_leading_space_rules_are_handled_by_the_decoding_window() -> None:
    tok = SentencePieceLike([" <solution>", " 4", "2", "</solution>"])
    ids = [0, 1, 2, 3]
    text = tok.decode(ids)
    assert text == "<solution> 42</solution>"
    assert token_char_ranges(tok.decode, ids) == [(0, 10), (10, 12), (12, 13), (13, 24)]
    assert token_sections(tok.decode, ids, (SectionSpan("solution", 10, 13),)) == (None, "solution", "solution", None)


@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=30), st.data())
def test_ranges_tile_the_decoded_text(chunks: list[str], data: st.DataObject) -> None:
    tok = ChunkTokenizer()
    ids = tok.tokens(chunks)
    ranges = token_char_ranges(tok.decode, ids)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(tok.decode(ids))
    for (s1, e1), (s2, _) in itertools.pairwise(ranges):
        assert s1 <= e1 <= s2
    # a token entirely inside a span gets that span's name
    text = tok.decode(ids)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    sections = token_sections(tok.decode, ids, (SectionSpan("solution", start, end),))
    for (s, e), section in zip(ranges, sections, strict=True):
        if start <= s < e <= end:
            assert section == "solution"
        if e <= start or s >= end:
            assert section is None
