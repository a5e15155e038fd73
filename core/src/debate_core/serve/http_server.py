"""The HTTP side of ``debate serve`` (docs/training.md#serving-a-policy): the standard library's
threading HTTP server in front of one asyncio loop that owns the policy.

Each request is read and checked on its connection's thread, then answered on the loop
(``asyncio.run_coroutine_threadsafe``), so concurrent requests reach the backend together and
the local backend batches them. Routes: ``GET /v1/models``, ``GET /v1/models/{name}``,
``POST /v1/chat/completions``, ``POST /v1/completions`` and ``GET /health``; anything else gets an
OpenAI-style error. A ``stream = true`` request is answered with server-sent events
(``streaming``), a comment line every ``keep_alive_s`` seconds until the answer is known.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import sys
import threading
import time
import traceback
from collections.abc import Callable, Coroutine, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, TypeVar

import attrs

from debate_core.config import RunConfig
from debate_core.config.environment import env_flag
from debate_core.limits import limit_value
from debate_core.records.json_values import JsonObject
from debate_core.serve.policy import ServedPolicy, check_request
from debate_core.serve.streaming import KEEP_ALIVE, error_event, stream_events
from debate_core.serve.wire import (
    ApiError,
    ChatRequest,
    completion_body,
    models_body,
    parse_chat_request,
    parse_completion_request,
)

if TYPE_CHECKING:
    from debate_core.plugin import ComponentBuilder

T = TypeVar("T")

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"
MODELS_PATH = "/v1/models"

KEEP_ALIVE_S = 5.0
"""Seconds between the comment lines of a stream whose answer is not yet known."""


@attrs.frozen
class Stream:
    """A request answered with server-sent events: its checked request and the kind of its chunks."""

    request: ChatRequest
    text: bool


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
        self.keep_alive_s = KEEP_ALIVE_S
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

    def respond(self, method: str, path: str, body: bytes) -> tuple[int, JsonObject] | Stream:
        """The status and JSON body of one request, or the stream that answers it."""
        try:
            return self._route(method, path.split("?", 1)[0].rstrip("/"), body)
        except ApiError as exc:
            return exc.status, exc.body()
        except Exception as exc:  # a bug or an unexpected backend error: the server stays up
            return _internal(exc).status, _internal(exc).body()

    def stream(self, stream: Stream) -> Iterator[bytes]:
        """The events of a streamed answer: comment lines while it is played, then its chunks (an
        error event when it failed)."""
        future = asyncio.run_coroutine_threadsafe(self.policy.answer(stream.request), self.loop.loop)
        while True:
            try:
                completions = future.result(timeout=self.keep_alive_s)
                break
            except concurrent.futures.TimeoutError:
                yield KEEP_ALIVE
            except ApiError as exc:
                yield error_event(exc)
                return
            except Exception as exc:
                yield error_event(_internal(exc))
                return
        yield from stream_events(stream.request, completions, text=stream.text)

    def _route(self, method: str, path: str, body: bytes) -> tuple[int, JsonObject] | Stream:
        models = self.policy.models
        if path in (CHAT_PATH, COMPLETIONS_PATH):
            _allow(method, "POST", path)
            text = path == COMPLETIONS_PATH
            request = parse_completion_request(body, models) if text else parse_chat_request(body, models)
            check_request(request)
            if request.stream:
                return Stream(request, text)
            return 200, completion_body(request, self.loop.run(self.policy.answer(request)), text=text)
        return 200, self._read(method, path)

    def _read(self, method: str, path: str) -> JsonObject:
        models = self.policy.models
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
            404,
            f"Unknown path {path!r}: this server answers {MODELS_PATH}, {CHAT_PATH} and {COMPLETIONS_PATH}",
            None,
            "not_found",
        )


def _internal(exc: Exception) -> ApiError:
    """A bug or an unexpected backend error as a 500 (the traceback printed under ``DEBATE_DEBUG``)."""
    if env_flag("DEBATE_DEBUG"):
        traceback.print_exception(exc)
    text = " ".join(str(exc).split())
    return ApiError(500, f"internal error: {type(exc).__name__}: {text}"[:2000])


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
        answer = self.server.app.respond(method, self.path, body)
        if isinstance(answer, Stream):
            self._stream(answer)
            return
        self._send(*answer)

    def _stream(self, stream: Stream) -> None:
        """Server-sent events, each flushed as it is written; the connection closes after the last."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        try:
            for data in self.server.app.stream(stream):
                self.wfile.write(data)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client went away; the answer is dropped
            return

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
