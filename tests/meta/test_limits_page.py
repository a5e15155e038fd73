"""docs/limits.md lists every limit of ``debate_core.limits.LIMITS`` with its default and variable,
and a limit's variable raises or lowers it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from debate_core.errors import LimitExceeded
from debate_core.limits import LIMITS, check_limit, limit_value, read_limited_bytes

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text(encoding="utf-8")


def test_the_limits_table_is_the_limits_of_the_code() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d+)[^|]* \| `(DEBATE_[A-Z_]+)` \|", PAGE, flags=re.MULTILINE)
    assert {name: (int(default), env) for name, default, env in rows} == {
        limit.name: (limit.default, limit.env) for limit in LIMITS.values()
    }


def test_a_variable_moves_its_limit_and_the_message_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATE_MAX_AGENTS", "5")
    assert limit_value("agents") == 5
    check_limit("agents", 5, "x")
    with pytest.raises(LimitExceeded, match=r"^x: 6, more than the limit of 5 agents .*DEBATE_MAX_AGENTS=N"):
        check_limit("agents", 6, "x")


@pytest.mark.parametrize("value", ["0", "-3", "many", "1e3", "9" * 40])
def test_a_bad_variable_is_refused_in_one_line(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATE_MAX_TURNS", value)
    with pytest.raises(LimitExceeded, match=r"DEBATE_MAX_TURNS=.*positive whole number"):
        limit_value("turns")


def test_a_file_is_read_only_up_to_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 11)
    monkeypatch.setenv("DEBATE_MAX_INPUT_BYTES", "11")
    assert read_limited_bytes(path) == b"x" * 11
    monkeypatch.setenv("DEBATE_MAX_INPUT_BYTES", "10")
    with pytest.raises(LimitExceeded, match="longer than the limit of 10 bytes"):
        read_limited_bytes(path)
