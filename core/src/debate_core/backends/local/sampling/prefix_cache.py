"""A cache of computed keys and values keyed by token prefix, owned by one weight snapshot.

In a debate an agent's prompt at round ``r + 1`` usually starts with its prompt and answer
of round ``r`` (and every prompt of a run starts with the same system text), so most of
a new prompt's keys and values were already computed by this snapshot. A lookup returns
the longest cached prefix of a prompt; only the rest is run through the model.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import attrs
import numpy as np
import torch


@attrs.frozen
class CachedPrefix:
    """Keys and values ``[layers, kv_heads, length, head_dim]`` of the first ``length`` tokens."""

    tokens: np.ndarray
    keys: torch.Tensor
    values: torch.Tensor

    @property
    def length(self) -> int:
        return int(self.tokens.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.keys.element_size() * (self.keys.numel() + self.values.numel()))


class PrefixCache:
    """Least-recently-used entries, bounded in bytes; ``capacity_bytes == 0`` turns it off."""

    def __init__(self, capacity_bytes: int, min_length: int = 8) -> None:
        self._capacity = capacity_bytes
        self._min_length = min_length
        self._entries: OrderedDict[int, CachedPrefix] = OrderedDict()
        self._bytes = 0
        self._next_id = 0
        self._lock = threading.Lock()
        self.hit_tokens = 0
        self.computed_tokens = 0

    @property
    def enabled(self) -> bool:
        return self._capacity > 0

    def lookup(self, prompt: Sequence[int]) -> tuple[CachedPrefix | None, int]:
        """The entry sharing the longest prefix with ``prompt`` and that length, at most ``len(prompt) - 1``.

        At least one prompt token is always left to compute: its output gives the first
        sampled token's distribution.
        """
        if not self.enabled or len(prompt) < 2:
            return None, 0
        query = np.asarray(prompt, dtype=np.int64)
        limit = len(prompt) - 1
        best: tuple[int, int] | None = None
        with self._lock:
            for key, entry in self._entries.items():
                n = min(entry.length, limit)
                if n < self._min_length or (best is not None and n <= best[1]):
                    continue
                mismatch = np.flatnonzero(entry.tokens[:n] != query[:n])
                shared = int(mismatch[0]) if mismatch.size else n
                if shared >= self._min_length and (best is None or shared > best[1]):
                    best = (key, shared)
            if best is None:
                return None, 0
            self._entries.move_to_end(best[0])
            return self._entries[best[0]], best[1]

    def store(self, tokens: Sequence[int], keys: torch.Tensor, values: torch.Tensor) -> None:
        """Add the keys and values of ``tokens``; evicts the least recently used entries to fit.

        An entry that is a prefix of the new one is dropped (the new one answers every lookup
        it would), and nothing is added when an entry already covers ``tokens``.
        """
        if not self.enabled or len(tokens) < self._min_length:
            return
        entry = CachedPrefix(np.asarray(tokens, dtype=np.int64), keys, values)
        if entry.nbytes > self._capacity:
            return
        with self._lock:
            for key, old in list(self._entries.items()):
                n = min(old.length, entry.length)
                if not np.array_equal(old.tokens[:n], entry.tokens[:n]):
                    continue
                if old.length >= entry.length:
                    self._entries.move_to_end(key)
                    return
                del self._entries[key]
                self._bytes -= old.nbytes
            self._entries[self._next_id] = entry
            self._next_id += 1
            self._bytes += entry.nbytes
            while self._bytes > self._capacity and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
