"""A fake Tinker service on loopback, for driving the real SDK client code over HTTP.

Only the service is fake: the SDK builds and sends its requests (JSON, and protobuf for
``forward_backward``), polls its futures and decodes the responses (protobuf for samples and
forward-backward outputs) exactly as against the Tinker service. The service computes honestly:
each training model is the scripted backend's bigram model (``tests.doubles.scripted_backend``:
exact Tinker losses, AdamW), samples carry that model's own logprobs, so the trainer's checks
see real data.

It checks the wire contract as it goes and records every request in ``events`` for the tests:
the API key on every request, per-model ``seq_id`` order, that a ``forward_backward`` result is
only collected once the ``optim_step`` behind it (and the update's next chunk, where one is to
come) was submitted (pipelining), that every sample comes from a sampler of the model's current
weights, and injected failures (``inject``).

No check waits a set time for a request that a correct client sends: a result is held until the
request it waits for has arrived, and the time limits below only bound how long a client that
breaks the contract (and so never sends it first) is waited for.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from tinker import types
from tinker.proto import tinker_public_pb2 as pb

from tests.doubles.scripted_backend import ScriptedSamplingClient, ScriptedServiceClient, ScriptedTrainingClient
from tests.tinker_wire.http_faults import ENDPOINTS, FaultState, HttpFault, answer_with, drop, guarded

PROTO = "application/x-protobuf"
OPTIM_WAIT_S = 60.0
"""How long a forward_backward result waits for its optim_step before that counts as a violation:
a pipelining client submits it before awaiting, so only a client that breaks the contract waits
this out."""
NEXT_CHUNK_WAIT_S = 60.0
"""How long a forward_backward result with a later chunk of its update still to come waits for that
chunk's request: a pipelining client submits it before awaiting, so only a client that does not
pipeline (or an update of fewer Datums than chunks) waits this out; a pipelining client's next
request comes within a second even on a loaded machine."""
_NP_DTYPES = {pb.DTYPE_FLOAT32: np.float32, pb.DTYPE_INT64: np.int64, pb.DTYPE_INT32: np.int32}
_DTYPE_NAMES = {pb.DTYPE_FLOAT32: "float32", pb.DTYPE_INT64: "int64", pb.DTYPE_INT32: "int32"}


@attrs.define
class Event:
    """One request the service received."""

    index: int
    kind: str
    detail: dict[str, Any]
    api_key: str | None


@attrs.frozen
class Injection:
    """A failure to inject (see ``FakeTinkerService.inject``)."""

    kind: str
    category: str
    after: str | None = None
    name: str | None = None
    since: int = 0
    """Only saves after this many recorded saves count for ``after``."""
    saved_anyway: bool = False
    """A failed save that was saved all the same (its answer says it failed)."""


@attrs.define
class Model:
    """A training model: the scripted client and the bookkeeping of its request order."""

    model_id: str
    client: ScriptedTrainingClient
    base_model: str
    lora_rank: int
    next_seq: int
    version: int = 0
    chunk: int = 0
    """The forward_backward requests since the model's last request of another kind than
    forward_backward and optim_step: the chunk of its update the latest one is."""
    arrived: set[int] = attrs.field(factory=set)
    names: list[tuple[str, str]] = attrs.field(factory=list)


@attrs.define
class Sampler:
    """A sampling session: a frozen copy of some weights."""

    session_id: str
    client: ScriptedSamplingClient
    base_model: str
    model_path: str | None
    source: tuple[str, int] | None
    """(model id, weights version) for snapshots of a training model."""


@attrs.define
class Pending:
    """A future: what ``retrieve_future`` hands out for it."""

    kind: str
    result: Callable[[], tuple[str, bytes | dict[str, Any]]]
    model_id: str | None = None
    seq_id: int | None = None
    failure: tuple[str, str] | None = None
    chunk: int = 0
    """For a forward_backward: which chunk of its update (1 for the first)."""
    loss_fn: str | None = None
    ready_at: float = 0.0
    """``time.monotonic()`` from which its result is handed out (``FakeTinkerService.latency_s``)."""


class FakeTinkerService:
    """The service's state, and the handlers of its endpoints."""

    def __init__(self, state_directory: Path, api_key: str, context_lengths: dict[str, int], responder: Any) -> None:
        self.scripted = ScriptedServiceClient(responder, seed=0, state_directory=state_directory)
        self.state_directory = state_directory
        self.api_key = api_key
        self.context_lengths = context_lengths
        self.lock = threading.RLock()
        self.arrival = threading.Condition(self.lock)
        self.events: list[Event] = []
        self.violations: list[str] = []
        self.models: dict[str, Model] = {}
        self.samplers: dict[str, Sampler] = {}
        self.futures: dict[str, Pending] = {}
        self.files: dict[str, Path] = {}
        """tinker:// path -> the scripted backend's file behind it."""
        self.ranks: dict[str, int] = {}
        """tinker:// path -> the LoRA rank of the model that saved it."""
        self.deliveries: list[dict[str, Any]] = []
        """Each forward_backward result handed out: its model, seq_id and the seq_ids arrived by then."""
        self.injected: list[Injection] = []
        self.optim_wait_s = OPTIM_WAIT_S
        self.next_chunk_wait_s = NEXT_CHUNK_WAIT_S
        self.chunks_per_update: dict[str, int] = {}
        """Loss -> the forward_backward chunks of each update with that loss (``training.num_substeps``
        for the RL loss). A chunk with a later one to come has its result held until that one's
        request arrived; losses not named have one chunk (and tests that do not check chunk
        pipelining name none)."""
        self.failed: list[Injection] = []
        self.saved: list[str] = []
        """The names of the training states saved, in order."""
        self.http = FaultState()
        """Faults at the HTTP level (``inject_http``) and the guard against a request sent twice."""
        self._taken: Injection | None = None
        self._ids = itertools.count(1)
        self.latency_s: dict[str, float] = {}
        """Seconds a request of a kind (``sample``, ``forward_backward``, ``optim_step``) takes before
        its result is handed out: sampling requests run side by side (a serving fleet), training
        requests one after another on the model's trainer (benchmarks/async_rollouts.py)."""
        self.max_staleness = 0
        """Optimizer steps a sampler's weights may be behind its model's (asynchronous rollouts,
        ``training.max_steps_off_policy``) before a sample from it is a violation."""
        self._trainer_free_at = 0.0
        self.quirks: set[str] = set()
        """How this service answers as a Tinker-compatible server of an older protocol does
        (``QUIRKS``; SkyRL 0.4.0's Tinker API, tests/tinker_wire/test_server_mismatches.py)."""

    # ------------------------------------------------------------ test hooks
    def inject(
        self,
        kind: str,
        category: str,
        *,
        after: str | None = None,
        name: str | None = None,
        saved_anyway: bool = False,
    ) -> None:
        """Fail the next request of ``kind`` (``sample``, ``forward_backward``, ``save_weights``,
        ``save_weights_for_sampler``) as a request of ``category`` (``user``, ``server``): once a
        training state named ``after`` was saved, and only a save named ``name`` when given; a
        save ``saved_anyway`` is saved although its answer says it failed."""
        with self.lock:
            injection = Injection(kind, category, after, name, since=len(self.saved), saved_anyway=saved_anyway)
            self.injected.append(injection)

    def inject_http(self, call: str, fault: str, *, times: int | None = 1, after: str | None = None) -> None:
        """Answer the next ``times`` requests of ``call`` (``http_faults.ENDPOINTS``; ``None``: every
        one) with ``fault`` (``http_faults.FAULTS`` or ``lost answer``), once a training state named
        ``after`` was saved."""
        with self.lock:
            self.http.faults.append(HttpFault(ENDPOINTS[call], fault, times, after, since=len(self.saved)))

    def take_http_fault(self, path: str) -> HttpFault | None:
        with self.lock:
            return self.http.take(path, self.saved)

    def requests(self, kind: str) -> list[Event]:
        with self.lock:
            return [e for e in self.events if e.kind == kind]

    def reset(self) -> None:
        """Forget the recorded requests (the models stay)."""
        with self.lock:
            self.events.clear()
            self.violations.clear()
            self.deliveries.clear()
            self.injected.clear()
            self.failed.clear()
            self.http.faults.clear()
            self.http.hit.clear()
            self.http.sends.clear()

    def weights_at(self, tinker_path: str) -> Any:
        with np.load(self.files[tinker_path], allow_pickle=False) as state:
            return state["weights"].copy()

    # ------------------------------------------------------------ plumbing
    def _id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def _record(self, kind: str, detail: dict[str, Any], api_key: str | None) -> Event:
        event = Event(len(self.events), kind, detail, api_key)
        self.events.append(event)
        if api_key != self.api_key:
            self.violations.append(f"{kind}: request without the API key")
        return event

    def _take_failure(self, kind: str, name: str | None = None) -> tuple[str, str] | None:
        for index, injection in enumerate(self.injected):
            if injection.kind != kind or (injection.name is not None and injection.name != name):
                continue
            if injection.after is not None and injection.after not in self.saved[injection.since :]:
                continue
            del self.injected[index]
            self.failed.append(injection)
            self._taken = injection
            return (f"injected {injection.category} failure of {kind}", injection.category)
        return None

    def _future(self, pending: Pending, model_id: str | None = None, **extra: Any) -> dict[str, Any]:
        request_id = self._id("req")
        latency = self.latency_s.get(pending.kind, 0.0)
        now = time.monotonic()
        if pending.kind in ("forward_backward", "optim_step"):  # one trainer: in turn
            self._trainer_free_at = pending.ready_at = max(now, self._trainer_free_at) + latency
        else:
            pending.ready_at = now + latency
        self.futures[request_id] = pending
        body: dict[str, Any] = {"request_id": request_id, **extra}
        if model_id is not None:
            body["model_id"] = model_id
        return body

    def _arrive(self, model: Model, seq_id: int | None, kind: str) -> None:
        if seq_id is None:
            self.violations.append(f"{kind} on {model.model_id} without a seq_id")
            return
        if seq_id != model.next_seq:
            self.violations.append(f"{kind} on {model.model_id}: seq_id {seq_id}, expected {model.next_seq}")
        model.next_seq = seq_id + 1
        model.arrived.add(seq_id)
        if kind == "forward_backward":
            model.chunk += 1
        elif kind != "optim_step":  # a checkpoint or a sampler snapshot: the update is over
            model.chunk = 0
        self.arrival.notify_all()

    # ------------------------------------------------------------ session endpoints
    def handle(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """One HTTP request: ``(status, content type, body)``."""
        api_key = headers.get("x-api-key")
        if path == "/api/v1/retrieve_future":
            return self._retrieve(json.loads(body), headers, api_key)
        with self.lock:
            key, guard_answer = guarded(self.http, path, body, headers)
            if guard_answer is not None:
                assert key is not None
                self._record("sent again", {"path": path, "model_id": key[0], "seq_id": key[1]}, api_key)
                return guard_answer
            route = ROUTES.get((method, path))
            if route is not None and key is not None:
                answer = route(self, body, headers, api_key)
                if answer[0] == 200:
                    self.http.answered[key] = answer
                return answer
            if route is None:
                match = re.fullmatch(r"/api/v1/samplers/(.+)", path)
                if method == "GET" and match:
                    return self._json(self._get_sampler(match.group(1), api_key))
                match = re.fullmatch(r"/api/v1/training_runs/(.+)/checkpoints", path)
                if method == "GET" and match:
                    return self._json(self._checkpoints(match.group(1), api_key))
                match = re.fullmatch(r"/api/v1/sessions/(.+)/finish", path)
                if method == "POST" and match:
                    self._record("finish_session", {"session_id": match.group(1), **json.loads(body or b"{}")}, api_key)
                    return self._json({})
                self._record("unknown", {"method": method, "path": path}, api_key)
                self.violations.append(f"unknown endpoint {method} {path}")
                return 404, "application/json", b'{"detail": "not found"}'
            return route(self, body, headers, api_key)

    def _checkpoints(self, model_id: str, api_key: str | None) -> dict[str, Any]:
        """``list_checkpoints``: the states and sampler weights the model saved."""
        self._record("list_checkpoints", {"model_id": model_id}, api_key)
        listed = []
        for path in self.files:
            if path.startswith(f"tinker://{model_id}/"):
                kind = "sampler" if "/sampler_weights/" in path else "training"
                listed.append(
                    {
                        "checkpoint_id": path.split("/", 3)[-1],
                        "checkpoint_type": kind,
                        "time": "2026-01-01T00:00:00Z",
                        "tinker_path": path,
                    }
                )
        return {"checkpoints": listed, "cursor": None}

    @staticmethod
    def _json(payload: dict[str, Any]) -> tuple[int, str, bytes]:
        return 200, "application/json", json.dumps(payload).encode()

    def client_config(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        self._record("client_config", json.loads(body or b"{}"), api_key)
        return self._json({})

    def quiet(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        """Dynamic config and telemetry: accepted, not recorded as events."""
        return self._json({"status": "accepted"})

    def heartbeat(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        return self._json({"type": "session_heartbeat"})

    def create_session(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        session_id = self._id("session")
        self._record("create_session", {**json.loads(body), "session_id": session_id}, api_key)
        return self._json({"type": "create_session", "session_id": session_id})

    def capabilities(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        self._record("get_server_capabilities", {}, api_key)
        models = [{"model_name": name, "max_context_length": n} for name, n in self.context_lengths.items()]
        return self._json({"supported_models": models})

    # ------------------------------------------------------------ models
    def create_model(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        request = types.CreateModelRequest.model_validate_json(body)
        model_id = f"{request.session_id}:train:{request.model_seq_id}"
        lora = request.lora_config
        self._record("create_model", {"model_id": model_id, "request": request}, api_key)
        assert lora is not None
        client = self.scripted.create_lora_training_client(
            request.base_model, lora.rank, lora.seed, lora.train_mlp, lora.train_attn, lora.train_unembed
        ).result()
        self.models[model_id] = Model(model_id, client, request.base_model, lora.rank, next_seq=1)
        pending = Pending("create_model", lambda: ("json", {"model_id": model_id, "type": "create_model"}))
        return self._json(self._future(pending, model_id))

    def get_info(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        model = self.models[json.loads(body)["model_id"]]
        self._record("get_info", {"model_id": model.model_id}, api_key)
        info = {
            "type": "get_info",
            "model_data": {"arch": "bigram", "model_name": model.base_model},
            "model_id": model.model_id,
            "is_lora": True,
            "lora_rank": model.lora_rank,
            "model_name": model.base_model,
        }
        return self._json(info)

    def load_weights(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        request = types.LoadWeightsRequest.model_validate_json(body)
        model_id = f"{request.session_id}:train:{request.model_seq_id}"
        self._record("load_weights", {"model_id": model_id, "request": request}, api_key)
        failure = None
        if request.path not in self.files or "/sampler_weights/" in request.path:
            failure = (f"{request.path} is not a training state of this service", "user")
        else:
            load = (
                self.scripted.create_training_client_from_state_with_optimizer
                if request.optimizer
                else self.scripted.create_training_client_from_state
            )
            client = load(str(self.files[request.path])).result()
            self.models[model_id] = Model(model_id, client, client.base_model, self.ranks[request.path], next_seq=1)
        pending = Pending(
            "load_weights",
            lambda: ("json", {"path": request.path, "model_id": model_id, "type": "load_weights"}),
            failure=failure,
        )
        return self._json(self._future(pending, model_id))

    def forward_backward(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        message = pb.ForwardBackwardRequest()
        message.ParseFromString(body)
        model = self.models[message.model_id]
        datums, shapes = _datums(message)
        config = {
            k: v.number if v.WhichOneof("value") == "number" else v.text for k, v in message.loss_fn_config_v2.items()
        }
        detail = {
            "model_id": model.model_id,
            "seq_id": message.seq_id,
            "loss_fn": message.loss_fn,
            "loss_fn_config": config,
            "forward_only": message.forward_only,
            "datums": shapes,
            "on_policy_gap": None,
        }
        event = self._record("forward_backward", detail, api_key)
        self._arrive(model, message.seq_id, "forward_backward")
        failure = self._take_failure("forward_backward")
        output: types.ForwardBackwardOutput | None = None
        if failure is None:
            try:
                output = model.client.forward_backward(datums, message.loss_fn, config or None).result()  # type: ignore[arg-type]
            except (ValueError, TypeError) as exc:  # data the loss cannot take: the request fails as a user error
                self.violations.append(f"forward_backward {model.model_id}#{message.seq_id}: {exc}")
                failure = (str(exc), "user")
            else:
                detail["on_policy_gap"] = _on_policy_gap(datums, output)
        result_output = output

        def result() -> tuple[str, bytes | dict[str, Any]]:
            assert result_output is not None
            if "no forward_backward metrics" in self.quirks:
                return "proto", _encode_output(dataclasses.replace(result_output, metrics={}))
            return "proto", _encode_output(result_output)

        pending = Pending(
            "forward_backward", result, model.model_id, message.seq_id, failure, model.chunk, message.loss_fn
        )
        detail["event"] = event.index
        return self._json(self._future(pending, model.model_id))

    def optim_step(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        request = types.OptimStepRequest.model_validate_json(body)
        model = self.models[request.model_id]
        self._record(
            "optim_step",
            {"model_id": model.model_id, "seq_id": request.seq_id, "params": request.optim_params},
            api_key,
        )
        self._arrive(model, request.seq_id, "optim_step")
        assert isinstance(request.optim_params, types.AdamParams)
        model.client.optim_step(request.optim_params).result()
        model.version += 1
        pending = Pending("optim_step", lambda: ("json", {"metrics": {}}), model.model_id, request.seq_id)
        return self._json(self._future(pending, model.model_id))

    def save_weights(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        request = types.SaveWeightsRequest.model_validate_json(body)
        model = self.models[request.model_id]
        name = str(request.path)
        self._record(
            "save_weights",
            {"model_id": model.model_id, "seq_id": request.seq_id, "name": name, "ttl_seconds": request.ttl_seconds},
            api_key,
        )
        self._arrive(model, request.seq_id, "save_weights")
        failure = self._take_failure("save_weights", name)
        path = f"tinker://{model.model_id}/weights/{name}"
        if failure is None or self._saves_anyway():
            if ("weights", name) in model.names:
                failure = (f"checkpoint {name} exists", "user")
            else:
                model.names.append(("weights", name))
                self.scripted.state_directory = self.state_directory / model.model_id.replace(":", "_")
                self.files[path] = Path(model.client.save_state(name).result().path)
                self.ranks[path] = model.lora_rank
                self.saved.append(name)
        pending = Pending("save_weights", lambda: ("json", {"path": path, "type": "save_weights"}), failure=failure)
        return self._json(self._future(pending, model.model_id))

    def save_weights_for_sampler(
        self, body: bytes, headers: dict[str, str], api_key: str | None
    ) -> tuple[int, str, bytes]:
        request = types.SaveWeightsForSamplerRequest.model_validate_json(body)
        model = self.models[request.model_id]
        name = request.path
        detail = {
            "model_id": model.model_id,
            "seq_id": request.seq_id,
            "name": name,
            "ttl_seconds": request.ttl_seconds,
            "kind": request.kind,
        }
        self._record("save_weights_for_sampler", detail, api_key)
        self._arrive(model, request.seq_id, "save_weights_for_sampler")
        failure = self._take_failure("save_weights_for_sampler", name) if name is not None else None
        if name is None:  # an ephemeral snapshot for a sampling client
            session_id = self._id("sampler")
            client = model.client.save_weights_and_get_sampling_client().result()
            self.samplers[session_id] = Sampler(
                session_id, client, model.base_model, None, (model.model_id, model.version)
            )
            payload: dict[str, Any] = {"sampling_session_id": session_id, "type": "save_weights_for_sampler"}
        else:
            path = f"tinker://{model.model_id}/sampler_weights/{name}"
            payload = {"path": path, "type": "save_weights_for_sampler"}
            if failure is None or self._saves_anyway():
                if ("sampler_weights", name) in model.names:
                    failure = (f"sampler checkpoint {name} exists", "user")
                else:
                    model.names.append(("sampler_weights", name))
                    self.scripted.state_directory = self.state_directory / model.model_id.replace(":", "_")
                    self.files[path] = Path(model.client.save_weights_for_sampler(name).result().path)
        pending = Pending("save_weights_for_sampler", lambda: ("json", payload), failure=failure)
        return self._json(self._future(pending, model.model_id))

    def _saves_anyway(self) -> bool:
        """True when the failure just taken is of a save that is saved all the same."""
        taken, self._taken = self._taken, None
        return taken is not None and taken.saved_anyway

    # ------------------------------------------------------------ sampling
    def create_sampling_session(
        self, body: bytes, headers: dict[str, str], api_key: str | None
    ) -> tuple[int, str, bytes]:
        request = types.CreateSamplingSessionRequest.model_validate_json(body)
        session_id = self._id("sampler")
        self._record(
            "create_sampling_session",
            {"model_path": request.model_path, "base_model": request.base_model, "session_id": session_id},
            api_key,
        )
        if request.model_path is not None:
            if "/sampler_weights/" not in request.model_path or request.model_path not in self.files:
                self.violations.append(f"sampling session on {request.model_path}, not saved sampler weights")
                return 400, "application/json", json.dumps({"detail": "not sampler weights"}).encode()
            file = self.files[request.model_path]
            client = self.scripted.create_sampling_client(model_path=str(file)).result()
            with np.load(file, allow_pickle=False) as state:
                base_model = str(state["base_model"])
        else:
            assert request.base_model is not None
            client = self.scripted.create_sampling_client(base_model=request.base_model).result()
            base_model = request.base_model
        self.samplers[session_id] = Sampler(session_id, client, base_model, request.model_path, None)
        return self._json({"type": "create_sampling_session", "sampling_session_id": session_id})

    def _get_sampler(self, session_id: str, api_key: str | None) -> dict[str, Any]:
        sampler = self.samplers[session_id]
        self._record("get_sampler", {"session_id": session_id}, api_key)
        return {"sampler_id": session_id, "base_model": sampler.base_model, "model_path": sampler.model_path}

    def asample(self, body: bytes, headers: dict[str, str], api_key: str | None) -> tuple[int, str, bytes]:
        request = types.SampleRequest.model_validate_json(body)
        assert request.sampling_session_id is not None
        sampler = self.samplers[request.sampling_session_id]
        prompt_length = request.prompt.length
        detail: dict[str, Any] = {
            "session_id": sampler.session_id,
            "params": request.sampling_params,
            "num_samples": request.num_samples,
            "prompt_length": prompt_length,
            "source": sampler.source,
        }
        self._record("sample", detail, api_key)
        if sampler.source is not None:
            model = self.models[sampler.source[0]]
            if model.version - sampler.source[1] > self.max_staleness:
                self.violations.append(
                    f"sample from a sampler of {model.model_id} at version {sampler.source[1]}, "
                    f"but its weights are at version {model.version} (no fresh sampler after an optimizer step)"
                )
        limit = self.context_lengths.get(sampler.base_model)
        if limit is not None and prompt_length + (request.sampling_params.max_tokens or 0) > limit:
            self.violations.append(f"a prompt of {prompt_length} tokens was sent beyond the context of {limit}")
        failure = self._take_failure("sample")
        response = None
        ids = [self._id("seq") for _ in range(request.num_samples)]
        if failure is None:
            response = sampler.client.sample(request.prompt, request.num_samples, request.sampling_params).result()
        sampled = response

        def result() -> tuple[str, bytes | dict[str, Any]]:
            assert sampled is not None
            return "proto", _encode_sample(sampled)

        pending = Pending("sample", result, failure=failure)
        if "no sample_sequence_ids" in self.quirks:
            return self._json(self._future(pending))
        return self._json(self._future(pending, sample_sequence_ids=ids))

    # ------------------------------------------------------------ futures
    def _retrieve(
        self, request: dict[str, Any], headers: dict[str, str], api_key: str | None
    ) -> tuple[int, str, bytes]:
        with self.lock:
            waiting = self.futures.get(request["request_id"])
        if waiting is not None and waiting.ready_at > time.monotonic():
            time.sleep(waiting.ready_at - time.monotonic())  # the lock released: other requests go on
        with self.lock:
            pending = self.futures.get(request["request_id"])
            if api_key != self.api_key:
                self.violations.append("retrieve_future without the API key")
            if pending is None:
                return 404, "application/json", b'{"detail": "unknown future"}'
            if pending.kind == "forward_backward":
                self._hold_forward_backward(pending)
            if pending.failure is not None:
                message, category = pending.failure
                return self._json({"error": message, "category": category})
            encoding, payload = pending.result()
        if encoding == "proto":
            if PROTO not in headers.get("accept", ""):
                self.violations.append(f"{pending.kind} result asked for without Accept: {PROTO}")
            assert isinstance(payload, bytes)
            return 200, PROTO, payload
        assert isinstance(payload, dict)
        return self._json(payload)

    def _hold_forward_backward(self, pending: Pending) -> None:
        """Hand out a forward_backward result only once its optim_step has arrived, and, when a
        later chunk of its update is to come, that chunk's request too: a pipelining trainer
        submits both before awaiting the result, so neither wait depends on how fast it runs."""
        assert pending.model_id is not None and pending.seq_id is not None
        model = self.models[pending.model_id]
        seq = pending.seq_id
        self._await_arrival(model, seq + 1, self.optim_wait_s)
        if seq + 1 not in model.arrived:
            self.violations.append(
                f"forward_backward {model.model_id}#{seq}: its result was awaited before optim_step was submitted"
            )
        assert pending.loss_fn is not None
        if pending.chunk < self.chunks_per_update.get(pending.loss_fn, 1):
            self._await_arrival(model, seq + 2, self.next_chunk_wait_s)
        if not any(d["model_id"] == model.model_id and d["seq_id"] == seq for d in self.deliveries):
            self.deliveries.append({"model_id": model.model_id, "seq_id": seq, "arrived": set(model.arrived)})

    def _await_arrival(self, model: Model, seq_id: int, limit_s: float) -> None:
        """Wait (the lock released) until request ``seq_id`` of ``model`` arrived, at most ``limit_s``."""
        deadline = time.monotonic() + limit_s
        while seq_id not in model.arrived and time.monotonic() < deadline:
            self.arrival.wait(deadline - time.monotonic())


ROUTES: dict[tuple[str, str], Callable[..., tuple[int, str, bytes]]] = {
    ("POST", "/api/v1/client/config"): FakeTinkerService.client_config,
    ("POST", "/api/v1/client/dynamic_config"): FakeTinkerService.quiet,
    ("POST", "/api/v1/telemetry"): FakeTinkerService.quiet,
    ("POST", "/api/v1/session_heartbeat"): FakeTinkerService.heartbeat,
    ("POST", "/api/v1/create_session"): FakeTinkerService.create_session,
    ("GET", "/api/v1/get_server_capabilities"): FakeTinkerService.capabilities,
    ("POST", "/api/v1/create_model"): FakeTinkerService.create_model,
    ("POST", "/api/v1/get_info"): FakeTinkerService.get_info,
    ("POST", "/api/v1/load_weights"): FakeTinkerService.load_weights,
    ("POST", "/api/v1/forward_backward"): FakeTinkerService.forward_backward,
    ("POST", "/api/v1/optim_step"): FakeTinkerService.optim_step,
    ("POST", "/api/v1/save_weights"): FakeTinkerService.save_weights,
    ("POST", "/api/v1/save_weights_for_sampler"): FakeTinkerService.save_weights_for_sampler,
    ("POST", "/api/v1/create_sampling_session"): FakeTinkerService.create_sampling_session,
    ("POST", "/api/v1/asample"): FakeTinkerService.asample,
}


# ------------------------------------------------------------ protobuf


def _tensor(message: pb.Tensor) -> tuple[Any, str]:
    if message.HasField("sparse_csr"):
        raise ValueError("the fake service reads dense tensors only")
    return np.frombuffer(message.dense, dtype=_NP_DTYPES[message.dtype]), _DTYPE_NAMES[message.dtype]


def _datums(message: pb.ForwardBackwardRequest) -> tuple[list[types.Datum], list[dict[str, Any]]]:
    """The request's Datums as SDK objects, and each one's loss inputs as (dtype, length)."""
    datums: list[types.Datum] = []
    shapes: list[dict[str, Any]] = []
    for datum in message.data:
        tokens: list[int] = []
        for chunk in datum.model_input:
            if chunk.WhichOneof("chunk") != "encoded_text":
                raise ValueError("the fake service reads token chunks only")
            tokens.extend(int(t) for t in np.frombuffer(chunk.encoded_text.tokens, dtype=np.int32))
        inputs: dict[str, types.TensorData] = {}
        shape: dict[str, Any] = {"model_input": len(tokens)}
        for name, tensor in datum.loss_fn_inputs.items():
            array, dtype = _tensor(tensor)
            shape[name] = (dtype, len(array))
            inputs[name] = types.TensorData(data=array.tolist(), dtype="int64" if dtype == "int64" else "float32")
        datums.append(types.Datum(model_input=types.ModelInput.from_ints(tokens), loss_fn_inputs=inputs))
        shapes.append(shape)
    return datums, shapes


def _on_policy_gap(datums: list[types.Datum], output: types.ForwardBackwardOutput) -> float | None:
    """Largest |trainer logprob − sampler logprob| over tokens that carry a sampler logprob."""
    gaps: list[float] = []
    for datum, out in zip(datums, output.loss_fn_outputs, strict=True):
        if "logprobs" not in datum.loss_fn_inputs:
            return None
        sampled = np.asarray(datum.loss_fn_inputs["logprobs"].data, dtype=np.float64)
        trained = np.asarray(out["logprobs"].data, dtype=np.float64)
        mask = sampled != 0.0
        if mask.any():
            gaps.append(float(np.abs(trained[mask] - sampled[mask]).max()))
    return max(gaps, default=0.0)


def _encode_output(output: types.ForwardBackwardOutput) -> bytes:
    arrays = [np.asarray(o["logprobs"].data, dtype=np.float32) for o in output.loss_fn_outputs]
    offsets = np.cumsum([0, *(a.nbytes for a in arrays)]).astype(np.int64)
    record = pb.ArrayRecord(type_tag="ArrayRecord", num_datums=len(arrays))
    record.fields["logprobs"].CopyFrom(
        pb.BatchedTensor(data=b"".join(a.tobytes() for a in arrays), offsets=offsets.tobytes(), dtype=pb.DTYPE_FLOAT32)
    )
    message = pb.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=[record])
    for key, value in output.metrics.items():
        message.metrics[key] = float(value)
    return message.SerializeToString()


def _encode_sample(response: types.SampleResponse) -> bytes:
    message = pb.SampleResponse()
    for sequence in response.sequences:
        message.sequences.append(
            pb.SampledSequence(
                stop_reason=pb.STOP_REASON_STOP if sequence.stop_reason == "stop" else pb.STOP_REASON_LENGTH,
                tokens=np.asarray(sequence.tokens, dtype=np.int32).tobytes(),
                logprobs=np.asarray(sequence.logprobs, dtype=np.float32).tobytes(),
            )
        )
    return message.SerializeToString()


# ------------------------------------------------------------ HTTP


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    service: FakeTinkerService

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.headers.get("content-encoding") == "zstd":
            import zstandard

            body = zstandard.ZstdDecompressor().decompress(body)
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        fault = self.service.take_http_fault(path)
        if fault is not None and fault.fault != "lost answer":
            answer_with(self, fault, self.service.http)
            return
        try:
            status, content_type, payload = self.service.handle(method, path, body, headers)
        except Exception as exc:  # a bug in the fake (or a request it cannot read): a loud 400
            with self.service.lock:
                self.service.violations.append(f"{method} {path}: {type(exc).__name__}: {exc}")
            status, content_type, payload = 400, "application/json", json.dumps({"detail": str(exc)}).encode()
        if fault is not None:  # a lost answer: handled, and the connection dropped instead of answering
            drop(self)
            return
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")


class _Server(ThreadingHTTPServer):
    """A client that went away (a call given up, a session closed) while its answer was written is
    not an error of the service; anything else is recorded as a violation."""

    service: FakeTinkerService

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            return
        with self.service.lock:
            self.service.violations.append(f"the server failed: {type(error).__name__}: {error}")


class LoopbackServer:
    """The fake service behind a threaded HTTP server on 127.0.0.1."""

    def __init__(self, service: FakeTinkerService) -> None:
        handler = type("Handler", (_Handler,), {"service": service})
        self.service = service
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.httpd.service = service
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-tinker", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.service.http.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
