"""Workaround 3 of 3 (tests/tinker_server/skyrl_server.py): a pass-through proxy on 127.0.0.1
that adds ``sample_sequence_ids`` to SkyRL's ``asample`` replies.

What it papers over: the ``tinker`` SDK 0.38 stamps each sampled sequence with an id the
``/api/v1/asample`` promise carries (``UntypedAPIFuture.sample_sequence_ids``, one per sample) and
asserts it is there ("asample promises always carry sample_sequence_ids"); SkyRL 0.4.0, written
for SDK 0.25, answers ``{"request_id": ..., "model_id": ...}`` without it. The proxy forwards
every request and answer byte for byte, except that an ``asample`` answer without the field gets
``num_samples`` ids of its own (``"<request_id>:<i>"``). Unnecessary with a SkyRL release that
serves SDK 0.38's protocol (the field). The backend's own line for a server without it is tested
against the fake service (tests/tinker_wire/test_server_mismatches.py).
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

ASAMPLE_PATH = "/api/v1/asample"
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "accept-encoding", "host"})
UPSTREAM_TIMEOUT_S = 120.0
"""A request SkyRL has not answered by then is answered 504 (its long polls return within 45 s)."""


def with_sequence_ids(request_body: bytes, reply_body: bytes) -> bytes:
    """``reply_body`` with ``sample_sequence_ids`` added when it lacks them (as it was otherwise)."""
    try:
        reply = json.loads(reply_body)
        request = json.loads(request_body)
    except ValueError:
        return reply_body
    if not isinstance(reply, dict) or reply.get("sample_sequence_ids") is not None:
        return reply_body
    count = int(request.get("num_samples", 1))
    reply["sample_sequence_ids"] = [f"{reply.get('request_id')}:{i}" for i in range(count)]
    return json.dumps(reply).encode()


def _handler(host: str, port: int) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            upstream = http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT_S)
            try:
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                status, reason, reply = answer.status, answer.reason, answer.read()
                reply_headers: list[tuple[str, str]] = answer.getheaders()
            except OSError as exc:
                status, reason, reply, reply_headers = 504, "Gateway Timeout", str(exc).encode(), []
            finally:
                upstream.close()
            if self.command == "POST" and urlsplit(self.path).path == ASAMPLE_PATH and status == 200:
                reply = with_sequence_ids(body, reply)
            self.send_response(status, reason)
            for name, value in reply_headers:
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        do_GET = do_POST = do_PUT = do_DELETE = _forward

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Forward


@contextmanager
def sequence_id_proxy(upstream_url: str) -> Iterator[str]:
    """A proxy on a free 127.0.0.1 port in front of ``upstream_url``; yields its URL."""
    parts = urlsplit(upstream_url)
    assert parts.hostname == "127.0.0.1" and parts.port is not None, upstream_url
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(parts.hostname, parts.port))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="sequence-id-proxy", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
