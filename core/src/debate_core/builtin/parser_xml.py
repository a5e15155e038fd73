"""Built-in output parser ``xml``: the five-tag contract of seed 000."""

from __future__ import annotations

from debate_core.components import OutputParserSpec
from debate_core.debate.xml_parser import XmlParser
from debate_core.hookspecs import hookimpl


def _build_xml(_: None) -> XmlParser:
    return XmlParser()


@hookimpl
def debate_output_parsers() -> list[OutputParserSpec]:
    return [
        OutputParserSpec(
            name="xml",
            description="<solution>, <evaluation>, <comparison>, <consensus>, <consensus_reason> in order (seed 000)",
            build=_build_xml,
        )
    ]
