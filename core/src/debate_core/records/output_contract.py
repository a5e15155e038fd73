"""The output parser's interface: raw model text to a structured response."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from debate_core.records.debate import ParsedResponse


@runtime_checkable
class OutputParser(Protocol):
    """Parses raw model text against the output contract. Never raises."""

    def parse(self, text: str) -> ParsedResponse: ...
