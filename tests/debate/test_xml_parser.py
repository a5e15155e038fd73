"""The ``xml`` parser against the output contract of docs/protocol.md#the-output-contract."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.builtin.parser_xml import debate_parsers
from debate_core.debate.xml_parser import SECTION_NAMES, XmlParser, parse_comparisons, parse_response
from debate_core.records import Comparison, ParsedResponse
from debate_core.testing import ParserContract

CANONICAL = (
    "<solution>x = 42</solution>\n"
    "<evaluation>Agent 1 slipped.</evaluation>\n"
    "<comparison>Agent 0 > Agent 1\nAgent 2 = Agent 0</comparison>\n"
    "<consensus>NO</consensus>\n"
    "<consensus_reason>Agent 1 disagrees.</consensus_reason>"
)


def span_texts(text: str, response: ParsedResponse) -> dict[str, str]:
    return {s.name: text[s.start : s.end] for s in response.spans}


def test_canonical_response_gives_every_field_and_span() -> None:
    r = parse_response(CANONICAL)
    assert r.ok
    assert (r.solution, r.evaluation, r.consensus, r.consensus_reason) == (
        "x = 42",
        "Agent 1 slipped.",
        False,
        "Agent 1 disagrees.",
    )
    assert r.comparison == "Agent 0 > Agent 1\nAgent 2 = Agent 0"
    assert r.comparisons == (Comparison(0, ">", 1), Comparison(2, "=", 0))
    assert [s.name for s in r.spans] == list(SECTION_NAMES)
    assert span_texts(CANONICAL, r) == {
        "solution": "x = 42",
        "evaluation": "Agent 1 slipped.",
        "comparison": "Agent 0 > Agent 1\nAgent 2 = Agent 0",
        "consensus": "NO",
        "consensus_reason": "Agent 1 disagrees.",
    }


def test_consensus_yes_in_any_case_and_with_decoration() -> None:
    for value in ("YES", "yes", " Yes. ", "**YES**"):
        assert parse_response(CANONICAL.replace(">NO<", f">{value}<")).consensus is True
    assert parse_response(CANONICAL.replace(">NO<", ">no<")).consensus is False


def test_markdown_fence_preamble_and_trailing_text_are_ignored() -> None:
    text = f"Sure, here you go:\n```xml\n{CANONICAL}\n```\nHope this helps."
    r = parse_response(text)
    assert r.ok and r.solution == "x = 42"
    assert span_texts(text, r)["solution"] == "x = 42"


def test_code_fence_inside_a_section_is_content() -> None:
    text = CANONICAL.replace("x = 42", "```python\nprint(42)\n```")
    assert parse_response(text).solution == "```python\nprint(42)\n```"


def test_think_wrappers_are_removed_keeping_their_content_and_spans_stay_raw() -> None:
    text = "<THINK>plan</Think>" + CANONICAL.replace("x = 42", "<think>\n</think>x = 42<  think >!</think >")
    r = parse_response(text)
    assert r.ok
    assert r.solution == "x = 42!"
    assert span_texts(text, r)["solution"] == "\n</think>x = 42<  think >!"
    values = {**{n: getattr(r, n) for n in SECTION_NAMES if n != "consensus"}, "consensus": "NO"}
    for span in r.spans:
        inner = re.sub(r"<\s*/?\s*think\s*>", "", text[span.start : span.end], flags=re.IGNORECASE)
        assert inner.strip() == values[span.name]


def test_tags_tolerate_spacing_and_case() -> None:
    text = CANONICAL.replace("<solution>", "< Solution >").replace("</solution>", "</ SOLUTION>")
    assert parse_response(text).solution == "x = 42"


@pytest.mark.parametrize("block", ["N/A", "n/a", "", "  \n ", "none", "NA."])
def test_na_or_empty_comparison_is_valid(block: str) -> None:
    r = parse_response(CANONICAL.replace("Agent 0 > Agent 1\nAgent 2 = Agent 0", block))
    assert r.ok
    assert r.comparisons == () and r.invalid_comparison_lines == 0


def test_comparison_lines_less_than_is_reversed_and_spacing_case_are_free() -> None:
    block = "agent 1<Agent 2\n- AGENT 3   >   agent 0\n2. Agent 4=Agent 1.\nAgent 0 >> Agent 1\nI like Agent 2\nN/A"
    comparisons, invalid = parse_comparisons(block)
    assert comparisons == (Comparison(2, ">", 1), Comparison(3, ">", 0), Comparison(4, "=", 1))
    assert invalid == 2


def test_empty_text_is_an_empty_error() -> None:
    for text in ("", "   \n"):
        r = parse_response(text)
        assert r.error is not None and r.error.code == "empty"


def test_text_without_tags_says_so() -> None:
    r = parse_response("The answer is 42.")
    assert r.error is not None and r.error.code == "missing_tag" and "<solution>" in r.error.message


def test_missing_section_is_named_and_earlier_fields_are_kept() -> None:
    text = CANONICAL.replace("<comparison>Agent 0 > Agent 1\nAgent 2 = Agent 0</comparison>\n", "")
    r = parse_response(text)
    assert r.error is not None and r.error.code == "missing_tag"
    assert "<comparison>" in r.error.message
    assert r.solution == "x = 42" and r.evaluation == "Agent 1 slipped."
    assert [s.name for s in r.spans] == ["solution", "evaluation"]


def test_out_of_order_sections_are_reported() -> None:
    solution, rest = CANONICAL.split("\n", 1)
    r = parse_response(rest + "\n" + solution)
    assert r.error is not None and r.error.code == "out_of_order"
    assert "<evaluation>" in r.error.message and "order" in r.error.message


def test_unclosed_and_nested_tags_are_reported() -> None:
    r = parse_response(CANONICAL[: CANONICAL.index("</evaluation>")])
    assert r.error is not None and r.error.code == "unclosed_tag" and "<evaluation>" in r.error.message
    r = parse_response("<solution><solution>1</solution></solution>" + CANONICAL)
    assert r.error is not None and r.error.code == "unclosed_tag"


def test_closing_tag_without_opening_is_missing() -> None:
    r = parse_response(CANONICAL.replace("<consensus>NO", "NO"))
    assert r.error is not None and r.error.code == "missing_tag" and "</consensus>" in r.error.message


def test_bad_consensus_value() -> None:
    r = parse_response(CANONICAL.replace(">NO<", ">MAYBE<"))
    assert r.error is not None and r.error.code == "bad_consensus" and "MAYBE" in r.error.message


def test_plugin_registers_xml_and_three_sections() -> None:
    xml, three = debate_parsers()
    assert (xml.name, three.name) == ("xml", "three_sections")
    parser = xml.make()
    assert isinstance(parser, XmlParser) and parser.parse(CANONICAL).ok
    assert three.make().parse("no tags").ok


# ------------------------------------------------------------------ properties

FRAGMENTS = st.sampled_from(
    [
        *(f"<{n}>" for n in SECTION_NAMES),
        *(f"</{n}>" for n in SECTION_NAMES),
        "<think>",
        "</THINK>",
        "< think >",
        "```xml\n",
        "```",
        "Agent 0 > Agent 1\n",
        "Agent 99999999999999999999999 < agent 2\n",
        "YES",
        "N/A",
        "\n",
        "<",
        ">",
        "\x00",
        "\ud800",
        "\U0001f600",
    ]
)
SOUP = st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), max_size=40).map("".join)


@given(st.one_of(st.text(), SOUP, st.binary().map(lambda b: b.decode("latin-1"))))
def test_parser_never_raises_and_spans_are_ordered_raw_offsets(text: str) -> None:
    r = XmlParser().parse(text)
    assert isinstance(r, ParsedResponse)
    end = 0
    for span, name in zip(r.spans, SECTION_NAMES, strict=False):
        assert span.name == name
        assert end <= span.start <= span.end <= len(text)
        end = span.end
    if r.error is not None:
        assert r.error.code in {"empty", "missing_tag", "out_of_order", "unclosed_tag", "bad_consensus"}
        assert r.error.message
    else:
        assert len(r.spans) == 5


def test_parser_handles_a_huge_input() -> None:
    text = CANONICAL.replace("slipped.", "slipped. " * 200_000) + "<" * 100_000
    assert parse_response(text).ok


SAFE_TEXT = st.text(st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=30)


@given(
    solution=SAFE_TEXT,
    evaluation=SAFE_TEXT,
    pairs=st.lists(st.tuples(st.integers(0, 20), st.sampled_from([">", "=", "<"]), st.integers(0, 20)), max_size=4),
    consensus=st.booleans(),
    reason=SAFE_TEXT,
    preamble=SAFE_TEXT,
)
def test_any_well_formed_response_round_trips(
    solution: str, evaluation: str, pairs: list[tuple[int, str, int]], consensus: bool, reason: str, preamble: str
) -> None:
    lines = [f"Agent {a} {op} Agent {b}" for a, op, b in pairs]
    text = (
        f"{preamble}<solution>{solution}</solution><evaluation>{evaluation}</evaluation>"
        f"<comparison>{chr(10).join(lines)}</comparison><consensus>{'YES' if consensus else 'NO'}</consensus>"
        f"<consensus_reason>{reason}</consensus_reason>"
    )
    r = parse_response(text)
    assert r.ok, r.error
    assert r.solution == solution.strip() and r.evaluation == evaluation.strip()
    assert r.consensus is consensus and r.consensus_reason == reason.strip()
    assert r.comparisons == tuple(Comparison(b, ">", a) if op == "<" else Comparison(a, op, b) for a, op, b in pairs)  # type: ignore[arg-type]
    assert span_texts(text, r)["solution"] == solution


class TestXmlParserContract(ParserContract):
    """The contract every parser plugin must meet, on the installed ``xml`` parser."""

    parser_name = "xml"
    valid_examples = (CANONICAL, f"```xml\n{CANONICAL}\n```", f"<think></think>\n{CANONICAL}")
