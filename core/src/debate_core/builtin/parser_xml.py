"""Built-in output parsers ``xml`` (the five-tag contract, docs/protocol.md#the-output-contract) and
``three_sections`` (the v2 write-up's three sections, read leniently: docs/protocol.md#the-three-section-contract)."""

from __future__ import annotations

from debate_core.debate import ThreeSectionParser, XmlParser, XmlParserOptions
from debate_core.plugin import ParserSpec, hookimpl


def _build_xml(options: XmlParserOptions) -> XmlParser:
    return XmlParser(options)


def _build_three_sections(_: None) -> ThreeSectionParser:
    return ThreeSectionParser()


@hookimpl
def debate_parsers() -> list[ParserSpec]:
    return [
        ParserSpec(
            name="xml",
            description="<solution>, <evaluation>, <comparison>, <consensus>, <consensus_reason> in order",
            build=_build_xml,
            options=XmlParserOptions,
        ),
        ParserSpec(
            name="three_sections",
            description="<solution>, <evaluation>, <comparison>, read leniently: format never fails a turn",
            build=_build_three_sections,
        ),
    ]
