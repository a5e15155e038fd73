"""Files and folders written atomically get the modes a plain ``open`` or ``mkdir`` would give
them under the process's umask, not the private 0600/0700 of their temporary names."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from debate_core.files import atomic_directory, atomic_write_text


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_atomic_writes_follow_the_umask(umask: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import debate_core.files as files

    monkeypatch.setattr(files, "FILE_MODE", 0o666 & ~umask)
    monkeypatch.setattr(files, "FOLDER_MODE", 0o777 & ~umask)
    old = os.umask(umask)
    try:
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
        (tmp_path / "plain_dir").mkdir()
        atomic_write_text(tmp_path / "atomic.txt", "x")
        with atomic_directory(tmp_path / "atomic_dir") as staging:
            (staging / "inside.txt").write_text("x")
            # issue 44: save_pretrained's model.safetensors came out 0600 beside 0644 files
            os.close(os.open(staging / "private.bin", os.O_WRONLY | os.O_CREAT, 0o600))
    finally:
        os.umask(old)

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(tmp_path / "atomic.txt") == mode(plain) == 0o666 & ~umask
    assert mode(tmp_path / "atomic_dir") == mode(tmp_path / "plain_dir") == 0o777 & ~umask
    assert mode(tmp_path / "atomic_dir" / "private.bin") == mode(tmp_path / "atomic_dir" / "inside.txt") == mode(plain)
