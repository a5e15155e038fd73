"""``debate-verifiers-check`` over written ``traces.jsonl`` files: the exit status ``vf-eval``
does not give (every episode failed: 1; ``--strict``: any failed), one line per run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_verifiers.check import main, read_outcome


def run_dir(tmp_path: Path, name: str, oks: list[bool]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    lines = []
    for ok in oks:
        errors = [] if ok else [{"type": "ProviderError", "message": "upstream 503"}]
        lines.append(json.dumps({"ok": ok, "errors": [], "traces": [{"errors": errors}]}))
    (folder / "traces.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_run_fails_the_check_when_every_episode_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = run_dir(tmp_path, "failed", [False, False])
    assert read_outcome(failed).failed == 2 and read_outcome(failed).first_error == "ProviderError: upstream 503"
    assert main([str(failed)]) == 1
    assert "0 of 2 episodes succeeded; first error: ProviderError: upstream 503" in capsys.readouterr().err


def test_strict_fails_on_any_failed_episode(tmp_path: Path) -> None:
    mixed = run_dir(tmp_path, "mixed", [True, False])
    good = run_dir(tmp_path, "good", [True, True])
    assert main([str(mixed)]) == 0 and main(["--strict", str(mixed)]) == 1
    assert main(["--strict", str(good), str(good / "traces.jsonl")]) == 0
    assert main([str(good), str(tmp_path / "nowhere")]) == 1  # a run with no traces fails the check
