"""Where a run computed: ``RUN_DIR/environment.json``, one entry each time the run starts or
resumes (docs/training.md#the-run-directory).

Two runs of the same run file on the same code can still differ: floating-point sums round by
the instruction set and thread count of the machine, and over hundreds of updates that becomes
another model (docs/local-backend.md#what-is-reproducible). Each entry says the step it started
from, the machine (Python, operating system, processor, cores) and what the backend tells of
itself (``backends.contract.SupportsEnvironment``: torch's version and CPU instruction set for
the local backend, the SDK's version for Tinker). ``debate compare`` shows the facts that differ
between runs beside their config.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from debate_core.errors import DebateError
from debate_core.files import atomic_write_json
from debate_core.limits import loads_json, read_limited_text
from debate_core.records.json_values import JsonMapping, JsonObject

ENVIRONMENT_NAME = "environment.json"
"""The file under the run directory."""

NOT_COMPARED = frozenset({"step", "started"})
"""Entry keys that say when, not where: never a difference between runs."""


def processor_name() -> str:
    """The processor's model name (``/proc/cpuinfo`` on Linux), else what ``platform`` says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine_facts() -> dict[str, str]:
    """This machine: Python, operating system, architecture, processor, cores."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": processor_name(),
        "cpu_count": str(os.cpu_count() or 0),
    }


def read_environment(path: Path) -> list[JsonObject]:
    """The entries of an ``environment.json``, oldest first; none when it is missing or unreadable
    (a run made before the file existed)."""
    try:
        entries = loads_json(read_limited_text(path, "environment file"))
    except (DebateError, ValueError):
        return []
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def record_environment(path: Path, step: int, backend: Mapping[str, str]) -> None:
    """Add an entry for a start (``step`` 0) or a resume from ``step``: this machine and ``backend``'s
    facts, with the time."""
    entry: JsonObject = {
        "step": step,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **machine_facts(),
        "backend": dict(backend),
    }
    atomic_write_json(path, [*read_environment(path), entry])


def entry_facts(entry: JsonMapping) -> JsonObject:
    """Where one start or resume computed: its entry without the time and step."""
    return {k: v for k, v in entry.items() if k not in NOT_COMPARED}


def latest_facts(entries: Sequence[JsonMapping]) -> JsonObject:
    """Where the run last computed (``{}`` without an entry): what ``debate compare`` sets beside
    the config."""
    return entry_facts(entries[-1]) if entries else {}
