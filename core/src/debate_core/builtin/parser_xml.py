"""Built-in output parser ``xml``: the five-tag contract (docs/protocol.md#the-output-contract)."""

from __future__ import annotations

from debate_core.components import ParserSpec
from debate_core.debate import XmlParser
from debate_core.hookspecs import hookimpl


def _build_xml(_: None) -> XmlParser:
    return XmlParser()


@hookimpl
def debate_parsers() -> list[ParserSpec]:
    return [
        ParserSpec(
            name="xml",
            description="<solution>, <evaluation>, <comparison>, <consensus>, <consensus_reason> in order",
            build=_build_xml,
        )
    ]
