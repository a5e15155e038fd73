"""A backend that is down (docs/training.md, "A backend that is down"): with the Tinker SDK
pointed at a server that accepts and never answers, and at one that answers 500 to everything,
every command says what it waits for, gives up after ``training.backend_timeout_s`` with one line
and a non-zero status, and Ctrl-C or SIGTERM stops it at once; pointed at a port where nothing
listens, or at a host name that does not resolve, it fails at once with one line naming the
address."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

TIMEOUT_S = 2
WAIT_MARGIN_S = 10
"""How much longer than ``TIMEOUT_S`` a give-up may say it waited: the message states the seconds
measured, which load stretches."""
CTRL_C_LIMIT_S = 5
"""From Ctrl-C to the command's last line: the SIGINT is taken at once, not at the event loop's next
timer (the wait's announcement, 10 s after the request); only ``HANG_S`` bounds the exit after it."""
HANG_S = 300
"""A command that has not exited by then hangs: starting (importing torch) and giving up take a
fraction of it even on a loaded machine."""


@contextmanager
def nothing_listening() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


@contextmanager
def silent_server(asked: threading.Event | None = None) -> Iterator[str]:
    """Accepts connections and never answers; sets ``asked`` at the first connection (the command
    has started and is waiting on the service)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            held.append(connection)
            if asked is not None:
                asked.set()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


class _Failing(BaseHTTPRequestHandler):
    def _fail(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        body = b'{"error": "internal"}'
        self.send_response(500)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _fail

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def failing_server() -> Iterator[str]:
    """Answers every request with HTTP 500."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


SERVERS = {"nothing listening": nothing_listening, "silent": silent_server, "HTTP 500": failing_server}
COMMANDS = {
    "run": ["run", "{config}", "--question", "What is 1 + 2?"],
    "eval": ["eval", "{config}", "evaluation.num_problems=2"],
    "train": ["train", "{config}", "--run-dir", "{tmp}/run"],
}


def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(
        '[backend]\nname = "tinker"\n[model]\nbase_model = "Qwen/Qwen3-8B"\nlora_rank = 8\n'
        f"[training]\nnum_iterations = 1\nbackend_timeout_s = {TIMEOUT_S}\nbackend_retry_delay_s = 0.1\n"
        "[warmstart]\nenabled = false\n",
        encoding="utf-8",
    )
    return path


def environment(url: str, tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TINKER_", "DEBATE_")) and not k.lower().endswith("_proxy")  # the servers are local
    }
    env.update(
        TINKER_BASE_URL=url,
        TINKER_API_KEY="tml-down-test-key",
        TINKER_TELEMETRY="0",
        HOME=str(tmp_path / "home"),
        HF_HUB_OFFLINE="1",
        PYTHONWARNINGS="ignore",
    )
    return env


def command(name: str, config: Path, tmp_path: Path) -> list[str]:
    args = [a.format(config=config, tmp=tmp_path) for a in COMMANDS[name]]
    return [sys.executable, "-m", "debate_core.cli", *args]


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_every_command_gives_up_in_one_line(server: str, tmp_path: Path) -> None:
    config = run_file(tmp_path)
    with SERVERS[server]() as url:

        def attempt(name: str) -> tuple[str, int, str]:
            done = subprocess.run(
                command(name, config, tmp_path / name),
                env=environment(url, tmp_path),
                capture_output=True,
                text=True,
                timeout=HANG_S,
            )
            return name, done.returncode, done.stderr

        with ThreadPoolExecutor(len(COMMANDS)) as pool:
            results = list(pool.map(attempt, sorted(COMMANDS)))
    for name, code, err in results:
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 1, (name, err)
        assert "Traceback" not in err, (name, err)
        assert lines[-1].startswith("debate: error: backend 'tinker': "), (name, err)
        said = lines[-1]
        if server == "nothing listening":  # refused: said at once, not waited on
            assert f"nothing listens at {url.removeprefix('http://')}, the connection is refused" in said
            continue
        waited = re.search(r"no answer after (\d+) s", said)
        assert waited is not None or "failed after" in said, (name, said)
        if waited is not None:  # the seconds waited, at least the limit; 3 s for a 2 s limit under load
            assert TIMEOUT_S <= int(waited.group(1)) <= TIMEOUT_S + WAIT_MARGIN_S, (name, said)
            assert f"training.backend_timeout_s = {TIMEOUT_S}" in said, (name, said)


@contextmanager
def unresolvable() -> Iterator[str]:
    yield "http://nonexistent.invalid:8000"  # .invalid never resolves (RFC 2606)


NOWHERE = {"nothing listening": nothing_listening, "a name that does not resolve": unresolvable}


@pytest.mark.parametrize("nowhere", sorted(NOWHERE))
def test_an_address_where_nothing_can_answer_fails_at_once(nowhere: str, tmp_path: Path) -> None:
    """A refused port or a name that does not resolve is not a slow service: with the default
    give-up time (600 s, beyond the hang limit here) the run fails at once, in one line naming the
    address, and leaves nothing in its new run directory."""
    config = run_file(tmp_path)
    config.write_text(config.read_text().replace(f"backend_timeout_s = {TIMEOUT_S}\n", ""))
    with NOWHERE[nowhere]() as url:
        done = subprocess.run(
            command("train", config, tmp_path),
            env=environment(url, tmp_path),
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    host_port = url.removeprefix("http://")
    expected = (
        f"nothing listens at {host_port}, the connection is refused (TINKER_BASE_URL={url})"
        if nowhere == "nothing listening"
        else f"the host name 'nonexistent.invalid' does not resolve (TINKER_BASE_URL={url})"
    )
    assert lines[-1].startswith("debate: error: backend 'tinker': create the training client: "), lines[-1]
    assert expected in lines[-1]
    assert not any("waiting for backend" in line for line in lines)
    assert not (tmp_path / "run").exists()


def test_a_long_wait_says_what_it_waits_for(tmp_path: Path) -> None:
    config = run_file(tmp_path)
    config.write_text(config.read_text().replace(f"backend_timeout_s = {TIMEOUT_S}", "backend_timeout_s = 12"))
    with silent_server() as url:
        done = subprocess.run(
            command("run", config, tmp_path),
            env=environment(url, tmp_path),
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    assert done.returncode == 1
    assert "debate: waiting for backend 'tinker': create_sampling_client (10 s; gives up after 12 s" in done.stderr
    assert "Ctrl-C stops" in done.stderr


STOPS = {signal.SIGINT: ("debate: interrupted", 130), signal.SIGTERM: ("debate: terminated", 143)}
"""Each stop signal, with the last line and the status it stops a waiting command with."""


@pytest.mark.parametrize("signum", sorted(STOPS), ids=lambda signum: signum.name)
@pytest.mark.parametrize("name", ["run", "train"])
def test_a_stop_signal_while_the_backend_hangs_stops_at_once(name: str, signum: signal.Signals, tmp_path: Path) -> None:
    """Ctrl-C, or a scheduler's SIGTERM, while the first backend call waits: one line, the status of
    the signal, and a new run's directory gone (the run failed before its first step, so the same
    --run-dir can be used again at once; docs/config-reference.md)."""
    config = run_file(tmp_path)
    config.write_text(config.read_text().replace(f"backend_timeout_s = {TIMEOUT_S}", "backend_timeout_s = 0"))
    asked = threading.Event()
    with silent_server(asked) as url:
        child = subprocess.Popen(
            command(name, config, tmp_path),
            env=environment(url, tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines = timed_lines(child)
        assert asked.wait(HANG_S) and child.poll() is None  # started, and waiting on the silent service
        if name == "train":
            assert (tmp_path / "run" / "config.toml").is_file()  # the run had started
        sent = time.monotonic()
        child.send_signal(signum)
        child.wait(timeout=HANG_S)
    said = [(at, line) for at, line in lines.result(timeout=HANG_S) if line.strip()]
    assert "Traceback" not in "".join(line for _, line in said)
    stopped_at, last = said[-1]
    assert (last.strip(), child.returncode) == STOPS[signum], said
    assert stopped_at - sent < CTRL_C_LIMIT_S, (stopped_at - sent, last)
    assert not (tmp_path / "run").exists()  # nothing left to block a retry: no config, no lock


def timed_lines(child: subprocess.Popen[str]) -> Future[list[tuple[float, str]]]:
    """Each line of the child's standard error with the ``time.monotonic()`` it was read at."""
    assert child.stderr is not None
    stream = child.stderr
    lines: Future[list[tuple[float, str]]] = Future()

    def read() -> None:
        lines.set_result([(time.monotonic(), line) for line in stream])

    threading.Thread(target=read, daemon=True).start()
    return lines
