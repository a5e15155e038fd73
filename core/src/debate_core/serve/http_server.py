"""The HTTP side of ``debate serve`` (docs/training.md#serving-a-policy): the standard library's
threading HTTP server in front of one asyncio loop that owns the policy.

Each request is read and checked on its connection's thread, then answered on the loop
(``asyncio.run_coroutine_threadsafe``), so concurrent requests reach the backend together and
the local backend batches them. Routes: ``GET /v1/models``, ``GET /v1/models/{name}``,
``POST /v1/chat/completions`` and ``GET /health``; anything else gets an OpenAI-style error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
import traceback
from collections.abc import Callable, Coroutine, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, TypeVar

from debate_core.config import RunConfig
from debate_core.config.environment import env_flag
from debate_core.limits import limit_value
from debate_core.records.json_values import JsonObject
from debate_core.serve.policy import ServedPolicy
from debate_core.serve.wire import ApiError, completion_body, models_body, parse_chat_request

if TYPE_CHECKING:
    from debate_core.plugin import ComponentBuilder

T = TypeVar("T")

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"


class EventLoopThread:
    """An asyncio loop running in a thread of its own, for code that waits on it from other threads."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="debate-serve-loop", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[object, None, T]) -> T:
        """Run ``coroutine`` on the loop and wait for its result (raised as it was raised)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        """Stop the loop and wait for its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class PolicyServer:
    """An OpenAI-compatible server of one policy, listening once built; :meth:`serve_forever`
    answers until :meth:`shutdown` (from another thread) or an interrupt."""

    def __init__(
        self, policy: ServedPolicy, loop: EventLoopThread, host: str, port: int, log: Callable[[str], None] | None
    ) -> None:
        self.policy = policy
        self.loop = loop
        self.log = log
        self.created = int(time.time())
        self.httpd = _HttpServer((host, port), _Handler)
        self.httpd.app = self

    @property
    def url(self) -> str:
        """The API's base URL (``http://127.0.0.1:8000/v1``), the port the one actually bound."""
        host, port = self.httpd.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{text}]" if ":" in text else text
        return f"http://{shown}:{port}/v1"

    def serve_forever(self) -> None:
        """Answer requests until shut down."""
        self.httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop :meth:`serve_forever` (called from another thread)."""
        self.httpd.shutdown()

    def close(self) -> None:
        """Close the listening socket (the loop and the policy are the caller's)."""
        self.httpd.server_close()

    def respond(self, method: str, path: str, body: bytes) -> tuple[int, JsonObject]:
        """The status and JSON body of one request."""
        try:
            return 200, self._route(method, path.split("?", 1)[0].rstrip("/"), body)
        except ApiError as exc:
            return exc.status, exc.body()
        except Exception as exc:  # a bug or an unexpected backend error: the server stays up
            if env_flag("DEBATE_DEBUG"):
                traceback.print_exc()
            text = " ".join(str(exc).split())
            return 500, ApiError(500, f"internal error: {type(exc).__name__}: {text}"[:2000]).body()

    def _route(self, method: str, path: str, body: bytes) -> JsonObject:
        models = self.policy.models
        if path == CHAT_PATH:
            _allow(method, "POST", path)
            request = parse_chat_request(body, models)
            return completion_body(request, self.loop.run(self.policy.answer(request)))
        if path == MODELS_PATH:
            _allow(method, "GET", path)
            return models_body(models, self.created)
        if path.startswith(MODELS_PATH + "/"):
            _allow(method, "GET", path)
            name = path[len(MODELS_PATH) + 1 :]
            if name not in models:
                raise ApiError(404, f"The model '{name}' does not exist", "model", "model_not_found")
            return models_body([name], self.created)["data"][0]  # type: ignore[no-any-return]
        if path == "/health":
            return {"status": "ok", "models": list(models)}
        raise ApiError(
            404, f"Unknown path {path!r}: this server answers {MODELS_PATH} and {CHAT_PATH}", None, "not_found"
        )


def _allow(method: str, allowed: str, path: str) -> None:
    if method != allowed:
        raise ApiError(405, f"{path} takes {allowed}, not {method}", None, "method_not_allowed")


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    app: PolicyServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "debate-serve"
    server: _HttpServer

    def do_GET(self) -> None:
        self._answer("GET", b"")

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._send(411, ApiError(411, "a request body needs a Content-Length header").body())
            return
        if int(length) > limit_value("input_bytes"):
            self.close_connection = True  # the body is not read
            self._send(413, ApiError(413, f"the request body of {length} bytes is over the input limit").body())
            return
        self._answer("POST", self.rfile.read(int(length)))

    def do_PUT(self) -> None:
        self._answer("PUT", b"")

    def do_DELETE(self) -> None:
        self._answer("DELETE", b"")

    def _answer(self, method: str, body: bytes) -> None:
        status, payload = self.server.app.respond(method, self.path, body)
        self._send(status, payload)

    def _send(self, status: int, payload: JsonObject) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        log = self.server.app.log
        if log is not None:
            line = format % args
            log(f"{self.address_string()} {''.join(c if c.isprintable() else repr(c)[1:-1] for c in line)}")


def print_log(line: str) -> None:
    """One request line on standard error."""
    print(f"debate serve: {line}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def serving(
    config: RunConfig,
    registry: ComponentBuilder,
    checkpoint: str,
    name: str,
    host: str = "127.0.0.1",
    port: int = 0,
    log: Callable[[str], None] | None = None,
) -> Iterator[PolicyServer]:
    """A server of ``checkpoint`` answering on a thread of its own while the block runs (its
    ``url`` ready to use), then stopped and its backend session closed: ``debate serve`` inside
    another program, a test or a notebook."""
    loop = EventLoopThread()
    policy: ServedPolicy | None = None
    server: PolicyServer | None = None
    thread: threading.Thread | None = None
    try:
        policy = loop.run(ServedPolicy.open(config, registry, checkpoint, name))
        server = PolicyServer(policy, loop, host, port, log)
        thread = threading.Thread(target=server.serve_forever, name="debate-serve-http", daemon=True)
        thread.start()
        yield server
    finally:
        if server is not None and thread is not None:
            server.shutdown()
            thread.join()
        if server is not None:
            server.close()
        if policy is not None:
            loop.run(policy.close())
        loop.stop()
