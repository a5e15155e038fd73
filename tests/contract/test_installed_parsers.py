"""The parser contract suite over every output parser plugin installed in this environment.

tox's ``contract`` env installs debate-core, debate-rewards-extra and the example plugin
together; whichever of them (or any other installed distribution) registers a parser through
``debate_parsers`` is run against ``ParserContract``: it never raises, is deterministic,
keeps its spans inside the text, explains its errors, and accepts the canonical XML response.
"""

from __future__ import annotations

from debate_core.plugin import get_registry
from debate_core.testing import InstalledParserContract


def _installed_parsers() -> list[str]:
    return [spec.name for spec in get_registry().specs("parser")]


def test_the_builtin_parser_is_installed_and_every_parser_is_active() -> None:
    rows = get_registry().listing("parser")
    assert ("xml", "debate-core") in {(row.name, row.distribution) for row in rows}
    inactive = [(row.name, row.distribution, row.status, row.reason) for row in rows if row.status != "active"]
    assert not inactive, f"parser plugins not active: {inactive}"
    assert sorted({row.name for row in rows}) == _installed_parsers()


class TestInstalledParser(InstalledParserContract):
    """Every installed parser, through the class a third party's tox env uses too."""
