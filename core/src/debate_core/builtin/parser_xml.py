"""Built-in output parser ``xml``: the five-tag contract (docs/protocol.md#the-output-contract)."""

from __future__ import annotations

from debate_core.components import ParserSpec
from debate_core.debate import XmlParser, XmlParserOptions
from debate_core.hookspecs import hookimpl


def _build_xml(options: XmlParserOptions) -> XmlParser:
    return XmlParser(options)


@hookimpl
def debate_parsers() -> list[ParserSpec]:
    return [
        ParserSpec(
            name="xml",
            description="<solution>, <evaluation>, <comparison>, <consensus>, <consensus_reason> in order",
            build=_build_xml,
            options=XmlParserOptions,
        )
    ]
