"""A run directory named where a file is (docs/limits.md#what-a-bad-input-gets): every command that
takes a run directory says, in one line, that the path is a file, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_core.cli import main


def commands(run_file: Path, afile: Path) -> dict[str, list[str]]:
    return {
        "train --run-dir FILE": ["train", str(run_file), "--run-dir", str(afile)],
        "train --run-dir FILE/sub": ["train", str(run_file), "--run-dir", str(afile / "sub")],
        "train --resume FILE": ["train", "--resume", str(afile)],
        "report FILE": ["report", str(afile)],
        "compare FILE": ["compare", str(afile)],
    }


@pytest.mark.parametrize("name", sorted(commands(Path("r"), Path("f"))))
def test_a_run_directory_that_is_a_file_is_named_as_one(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DEBATE_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    afile = tmp_path / "afile"
    afile.write_text("not a run\n", encoding="utf-8")
    assert main(commands(run_file, afile)[name]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("debate: error: ") and f"{afile} is a file, not a" in lines[0].replace(":", ""), lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "run.toml"]  # nothing written


def test_the_default_run_directory_on_a_file_is_named_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "taken").write_text("a file\n", encoding="utf-8")
    run_file = tmp_path / "run.toml"
    run_file.write_text('[run]\nname = "taken"\n', encoding="utf-8")
    assert main(["train", str(run_file)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "debate: error: runs/taken: is a file, not a directory; the run needs a directory there: choose a --run-dir"
    ]


def test_a_run_directory_a_live_process_writes_is_not_offered_for_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: `debate train --run-dir RUN` on a run another process is writing suggested
    `--resume RUN`, which that process's lock then refused; the line names the holder instead."""
    import os

    from debate_core.rundir.lock import run_directory_lock

    run_file, run = tmp_path / "run.toml", tmp_path / "run"
    run_file.write_text("", encoding="utf-8")
    run.mkdir()
    (run / "config.toml").write_text("", encoding="utf-8")
    with run_directory_lock(run, print):
        assert main(["train", str(run_file), "--run-dir", str(run)]) == 1
        err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run} is being written by pid {os.getpid()} on " in err
    assert "--resume" not in err and "choose another --run-dir" in err
    assert main(["train", str(run_file), "--run-dir", str(run)]) == 1  # released: a run to resume
    assert f"continue it with `debate train --resume {run}`" in capsys.readouterr().err
