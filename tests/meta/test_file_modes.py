"""Files and folders written atomically get the modes a plain ``open`` or ``mkdir`` would give
them under the process's umask, not the private 0600/0700 of their temporary names.

Each case is a fresh interpreter started under the umask, so ``debate_core.files`` reads the
real one when it is imported, as it does in a run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a fresh interpreter per umask

PROBE = """
import json, os, stat, sys
from pathlib import Path
root = Path(sys.argv[1])
from debate_core.files import atomic_directory, atomic_write_text
plain = root / "plain.txt"
plain.write_text("x")
(root / "plain_dir").mkdir()
atomic_write_text(root / "atomic.txt", "x")
with atomic_directory(root / "atomic_dir") as staging:
    (staging / "inside.txt").write_text("x")
    # issue 44: save_pretrained's model.safetensors came out 0600 beside 0644 files
    os.close(os.open(staging / "private.bin", os.O_WRONLY | os.O_CREAT, 0o600))
names = ["plain.txt", "plain_dir", "atomic.txt", "atomic_dir", "atomic_dir/inside.txt", "atomic_dir/private.bin"]
print(json.dumps({n: stat.S_IMODE((root / n).stat().st_mode) for n in names}))
"""


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_atomic_writes_follow_the_umask(umask: int, tmp_path: Path) -> None:
    starter = f"import os, sys; os.umask({umask}); exec(sys.stdin.read())"
    done = subprocess.run(
        [sys.executable, "-c", starter, str(tmp_path)],
        input=textwrap.dedent(PROBE),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    mode = json.loads(done.stdout)
    assert mode["atomic.txt"] == mode["plain.txt"] == 0o666 & ~umask
    assert mode["atomic_dir"] == mode["plain_dir"] == 0o777 & ~umask
    assert mode["atomic_dir/private.bin"] == mode["atomic_dir/inside.txt"] == mode["plain.txt"]
