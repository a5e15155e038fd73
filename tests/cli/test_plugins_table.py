"""``debate plugins`` shows each component's one-line description (issue 55)."""

from __future__ import annotations

import pytest

from debate_core.cli import main
from debate_core.plugin import get_registry


def test_each_row_ends_with_the_components_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "--kind", "reward"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["KIND", "NAME", "DISTRIBUTION", "VERSION", "STATUS", "DESCRIPTION"]
    rows = {line.split()[1]: line for line in lines[1:]}
    for entry in get_registry().listing("reward"):
        if entry.status == "active":
            assert rows[entry.name].endswith("  " + " ".join(entry.description.split())), rows[entry.name]
    assert rows["win_rate"].endswith("leave-one-out share of peer votes won, ties 1/2; in [0, 1]")
