"""The sampling engine: every ``sample`` request waiting at the same moment runs as one batch.

One engine thread per service client. When it wakes it takes every queued request for one
weight snapshot, prefills them together (reusing cached prefixes) and decodes all their rows
step by step. Requests that arrive while a batch runs join it at the next step (with the
fast decoder), so the N agents of a parallel round, or many debates in flight, share each
forward pass; a one-token request of another snapshot (``compute_logprobs``) runs between two
steps instead of waiting for the batch to finish. Each row has its own random generator, so a
seeded request gives the same tokens whatever else is in the batch.
"""

from __future__ import annotations

import itertools
import queue
import random
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any, Protocol, TypeAlias

import attrs
import numpy as np
import torch
from tinker import types

from debate_core.backends.local.futures import stop_at_exit
from debate_core.backends.local.sampling.prefix_cache import PrefixCache
from debate_core.backends.local.sampling.stops import StopMatcher, StopSpec
from debate_core.backends.local.threads import forget_thread_count

DecoderState: TypeAlias = Any  # Any: each decoder's own batch state (KVBatch, GenericState), opaque to the engine
"""The running batch as a decoder keeps it; only that decoder reads it."""


class Decoder(Protocol):
    """What the engine needs from a model: batched prefill, steps, and row bookkeeping."""

    supports_join: bool

    @property
    def max_positions(self) -> int: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def vocab_size(self) -> int: ...

    def prefill(
        self, prompts: Sequence[Sequence[int]], capacity: int, prefix_cache: PrefixCache
    ) -> tuple[DecoderState, torch.Tensor]: ...

    def step(self, state: DecoderState, tokens: torch.Tensor, active: torch.Tensor) -> torch.Tensor: ...

    def select(self, state: DecoderState, rows: torch.Tensor) -> DecoderState: ...

    def extend(self, state: DecoderState, other: DecoderState) -> DecoderState: ...

    def remember(self, state: DecoderState, row: int, tokens: Sequence[int], prefix_cache: PrefixCache) -> None: ...

    def prompt_logprobs(self, prompt: Sequence[int]) -> list[float | None]: ...


class SamplerSnapshot:
    """Frozen weights (inside ``decoder``), the tokenizer facts sampling needs, and the
    snapshot's own prefix cache. Shared by every sampling client made from the same save."""

    _ids = itertools.count()

    def __init__(
        self,
        decoder: Decoder,
        tokenizer: Any,  # Any: a Hugging Face tokenizer (untyped)
        byte_table: Sequence[bytes] | None,
        prefix_cache: PrefixCache,
        seed: int,
        base_model: str,
    ) -> None:
        self.decoder = decoder
        self.tokenizer = tokenizer
        self.byte_table = byte_table
        self.eos_token_id: int | None = getattr(tokenizer, "eos_token_id", None)
        self.prefix_cache = prefix_cache
        self.base_model = base_model
        self.name = f"snapshot-{next(self._ids)}"
        self._seeds = random.Random(seed)
        self._sequences = itertools.count()
        self._lock = threading.Lock()

    def next_seed(self) -> int:
        """A seed for a row whose request gave none (deterministic in request order)."""
        with self._lock:
            return self._seeds.getrandbits(63)

    def next_sequence_id(self) -> str:
        return f"{self.name}-seq-{next(self._sequences)}"

    def decode(self, tokens: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(tokens), skip_special_tokens=False))


@attrs.define(eq=False)
class SampleRequest:
    """One ``sample`` call: a prompt and ``num_samples`` rows to generate from it."""

    snapshot: SamplerSnapshot
    prompt: list[int]
    num_samples: int
    params: types.SamplingParams
    include_prompt_logprobs: bool
    future: Future[types.SampleResponse]
    prompt_logprobs: list[float | None] | None = attrs.field(init=False, default=None)
    sequences: list[types.SampledSequence | None] = attrs.field(init=False)
    remaining: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.sequences = [None] * self.num_samples
        self.remaining = self.num_samples


@attrs.define(eq=False)
class _Row:
    request: SampleRequest
    index: int
    generator: random.Random
    matcher: StopMatcher
    stop_ids: frozenset[int]
    max_tokens: int
    temperature: float
    top_k: int
    top_p: float
    tokens: list[int] = attrs.field(factory=list)
    logprobs: list[float] = attrs.field(factory=list)
    stop_reason: str | None = None


def _row_seed(seed: int, index: int) -> int:
    return (seed * 1_000_003 + index) % (1 << 63)


def choose_tokens(logits: torch.Tensor, rows: Sequence[_Row]) -> tuple[list[int], list[float]]:
    """Sample one token per row from ``logits`` ``[B, V]`` with each row's temperature, top-k,
    top-p and generator. Returns the tokens and their logprobs under the distribution they
    were drawn from (tempered and truncated); temperature 0 is greedy, with the model's own
    (temperature 1) logprob."""
    vocab = logits.shape[1]
    device = logits.device
    temperatures = [r.temperature if r.temperature > 0 else 1.0 for r in rows]
    if all(x == temperatures[0] for x in temperatures):  # the usual case: one division, or none
        scaled = logits if temperatures[0] == 1.0 else logits / temperatures[0]
    else:
        scaled = logits / torch.tensor(temperatures, device=device).unsqueeze(1)
    needs_k = [0 < r.top_k < vocab for r in rows]
    needs_p = [r.top_p < 1.0 for r in rows]
    if any(needs_k) or any(needs_p):
        ordered, order = scaled.sort(dim=1, descending=True)
        drop = torch.zeros_like(ordered, dtype=torch.bool)
        if any(needs_k):
            ks = torch.tensor([r.top_k if k else vocab for r, k in zip(rows, needs_k, strict=True)], device=device)
            drop |= torch.arange(vocab, device=device).unsqueeze(0) >= ks.unsqueeze(1)
        if any(needs_p):
            ps = torch.tensor([r.top_p if p else 1.0 for r, p in zip(rows, needs_p, strict=True)], device=device)
            probs = torch.softmax(ordered.masked_fill(drop, float("-inf")), dim=1)
            before = probs.cumsum(dim=1) - probs
            drop |= before >= ps.unsqueeze(1)
        drop[:, 0] = False
        scaled = scaled.masked_fill(torch.zeros_like(drop).scatter(1, order, drop), float("-inf"))
    logprobs = torch.log_softmax(scaled, dim=1)
    sampled = [i for i, r in enumerate(rows) if r.temperature > 0]
    tokens = logprobs.argmax(dim=1) if len(sampled) < len(rows) else None
    if sampled:
        # Inverse CDF: the first token whose cumulative probability exceeds one uniform draw
        # from the row's own generator. One Python float per row, the rest vectorised (a torch
        # generator per row, or Gumbel noise over the vocabulary, costs ~1.5 ms a step at 48 rows).
        index = torch.tensor(sampled, device=device) if tokens is not None else None
        part = logprobs if index is None else logprobs.index_select(0, index)
        exact = torch.float32 if device.type == "mps" else torch.float64  # MPS has no float64
        cdf = part.to(exact).exp().cumsum(dim=1)
        uniform = torch.tensor([rows[i].generator.random() for i in sampled], dtype=exact, device=device)
        drawn = torch.searchsorted(cdf, (uniform * cdf[:, -1]).unsqueeze(1), right=True).squeeze(1)
        drawn = drawn.clamp_(max=vocab - 1)
        tokens = drawn if tokens is None else tokens.index_copy(0, index, drawn)
    assert tokens is not None
    picked = logprobs.gather(1, tokens.unsqueeze(1)).squeeze(1)
    return tokens.tolist(), picked.tolist()


class SamplerEngine:
    """The thread that runs batched generation for every sampling client of one service client."""

    def __init__(self, max_batch_rows: int = 64, gather_seconds: float = 0.002) -> None:
        self._queue: queue.SimpleQueue[SampleRequest | None] = queue.SimpleQueue()
        self._max_rows = max_batch_rows
        self._gather = gather_seconds
        self._closed = False
        self.steps = 0
        self.largest_batch = 0
        self.busy_intervals: deque[tuple[float, float]] = deque(maxlen=1 << 16)
        """``(start, end)`` of the latest batches, ``time.perf_counter`` clock (benchmarks: the model's share)."""
        self._thread = threading.Thread(target=self._run, name="debate-local-sampler", daemon=True)
        self._thread.start()
        stop_at_exit(self)

    def submit(self, request: SampleRequest) -> None:
        if self._closed:
            request.future.set_exception(RuntimeError("the local sampler is closed"))
            return
        self._queue.put(request)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)

    def join(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the thread to finish after ``close``."""
        self._thread.join(timeout)

    # ------------------------------------------------------------------ the loop

    def _run(self) -> None:
        torch.set_flush_denormal(True)  # a per-thread CPU flag
        forget_thread_count()  # the decoder sets this thread's count per call
        pending: deque[SampleRequest] = deque()
        while True:
            if not pending:
                first = self._queue.get()
                if first is None:
                    return
                pending.append(first)
            if not self._collect(pending, wait=True):
                return
            snapshot = pending[0].snapshot
            mine = [r for r in pending if r.snapshot is snapshot]
            others = [r for r in pending if r.snapshot is not snapshot]
            pending = deque(others)
            started = time.perf_counter()
            try:
                leftover = self._generate(snapshot, mine, pending)
            except BaseException as exc:
                for request in mine:
                    if not request.future.done():
                        request.future.set_exception(exc)
                leftover = []
            self.busy_intervals.append((started, time.perf_counter()))
            pending.extendleft(reversed(leftover))

    def _collect(self, pending: deque[SampleRequest], *, wait: bool) -> bool:
        """Move queued requests into ``pending``; with ``wait``, until none arrived for a moment."""
        deadline = time.monotonic() + (self._gather if wait else 0.0)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                if not wait or time.monotonic() >= deadline:
                    return True
                time.sleep(self._gather / 4)
                continue
            if item is None:
                self._fail_all(pending, RuntimeError("the local sampler is closed"))
                return False
            pending.append(item)
            if wait:
                deadline = time.monotonic() + self._gather

    @staticmethod
    def _fail_all(requests: Sequence[SampleRequest], error: BaseException) -> None:
        for request in requests:
            if not request.future.done():
                request.future.set_exception(error)

    def _generate(
        self, snapshot: SamplerSnapshot, requests: list[SampleRequest], pending: deque[SampleRequest]
    ) -> list[SampleRequest]:
        """Run ``requests`` (and any that join) to completion; return the ones that did not fit.

        ``rows`` may hold finished rows for a while: dropping rows copies the whole cache,
        so it happens once a quarter of the batch has finished, not after every row.
        """
        decoder = snapshot.decoder
        rows: list[_Row] = []
        state: DecoderState = None
        waiting = list(requests)
        while True:
            admitted, waiting = self._take(waiting, self._max_rows - len(rows), batch_empty=not rows)
            if admitted:
                new_state, new_rows = self._admit(snapshot, admitted)
                if new_rows:
                    state = new_state if state is None else decoder.extend(state, new_state)
                    rows.extend(new_rows)
            state, rows = self._compact(decoder, state, rows)
            live = [i for i, r in enumerate(rows) if r.stop_reason is None]
            if not live:
                state, rows = None, []
                if waiting:
                    continue
                return []
            self.steps += 1
            self.largest_batch = max(self.largest_batch, len(live))
            last = torch.tensor([r.tokens[-1] for r in rows], device=decoder.device)
            active = torch.tensor([r.stop_reason is None for r in rows], device=decoder.device)
            logits = decoder.step(state, last, active)
            if len(live) < len(rows):
                logits = logits.index_select(0, torch.tensor(live, device=decoder.device))
            live_rows = [rows[i] for i in live]
            tokens, logprobs = choose_tokens(logits, live_rows)
            for i, row, token, logprob in zip(live, live_rows, tokens, logprobs, strict=True):
                if self._append(row, token, logprob):
                    self._finish(snapshot, state, i, row)
            if decoder.supports_join:
                fresh: deque[SampleRequest] = deque()
                if not self._collect(fresh, wait=False):
                    self._fail_all([r.request for r in rows] + waiting, RuntimeError("the local sampler is closed"))
                    return []
                for request in fresh:
                    if request.snapshot is snapshot:
                        waiting.append(request)
                    elif request.params.max_tokens == 1:
                        # a prefill and one token (``compute_logprobs``, a judge's verdict token):
                        # served between two steps, so that a long batch of one snapshot (debates
                        # sampled ahead) never holds up another snapshot's logprobs
                        self._generate(request.snapshot, [request], pending)
                    else:
                        pending.append(request)
            elif all(r.stop_reason is not None for r in rows):
                return waiting

    @staticmethod
    def _take(
        requests: list[SampleRequest], room: int, *, batch_empty: bool
    ) -> tuple[list[SampleRequest], list[SampleRequest]]:
        """Requests that fit in ``room`` rows, in order; a request larger than a whole batch
        still runs, alone, when the batch is empty."""
        taken: list[SampleRequest] = []
        rest: list[SampleRequest] = []
        for request in requests:
            if request.num_samples <= room or (batch_empty and not taken):
                taken.append(request)
                room -= request.num_samples
            else:
                rest.append(request)
        return taken, rest

    def _admit(self, snapshot: SamplerSnapshot, requests: list[SampleRequest]) -> tuple[DecoderState, list[_Row]]:
        """Prefill the prompts of ``requests`` (each distinct prompt once) and sample each row's first token."""
        decoder = snapshot.decoder
        valid: list[SampleRequest] = []
        for request in requests:
            problem = self._check(snapshot, request)
            if problem is not None:
                request.future.set_exception(ValueError(problem))
                continue
            if request.include_prompt_logprobs:
                request.prompt_logprobs = decoder.prompt_logprobs(request.prompt)
            valid.append(request)
        if not valid:
            return None, []
        unique: dict[tuple[int, ...], int] = {}
        for request in valid:
            unique.setdefault(tuple(request.prompt), len(unique))
        prompts = [list(p) for p in unique]
        capacity = max(len(r.prompt) + self._max_tokens(snapshot, r) for r in valid)
        state, logits = decoder.prefill(prompts, capacity, snapshot.prefix_cache)
        sources: list[int] = []
        rows: list[_Row] = []
        for request in valid:
            for index in range(request.num_samples):
                rows.append(self._new_row(snapshot, request, index))
                sources.append(unique[tuple(request.prompt)])
        if sources != list(range(len(prompts))):
            index_tensor = torch.tensor(sources, device=decoder.device)
            state = decoder.select(state, index_tensor)
            logits = logits.index_select(0, index_tensor)
        tokens, logprobs = choose_tokens(logits, rows)
        for i, (row, token, logprob) in enumerate(zip(rows, tokens, logprobs, strict=True)):
            if self._append(row, token, logprob):
                self._finish(snapshot, state, i, row)
        return state, rows

    @staticmethod
    def _max_tokens(snapshot: SamplerSnapshot, request: SampleRequest) -> int:
        room = snapshot.decoder.max_positions - len(request.prompt)
        asked = request.params.max_tokens
        return max(1, min(room, asked) if asked is not None else room)

    @staticmethod
    def _check(snapshot: SamplerSnapshot, request: SampleRequest) -> str | None:
        if not request.prompt:
            return "the prompt is empty"
        if request.num_samples < 1:
            return f"num_samples must be at least 1, got {request.num_samples}"
        if len(request.prompt) >= snapshot.decoder.max_positions:
            return (
                f"the prompt has {len(request.prompt)} tokens; this model reads at most "
                f"{snapshot.decoder.max_positions} positions"
            )
        vocab = snapshot.decoder.vocab_size
        if min(request.prompt) < 0 or max(request.prompt) >= vocab:
            return f"the prompt holds token ids outside the vocabulary [0, {vocab})"
        params = request.params
        if params.max_tokens is not None and params.max_tokens < 1:
            return f"max_tokens must be at least 1, got {params.max_tokens}"
        if params.temperature < 0:
            return f"temperature must be >= 0, got {params.temperature}"
        if not 0 < params.top_p <= 1:
            return f"top_p must be in (0, 1], got {params.top_p}"
        try:
            StopSpec.from_param(params.stop, snapshot.eos_token_id)
        except ValueError as exc:
            return str(exc)
        return None

    def _new_row(self, snapshot: SamplerSnapshot, request: SampleRequest, index: int) -> _Row:
        params = request.params
        seed = _row_seed(params.seed, index) if params.seed is not None else snapshot.next_seed()
        generator = random.Random(seed)
        spec = StopSpec.from_param(params.stop, snapshot.eos_token_id)
        return _Row(
            request=request,
            index=index,
            generator=generator,
            matcher=StopMatcher(spec, snapshot.byte_table, snapshot.decode),
            stop_ids=spec.token_ids,
            max_tokens=self._max_tokens(snapshot, request),
            temperature=float(params.temperature),
            top_k=int(params.top_k),
            top_p=float(params.top_p),
        )

    @staticmethod
    def _append(row: _Row, token: int, logprob: float) -> bool:
        """Record a sampled token; ``True`` when it ends the row."""
        row.tokens.append(token)
        row.logprobs.append(logprob)
        if token in row.stop_ids or row.matcher.add(token):
            row.stop_reason = "stop"
        elif len(row.tokens) >= row.max_tokens:
            row.stop_reason = "length"
        return row.stop_reason is not None

    @staticmethod
    def _compact(decoder: Decoder, state: DecoderState, rows: list[_Row]) -> tuple[DecoderState, list[_Row]]:
        """Drop finished rows once they are a quarter of the batch (or all of it)."""
        done = sum(r.stop_reason is not None for r in rows)
        if done == 0 or (done * 4 < len(rows)):
            return state, rows
        keep = [i for i, r in enumerate(rows) if r.stop_reason is None]
        if not keep:
            return None, []
        return decoder.select(state, torch.tensor(keep, device=decoder.device)), [rows[i] for i in keep]

    @staticmethod
    def _finish(snapshot: SamplerSnapshot, state: DecoderState, position: int, row: _Row) -> None:
        """Keep the row's keys and values for later prompts, and complete its request when it was the last row."""
        request = row.request
        snapshot.decoder.remember(state, position, request.prompt + row.tokens[:-1], snapshot.prefix_cache)
        request.sequences[row.index] = types.SampledSequence(
            stop_reason="stop" if row.stop_reason == "stop" else "length",
            sequence_id=snapshot.next_sequence_id(),
            tokens_np=np.asarray(row.tokens, dtype=np.int32),
            logprobs_np=np.asarray(row.logprobs, dtype=np.float32),
        )
        request.remaining -= 1
        if request.remaining == 0 and not request.future.done():
            array = None
            if request.prompt_logprobs is not None:
                array = np.asarray([np.nan if x is None else x for x in request.prompt_logprobs], dtype=np.float32)
            sequences = [s for s in request.sequences if s is not None]
            request.future.set_result(types.SampleResponse(sequences=sequences, prompt_logprobs_np=array))
