"""Model text and others' files on a terminal (docs/limits.md#text-on-a-terminal): control
characters and escape sequences are shown as escapes, never obeyed; newlines, tabs and ordinary
unicode stay as they are."""

from __future__ import annotations

import io
import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.cli import main
from debate_core.terminal import visible
from debate_core.training.progress import Progress

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m\rover\x00\x7f\x9b6n\u202eevil"
"""A window title, a cleared screen, a colour, a carriage return, NUL, DEL, a C1 CSI, a
right-to-left override."""
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\x1b[0m\\x0dover\\x00\\x7f\\x9b6n\\u202eevil"
FRIENDLY = "caf\u00e9 \u2713 \u6570\u5b66 \U0001f600\tline one\nline two"


def obeyed(text: str) -> list[str]:
    """Characters a terminal would act on: controls other than newline and tab, and bidi controls."""
    return [c for c in text if (unicodedata.category(c) == "Cc" and c not in "\n\t") or 0x202A <= ord(c) <= 0x202E]


def test_visible_shows_every_control_and_keeps_the_rest() -> None:
    assert visible(HOSTILE) == SHOWN
    assert visible(FRIENDLY) == FRIENDLY


@given(st.text())
def test_visible_leaves_nothing_a_terminal_would_obey(text: str) -> None:
    shown = visible(text)
    assert obeyed(shown) == []
    if not obeyed(text) and not any(0x2066 <= ord(c) <= 0x2069 for c in text):
        assert shown == text  # text without controls is printed as it is


def transcript(tmp_path: Path) -> Path:
    turn = {"round": 1, "agent": 0, "persona": f"Agent{HOSTILE}", "text": f"<solution>{HOSTILE}\n{FRIENDLY}</solution>"}
    data = {"debate_id": f"d{HOSTILE}", "question": f"What is 2+2?{HOSTILE}", "num_agents": 2, "turns": [turn]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_show_prints_model_text_visible(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(transcript(tmp_path)), "--grader", "none"]) == 0
    out = capsys.readouterr().out
    assert obeyed(out) == []
    assert SHOWN in out and "Question: What is 2+2?" + SHOWN in out
    assert "caf\u00e9 \u2713 \u6570\u5b66 \U0001f600" in out and "line one\n" in out


def test_an_error_line_quoting_a_file_is_visible(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(transcript(tmp_path)), "--debate", f"x{HOSTILE}"]) == 1
    err = capsys.readouterr().err
    assert obeyed(err) == [] and err.count("\n") == 1
    assert f"--debate x{SHOWN}: no such debate" in err and f"(ids: d{SHOWN})" in err


@pytest.mark.parametrize("mode", ["bar", "lines", "off"])
def test_progress_lines_are_visible(mode: str) -> None:
    stream = io.StringIO()
    progress = Progress(mode, stream=stream, line_interval_s=0.0)  # type: ignore[arg-type]
    progress.message(f"checkpoint step 1 in 0.1s: {HOSTILE}")
    progress.start(f"eval {HOSTILE}", 2)
    progress.debate_done(3)
    progress.finish({"reward": 1.0})
    written = stream.getvalue()
    assert SHOWN in written
    own = written.replace("\r\x1b[2K", "")  # the bar's own redraw is the one sequence written raw
    assert obeyed(own) == [], own
