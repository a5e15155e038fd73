"""The ``debate`` entry point ends the process without the interpreter's teardown, after what a
normal exit does that matters: buffered output flushed, exit handlers run (logging's included),
thread pools stopped and foreground threads joined, the status kept
(``debate_core/cli/process_exit.py``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from debate_core.cli.process_exit import status_of

pytestmark = pytest.mark.slow  # subprocesses


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)


def test_exit_flushes_output_runs_exit_handlers_and_keeps_the_status(tmp_path: Path) -> None:
    marker = tmp_path / "handler-ran"
    done = _run(
        f"""
        import atexit, sys, tempfile, weakref
        from pathlib import Path
        from debate_core.cli.process_exit import exit_process
        atexit.register(lambda: Path({str(marker)!r}).write_text("yes"))
        scratch = tempfile.TemporaryDirectory()
        Path({str(tmp_path / "scratch-name")!r}).write_text(scratch.name)
        sys.stdout.write("no newline, still buffered")
        sys.stderr.write("error text")
        exit_process(3)
        """,
        tmp_path,
    )
    assert done.returncode == 3
    assert done.stdout == "no newline, still buffered"
    assert done.stderr == "error text"
    assert marker.read_text() == "yes"
    assert not Path((tmp_path / "scratch-name").read_text()).exists()  # temporary directories removed


def test_exit_closes_logging_files_though_logging_registered_its_handler_first(tmp_path: Path) -> None:
    """``logging`` is imported before this module (its exit handler would run after ours, so never):
    its files are closed all the same, every record in them."""
    log = tmp_path / "run.log"
    done = _run(
        f"""
        import logging
        from debate_core.cli.process_exit import exit_process
        handler = logging.FileHandler({str(log)!r}, delay=True)
        logging.getLogger("probe").addHandler(handler)
        logging.getLogger("probe").warning("the last record")
        exit_process(0)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert log.read_text() == "the last record\n"


def test_without_exit_process_the_interpreter_exits_as_usual(tmp_path: Path) -> None:
    """Importing the module changes nothing for a process that exits by itself: earlier exit
    handlers run, the status is its own, and the teardown finalises objects."""
    marker = tmp_path / "finalised"
    done = _run(
        f"""
        import atexit, sys, weakref
        from pathlib import Path
        import debate_core.cli.process_exit
        class Resource:
            pass
        kept = Resource()
        weakref.finalize(kept, Path({str(marker)!r}).write_text, "yes")
        sys.exit(5)
        """,
        tmp_path,
    )
    assert done.returncode == 5, done.stderr
    assert marker.read_text() == "yes"


def test_exit_waits_for_foreground_threads_and_stops_idle_thread_pools(tmp_path: Path) -> None:
    done = _run(
        """
        import threading, time
        from concurrent.futures import ThreadPoolExecutor
        from debate_core.cli.process_exit import exit_process
        pool = ThreadPoolExecutor(2)
        pool.submit(lambda: None).result()  # its workers now wait, idle, for more work
        def late() -> None:
            time.sleep(0.2)
            print("thread finished", flush=True)
        threading.Thread(target=late).start()
        exit_process(0)
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert done.stdout == "thread finished\n"


def test_a_failed_flush_of_standard_output_is_status_120(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    done = _run(
        """
        import sys
        from debate_core.cli.process_exit import exit_process
        sys.stdout = open("/dev/full", "w")
        sys.stdout.write("lost")
        exit_process(0)
        """,
        tmp_path,
    )
    assert done.returncode == 120


def test_the_module_entry_point_exits_with_the_command_status(tmp_path: Path) -> None:
    response = tmp_path / "response.txt"
    response.write_text("<solution>no other sections</solution>")
    done = subprocess.run(
        [sys.executable, "-m", "debate_core.cli", "parse", str(response)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1  # the response breaks the contract
    assert '"error_code": "missing_tag"' in done.stdout
    usage = subprocess.run(
        [sys.executable, "-m", "debate_core.cli", "no-such-command"], capture_output=True, text=True, timeout=300
    )
    assert usage.returncode == 2 and "invalid choice" in usage.stderr


@pytest.mark.parametrize(("code", "status", "printed"), [(None, 0, ""), (4, 4, ""), ("bad input", 1, "bad input\n")])
def test_status_of_a_system_exit_is_the_interpreters(
    code: object, status: int, printed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert status_of(SystemExit(code)) == status
    assert capsys.readouterr().err == printed
