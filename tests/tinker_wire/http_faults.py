"""Faults of the fake Tinker service at the HTTP level, and its guard against a request sent twice.

A fault replaces the service's answer to a request of one endpoint (``FAULTS``): an error status
(with or without ``Retry-After``), a connection dropped before any answer, or a hang that ends in
a dropped connection; ``lost answer`` lets the service handle the request (an update or a save is
applied) and then drops the connection instead of answering, the case a retry must not apply twice.

The guard is what the SDK relies on: it sends a request again with the same ``seq_id`` (and,
within its HTTP client's retries, the same ``X-Idempotency-Key``), and the service executes each
``seq_id`` of a model once. ``replay`` answers a request sent again with the first answer (the
update is applied once), ``refuse`` answers it with HTTP 400, ``off`` executes it again (a
service without the guard: the update is applied twice).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import attrs
from tinker.proto import tinker_public_pb2 as pb

ENDPOINTS = {
    "sample": "/api/v1/asample",
    "forward_backward": "/api/v1/forward_backward",
    "optim_step": "/api/v1/optim_step",
    "save_state": "/api/v1/save_weights",
    "save_weights_for_sampler": "/api/v1/save_weights_for_sampler",
}
"""Call kind -> the endpoint its request goes to."""
FAULTS = ("500", "502", "503", "429 Retry-After", "429", "reset", "hang")
"""The faults of a request: an answer with that status (``Retry-After: 1`` where named), the
connection closed at once without an answer, or held without an answer (for ``hang_s``) and then
closed."""
TRAINING_PATHS = frozenset(path for call, path in ENDPOINTS.items() if call != "sample")
"""The endpoints of requests that change a model (each carries the model's next ``seq_id``)."""
GUARDS = ("replay", "refuse", "off")


@attrs.define
class HttpFault:
    """``fault`` (one of ``FAULTS``, or ``lost answer``) on the next ``times`` requests to ``path``
    (``None``: every one), once a training state named ``after`` was saved."""

    path: str
    fault: str
    times: int | None = 1
    after: str | None = None
    since: int = 0
    """Only training states saved after this many count for ``after``."""
    hits: int = 0

    def armed(self, saved: list[str]) -> bool:
        left = self.times is None or self.hits < self.times
        return left and (self.after is None or self.after in saved[self.since :])


@attrs.define
class FaultState:
    """The faults still to come, the requests they hit, the guard and the answers it keeps."""

    faults: list[HttpFault] = attrs.field(factory=list)
    hit: list[tuple[str, str]] = attrs.field(factory=list)
    """(path, fault) of each request a fault answered."""
    guard: str = "replay"
    answered: dict[tuple[str, int], tuple[int, str, bytes]] = attrs.field(factory=dict)
    """(model id, seq_id) -> the answer the service gave the request."""
    sends: list[dict[str, Any]] = attrs.field(factory=list)
    """Every request to a training endpoint: path, model id, seq_id, idempotency key, and whether
    its (model, seq_id) had been received before."""
    hang_s: float = 1.0
    release: threading.Event = attrs.field(factory=threading.Event)
    """Set when the server shuts down: every hang ends."""

    def take(self, path: str, saved: list[str]) -> HttpFault | None:
        for fault in self.faults:
            if fault.path == path and fault.armed(saved):
                fault.hits += 1
                self.hit.append((path, fault.fault))
                return fault
        return None


def training_key(path: str, body: bytes) -> tuple[str, int] | None:
    """(model id, seq_id) of a request to a training endpoint; ``None`` for other requests."""
    if path not in TRAINING_PATHS:
        return None
    if path == ENDPOINTS["forward_backward"]:
        message = pb.ForwardBackwardRequest()
        message.ParseFromString(body)
        return message.model_id, int(message.seq_id)
    data = json.loads(body)
    return str(data["model_id"]), int(data["seq_id"])


def guarded(
    state: FaultState, path: str, body: bytes, headers: dict[str, str]
) -> tuple[tuple[str, int] | None, tuple[int, str, bytes] | None]:
    """The request's key, and the answer the guard gives a request whose key was received before
    (``None``: handle it)."""
    key = training_key(path, body)
    if key is None:
        return None, None
    again = key in state.answered
    state.sends.append(
        {"path": path, "model_id": key[0], "seq_id": key[1], "key": headers.get("x-idempotency-key"), "again": again}
    )
    if not again or state.guard == "off":
        return key, None
    if state.guard == "replay":
        return key, state.answered[key]
    detail = {"detail": f"seq_id {key[1]} of model {key[0]} was already received"}
    return key, (400, "application/json", json.dumps(detail).encode())


def drop(handler: BaseHTTPRequestHandler) -> None:
    """Close the connection at once, with no answer (a reset: the socket lingers 0 s)."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True


def answer_with(handler: BaseHTTPRequestHandler, fault: HttpFault, state: FaultState) -> None:
    """Answer the request as ``fault`` says (never ``lost answer``: that one is handled first)."""
    if fault.fault == "reset":
        drop(handler)
        return
    if fault.fault == "hang":
        state.release.wait(state.hang_s)
        drop(handler)
        return
    status = int(fault.fault.split()[0])
    payload = json.dumps({"detail": f"injected HTTP {status}"}).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(payload)))
    if "Retry-After" in fault.fault:
        handler.send_header("retry-after", "1")
    handler.end_headers()
    handler.wfile.write(payload)
