"""SkyRL's Tinker API (``python -m skyrl.tinker.api --backend jax``, JAX on CPU) on 127.0.0.1,
started and stopped by the tests (docs/own-gpus.md): the server the ``tinker`` backend's
end-to-end tests run against, through the real ``tinker`` SDK over HTTP.

The versions are pinned in tox.ini (env ``tinker-server``). Three workarounds make SkyRL 0.4.0
run in that env with SDK 0.38; each is its own piece of test infrastructure, saying what it
papers over and what would make it unnecessary:

1. :mod:`tests.tinker_server.standin_uv`: SkyRL starts its engine with ``uv run``;
2. ``tests/tinker_server/typing_patch/sitecustomize.py``: pydantic refuses ``typing.TypedDict``
   on Python 3.11;
3. :mod:`tests.tinker_server.sequence_ids`: SDK 0.38 needs ``sample_sequence_ids`` in the
   ``asample`` reply, which SkyRL 0.4.0 leaves out.

Bounded: the server must answer ``/api/v1/healthz`` within :data:`START_LIMIT_S`; stopping it
sends SIGTERM to its process group (the stand-in ``uv``, the API and the engine), then SIGKILL
after :data:`STOP_GRACE_S`, also when the tests themselves get a SIGTERM. Every ``debate``
command the tests run has its own time limit (``conftest.COMMAND_LIMIT_S``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs

from tests.tinker_server.sequence_ids import sequence_id_proxy

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[1]
START_LIMIT_S = 240.0
"""The API answers its health check about 25 s after launch on a 2-core machine; 240 s is a hang."""
STOP_GRACE_S = 20.0
MAX_LORA_ADAPTERS = 16
"""Adapters the engine holds at once (slot 0 is the base model's): every training client of the
session, the runs' and their resumptions', stays loaded until the server stops."""
MAX_LORA_RANK = 8
SAMPLE_BATCH = 4
"""Sequences the engine samples at once, the batch padded to it: one shape for JAX to compile per
length bucket, not one per batch size the debates happen to send (each compile costs 10-20 s here)."""


@attrs.frozen
class RunningServer:
    """A started server: the URL the SDK is pointed at (the proxy's), SkyRL's own, the log."""

    url: str
    skyrl_url: str
    log: Path
    base_model: str
    started_in_s: float


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_standin_uv(folder: Path) -> Path:
    """The stand-in ``uv`` (workaround 1) as an executable script in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "uv"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(REPOSITORY)!r})\n"
        "from tests.tinker_server.standin_uv import main\n"
        "raise SystemExit(main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def server_command(uv: Path, model_dir: Path, work: Path, port: int) -> list[str]:
    """The launch: ``uv run -m skyrl.tinker.api`` as SkyRL documents it, through the stand-in."""
    backend_config = {
        "max_lora_adapters": MAX_LORA_ADAPTERS,
        "max_lora_rank": MAX_LORA_RANK,
        "sample_max_num_sequences": SAMPLE_BATCH,
    }
    return [
        sys.executable,
        str(uv),
        "run",
        "-m",
        "skyrl.tinker.api",
        "--base-model",
        str(model_dir),
        "--backend",
        "jax",
        "--backend-config",
        json.dumps(backend_config),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--checkpoints-base",
        str(work / "checkpoints"),
        "--database-url",
        f"sqlite:///{work / 'tinker.db'}",
    ]


def server_environment(uv_folder: Path) -> dict[str, str]:
    """This environment, with the stand-in ``uv`` first on ``PATH`` and the ``TypedDict`` patch
    (workaround 2) on ``PYTHONPATH``; JAX on the CPU; nothing from a hub."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TINKER_", "DEBATE_"))}
    env.update(
        PATH=f"{uv_folder}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(HERE / "typing_patch"),
        JAX_PLATFORMS="cpu",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    return env


def wait_healthy(url: str, child: subprocess.Popen[bytes], log: Path) -> None:
    """Return once ``url`` answers its health check; fail with the log's tail when the server
    exits or :data:`START_LIMIT_S` passes."""
    deadline = time.monotonic() + START_LIMIT_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(f"SkyRL's Tinker API exited with {child.returncode} while starting:\n{tail(log)}")
        try:
            with urllib.request.urlopen(f"{url}/api/v1/healthz", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"SkyRL's Tinker API did not answer within {START_LIMIT_S:.0f} s:\n{tail(log)}")


def tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group, SIGKILL after :data:`STOP_GRACE_S`."""
    if child.poll() is not None:
        return
    try:
        os.killpg(child.pid, signal.SIGTERM)
        child.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)  # the engine too, if the API left it behind
    child.wait(timeout=STOP_GRACE_S)


@contextmanager
def skyrl_server(model_dir: Path, work: Path) -> Iterator[RunningServer]:
    """SkyRL's Tinker API serving ``model_dir`` on 127.0.0.1, behind the sequence-id proxy."""
    work.mkdir(parents=True, exist_ok=True)
    uv = write_standin_uv(work / "bin")
    port = free_port()
    log = work / "server.log"
    started = time.monotonic()
    with log.open("wb") as out:
        child = subprocess.Popen(
            server_command(uv, model_dir, work, port),
            env=server_environment(uv.parent),
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=work,
            start_new_session=True,
        )
    previous = signal.signal(signal.SIGTERM, _terminated) if _on_main_thread() else None
    try:
        skyrl_url = f"http://127.0.0.1:{port}"
        wait_healthy(skyrl_url, child, log)
        with sequence_id_proxy(skyrl_url) as url:
            yield RunningServer(url, skyrl_url, log, str(model_dir), time.monotonic() - started)
    finally:
        stop(child)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _on_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _terminated(signum: int, _frame: object) -> None:
    """A SIGTERM to the tests (a CI job stopped) still stops the server: the ``finally`` runs."""
    raise SystemExit(128 + signum)
