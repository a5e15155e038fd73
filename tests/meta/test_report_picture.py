"""The README's picture of the report cannot go stale silently (issue 55): its caption says what
``docs/images/report.json`` records about the picture (the run's RL iterations, its problems, the
day and commit it was made), as ``docs/report_picture.py`` writes both, and the picture is the
report's first screen."""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def picture_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("report_picture", ROOT / "docs" / "report_picture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_caption_says_what_the_picture_shows() -> None:
    script = picture_script()
    record = json.loads((ROOT / "docs" / "images" / "report.json").read_text(encoding="utf-8"))
    assert {"run", "iterations", "problems", "date", "commit"} <= record.keys()
    lines = [
        line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if "images/report.png" in line
    ]
    assert lines == [script.caption(record)], "run `python docs/report_picture.py RUN_DIR` to remake the picture"


def test_the_picture_is_the_first_screen() -> None:
    png = (ROOT / "docs" / "images" / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1400, 900)


def test_a_changed_record_needs_a_new_caption() -> None:
    script = picture_script()
    record = {"run": "main", "iterations": 60, "problems": 200, "date": "2026-12-07", "commit": "abc1234"}
    assert script.caption(record) != script.caption({**record, "iterations": 3})
    assert "60 RL iterations" in script.caption(record) and "200 held-out problems" in script.caption(record)
