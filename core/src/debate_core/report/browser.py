"""Open a page in headless Chromium and see what a person would: console errors, network
requests, a screenshot, and the value of a script run on the page.

Talks the Chrome DevTools Protocol over ``--remote-debugging-pipe`` (file descriptors 3 and 4,
NUL-separated JSON messages), so it needs nothing but a Chromium binary: Debian's ``chromium``
package, or one named by ``DEBATE_CHROMIUM``. Used by ``debate report --screenshot`` and by the
report's browser test.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import attrs

from debate_core.errors import DebateError
from debate_core.records.json_values import JsonObject, JsonValue

CHROMIUM_ENV = "DEBATE_CHROMIUM"
"""A Chromium (or Chrome) binary to use instead of the first one found on ``PATH``."""
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


class BrowserError(DebateError):
    """The browser could not be started or did not answer."""


def find_chromium() -> str | None:
    """The Chromium binary to use, or ``None`` when none is installed."""
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        return named if Path(named).exists() or shutil.which(named) else None
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


@attrs.frozen
class PageVisit:
    """What loading a page showed."""

    console_errors: tuple[str, ...]
    """Console errors, uncaught exceptions and browser log errors, one line each."""
    requests: tuple[str, ...]
    """Every URL the page requested (the page's own included)."""
    value: JsonValue
    """What ``script`` returned (JSON), ``None`` without one."""
    screenshot: bytes
    """A PNG of the whole page."""


class _Pipe:
    """One DevTools connection: commands out on one pipe, answers and events in on the other."""

    def __init__(self, to_browser: int, from_browser: int, timeout_s: float) -> None:
        self.to_browser = to_browser
        self.from_browser = from_browser
        self.timeout_s = timeout_s
        self.buffer = b""
        self.next_id = 0
        self.events: list[JsonObject] = []

    def send(self, method: str, params: JsonObject | None = None, session: str | None = None) -> JsonObject:
        self.next_id += 1
        message: JsonObject = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message', reply['error'])}")
                result: JsonObject = reply.get("result", {})
                return result
            self.events.append(reply)

    def wait_for(self, method: str) -> JsonObject:
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        while True:
            event = self._read()
            if event.get("method") == method:
                return event
            self.events.append(event)

    def _read(self) -> JsonObject:
        deadline = time.monotonic() + self.timeout_s
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise BrowserError(f"the browser did not answer within {self.timeout_s:.0f} s")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed its DevTools pipe (it exited)")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        decoded: JsonObject = json.loads(message)
        return decoded


def _high_fd(fd: int) -> int:
    """A copy of ``fd`` numbered 10 or more (closed on exec), so that moving it to 3 or 4 in the
    child cannot clobber the other."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)


def _event_line(event: JsonObject) -> str | None:
    """One line for a console error, an uncaught exception or a browser log error; else ``None``."""
    params = event.get("params", {})
    method = event.get("method")
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
        return f"console.{params.get('type')}: {args}"
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        text = details.get("exception", {}).get("description") or details.get("text", "")
        return f"uncaught exception: {text}"
    if method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        entry = params["entry"]
        return f"{entry.get('source', 'log')}: {entry.get('text', '')} {entry.get('url', '')}".strip()
    return None


HEADLESS_FLAGS = (
    "--headless",
    "--remote-debugging-pipe",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--hide-scrollbars",
    "--mute-audio",
)
"""Chromium's flags: headless, DevTools over the pipe, and nothing the page did not ask for
(no first-run pages, extensions or background requests)."""


def visit(
    page: Path,
    *,
    script: str | None = None,
    width: int = 1400,
    height: int = 900,
    full_page: bool = True,
    timeout_s: float = 60.0,
    chromium: str | None = None,
) -> PageVisit:
    """Load ``page`` (a local file) in headless Chromium, wait for its load event, run ``script``
    (an expression; its JSON value comes back) and take a PNG screenshot.

    Raises:
        BrowserError: no Chromium is installed, or it failed to start or to answer.
    """
    binary = chromium or find_chromium()
    if binary is None:
        raise BrowserError(f"no Chromium found (install Debian's 'chromium' package or set {CHROMIUM_ENV})")
    with tempfile.TemporaryDirectory(prefix="debate-chromium-") as profile:
        process, pipe = _start(binary, profile, timeout_s)
        try:
            return _visit(pipe, page, script, width, height, full_page)
        finally:
            _stop(process, pipe)


def _start(binary: str, profile: str, timeout_s: float) -> tuple[subprocess.Popen[bytes], _Pipe]:
    """Chromium with a fresh profile, its DevTools pipe on the child's file descriptors 3 and 4,
    and this process's end of that pipe."""
    commands_read, commands_write = os.pipe()
    answers_read, answers_write = os.pipe()
    child_in, child_out = _high_fd(commands_read), _high_fd(answers_write)

    def connect_pipe() -> None:  # runs in the child, before exec: the only fds it inherits are 0-4
        os.dup2(child_in, 3)
        os.dup2(child_out, 4)

    process = subprocess.Popen(
        [binary, *HEADLESS_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=False,  # every fd of this process is close-on-exec (PEP 446) but the two dup2'ed ones
        preexec_fn=connect_pipe,
    )
    for fd in (commands_read, answers_write, child_in, child_out):
        os.close(fd)
    return process, _Pipe(commands_write, answers_read, timeout_s)


def _stop(process: subprocess.Popen[bytes], pipe: _Pipe) -> None:
    """Ask the browser to close, close this end of the pipe, and wait for it (killed after 10 s)."""
    with contextlib.suppress(BrowserError, OSError):
        pipe.send("Browser.close")
    os.close(pipe.to_browser)
    os.close(pipe.from_browser)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _visit(pipe: _Pipe, page: Path, script: str | None, width: int, height: int, full_page: bool) -> PageVisit:
    target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        pipe.send(f"{domain}.enable", session=session)
    pipe.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    pipe.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
    pipe.wait_for("Page.loadEventFired")
    value = None
    if script is not None:
        evaluated = pipe.send(
            "Runtime.evaluate", {"expression": script, "returnByValue": True, "awaitPromise": True}, session=session
        )
        if "exceptionDetails" in evaluated:
            raise BrowserError(f"the script raised: {evaluated['exceptionDetails'].get('text', '')}")
        value = evaluated.get("result", {}).get("value")
    params: JsonObject = {"format": "png"}
    if full_page:
        size = pipe.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        params["captureBeyondViewport"] = True
        params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
    shot = base64.b64decode(pipe.send("Page.captureScreenshot", params, session=session)["data"])
    pipe.send("Runtime.evaluate", {"expression": "0"}, session=session)  # flush pending events
    errors = tuple(line for event in pipe.events if (line := _event_line(event)) is not None)
    requests = tuple(
        e["params"]["request"]["url"] for e in pipe.events if e.get("method") == "Network.requestWillBeSent"
    )
    return PageVisit(errors, requests, value, shot)
