"""An OpenAI-compatible chat-completions endpoint on loopback whose faults a test scripts: it answers
like a judge that knows the right answer (``\\boxed{42}``), or is slow, resets the connection,
answers garbage, rate-limits with ``Retry-After``, or fails with a status."""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_LIMIT_S = 600
"""How long a hung request waits to be released at most (a hang detector, never reached in a passing run)."""

FAULTS = ("ok", "hang", "reset", "garbage", "no_choices", "429", "500", "503", "400", "401", "404")


def knows_42(request: dict[str, Any]) -> str:
    """A truthful judge: the answer that says ``\\boxed{42}`` is better; equal when both or neither do."""
    text = request["messages"][-1]["content"]
    a_part, _, b_part = text.partition("\n\nAnswer B:\n")
    a, b = "\\boxed{42}" in a_part, "\\boxed{42}" in b_part
    return "A = B" if a == b else ("A > B" if a else "B > A")


def always_a(request: dict[str, Any]) -> str:
    """A judge that always prefers the answer shown first."""
    return "A > B"


class StubEndpoint:
    """The endpoint; ``faults`` is consumed one per request (then ``default`` applies). Every request
    body is kept in ``requests`` with its ``Authorization`` header in ``keys``."""

    def __init__(self, answer: Callable[[dict[str, Any]], str] = knows_42) -> None:
        self.answer = answer
        self.faults: list[str] = []
        self.default = "ok"
        self.retry_after = "0"
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str | None] = []
        self.release = threading.Event()
        self.in_flight = 0
        self.most_in_flight = 0
        self.gather = 0
        """Hold the first requests until this many are in flight together (0: none held)."""
        self._lock = threading.Condition()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.stub = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def next_fault(self) -> str:
        with self._lock:
            return self.faults.pop(0) if self.faults else self.default

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            if self.gather and self.in_flight >= self.gather:
                self.gather = 0  # the first ones gathered: from now on every request is answered at once
            self._lock.notify_all()
            self._lock.wait_for(lambda: not self.gather, timeout=HANG_LIMIT_S)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def close(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        stub: StubEndpoint = self.server.stub  # type: ignore[attr-defined]
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        stub.requests.append(request)
        stub.keys.append(self.headers.get("Authorization"))
        fault = stub.next_fault()
        stub.enter()
        try:
            self._fault(stub, fault, request)
        finally:
            stub.leave()

    def _fault(self, stub: StubEndpoint, fault: str, request: dict[str, Any]) -> None:
        if fault == "hang":
            stub.release.wait(HANG_LIMIT_S)
            self.close_connection = True
        elif fault == "reset":  # an RST instead of an answer
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
        elif fault == "garbage":
            self._send(200, b"<html>502 Bad Gateway</html>")
        elif fault == "no_choices":
            self._send(200, b'{"id": "x", "object": "chat.completion"}')
        elif fault.isdigit():
            error = {"error": {"message": f"stub fault {fault}", "type": "stub", "param": None, "code": None}}
            headers = {"Retry-After": stub.retry_after} if fault == "429" else {}
            self._send(int(fault), json.dumps(error).encode(), headers)
        else:
            self._send(200, json.dumps(_completion(request, stub.answer(request))).encode())

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def _completion(request: dict[str, Any], text: str) -> dict[str, Any]:
    prompt = sum(len(re.findall(r"\S+", m["content"])) for m in request["messages"])
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": request["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3},
    }


@contextmanager
def stub_endpoint(answer: Callable[[dict[str, Any]], str] = knows_42) -> Iterator[StubEndpoint]:
    endpoint = StubEndpoint(answer)
    try:
        yield endpoint
    finally:
        endpoint.close()
