"""The output contract: the format every response must follow, supplied by the output parser.

An output parser plugin reads responses (``parse``) and owns their format (``contract``): the
sections of a response, how prompts name them, the instructions agents are given, the marker
that ends a response, and how a response's content is written back as text. Everything that
writes or explains the format (system prompts, turn instructions, stop conditions, the
warm-start's reference responses, test debates) asks the parser's contract, so a parser
plugin with another format changes all of them at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records.debate import Comparison, ParsedResponse, SectionSpan


@attrs.frozen(kw_only=True)
class ResponseContent:
    """What one response says, before a contract writes it out (the reverse of parsing).

    Empty ``evaluation`` and comparison sections are written as the contract's empty marker
    (``N/A``). ``extra_comparison_lines`` are written after the comparisons as they are (test
    debates use them for lines that are not comparisons).
    """

    solution: str
    evaluation: str = ""
    comparisons: tuple[Comparison, ...] = ()
    extra_comparison_lines: tuple[str, ...] = ()
    consensus: bool = False
    consensus_reason: str = ""


@attrs.frozen
class RenderedResponse:
    """A response written in a contract's format, with the span of each section's content."""

    text: str
    spans: tuple[SectionSpan, ...]


@attrs.frozen(kw_only=True)
class OutputContract:
    """The format of a response, as one record that everything writing or explaining it uses."""

    name: str
    """The format's name (``xml``)."""
    sections: tuple[str, ...]
    """The sections of a response in the order they must appear; spans and reward streams use these names."""
    section_labels: Mapping[str, str]
    """How instructions refer to each section (``<solution>``)."""
    empty_marker: str
    """What a section with nothing to say holds (``N/A``)."""
    stop_marker: str
    """The text that ends every complete response; string stop conditions end with it."""
    instructions: str
    """The format's rules as the system prompt states them; ``{agent_id}`` is the agent's id."""
    render: Callable[[ResponseContent], RenderedResponse]
    """Writes a response's content in this format (the parser reads it back to the same content)."""

    def label(self, section: str) -> str:
        """How instructions refer to ``section``."""
        return self.section_labels[section]

    def instructions_for(self, agent_id: int) -> str:
        """The format's rules, addressed to one agent."""
        return self.instructions.format(agent_id=agent_id)


@runtime_checkable
class OutputParser(Protocol):
    """Parses raw model text against its output contract. Never raises."""

    @property
    def contract(self) -> OutputContract: ...

    def parse(self, text: str) -> ParsedResponse: ...
