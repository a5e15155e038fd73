"""One run seed behind every random choice: data order, persona assignment, sampling seeds.

Every seed the trainer hands out is derived from the run seed and the position it is used at
(``derive_seed(seed, "train", step, debate)``), never drawn from a stateful generator, so a
resumed run draws exactly what the uninterrupted run would have drawn.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np


def _key(part: int | str) -> int:
    if isinstance(part, str):
        return zlib.crc32(part.encode("utf-8"))
    if part < 0:
        raise ValueError(f"seed parts must be >= 0, got {part}")
    return part


def derive_seed(seed: int, *parts: int | str) -> int:
    """A 31-bit seed determined by the run seed and ``parts`` (strings are hashed stably)."""
    sequence = np.random.SeedSequence([_key(seed), *(_key(p) for p in parts)])
    return int(sequence.generate_state(1, dtype=np.uint32)[0] >> 1)


def epoch_order(seed: int, stage: int | str, epoch: int, size: int) -> list[int]:
    """The order problems of a stage are visited in during one epoch (a seeded permutation)."""
    rng = np.random.default_rng(derive_seed(seed, "data", stage, epoch))
    return [int(i) for i in rng.permutation(size)]


def batch_indices(seed: int, stage: int | str, iteration: int, batch_size: int, size: int) -> list[int]:
    """The problem indices of one iteration: positions ``iteration * batch_size ...`` of the
    concatenated epochs of this stage."""
    if size <= 0:
        raise ValueError("a stage needs at least one problem")
    orders: dict[int, Sequence[int]] = {}
    out: list[int] = []
    for position in range(iteration * batch_size, (iteration + 1) * batch_size):
        epoch, index = divmod(position, size)
        if epoch not in orders:
            orders[epoch] = epoch_order(seed, stage, epoch, size)
        out.append(orders[epoch][index])
    return out
