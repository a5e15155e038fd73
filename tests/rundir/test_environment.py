"""``RUN_DIR/environment.json``: where a run computed, an entry at its start and at each resume,
and the facts ``debate compare`` sets beside the config (docs/training.md#the-run-directory)."""

from __future__ import annotations

import json
import platform
from pathlib import Path

from debate_core.plugin import Registry
from debate_core.report.segments import flatten
from debate_core.rundir.environment import latest_facts, read_environment, record_environment
from tests.training.fault_runs import train


def test_a_run_records_where_it_computed_at_its_start_and_at_each_resume(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(registry, run, extra=("training.num_iterations=1",))
    train(registry, run, resume=True)
    entries = json.loads((run / "environment.json").read_text(encoding="utf-8"))
    assert [e["step"] for e in entries] == [0, 1]  # the start, then the resume from step 1's checkpoint
    for entry in entries:
        assert entry["python"] == platform.python_version() and entry["machine"] == platform.machine()
        assert entry["processor"] and int(entry["cpu_count"]) >= 1 and entry["started"]
        assert entry["backend"] == {}  # the scripted backend says nothing of itself


def test_entries_are_appended_and_a_damaged_file_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "environment.json"
    assert read_environment(path) == []
    record_environment(path, 0, {"cpu_capability": "AVX2"})
    record_environment(path, 40, {"cpu_capability": "AVX512"})
    entries = read_environment(path)
    assert [(e["step"], e["backend"]["cpu_capability"]) for e in entries] == [(0, "AVX2"), (40, "AVX512")]
    path.write_text("{not json", encoding="utf-8")
    assert read_environment(path) == []
    record_environment(path, 7, {})
    assert [e["step"] for e in read_environment(path)] == [7]


def test_compare_sees_the_latest_entry_without_when() -> None:
    entries = [
        {"step": 0, "started": "t0", "python": "3.11.7", "backend": {"cpu_capability": "AVX2"}},
        {"step": 9, "started": "t1", "python": "3.11.7", "backend": {"cpu_capability": "AVX512", "threads": "2"}},
    ]
    assert flatten({"environment": latest_facts(entries)}) == {
        "environment.python": "3.11.7",
        "environment.backend.cpu_capability": "AVX512",
        "environment.backend.threads": "2",
    }
    assert latest_facts([]) == {}
