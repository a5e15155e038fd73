"""Grouping token sequences by a shared prefix: the training client runs a group's prefix once per
forward pass, and the sampler prefills a prefix shared by several prompts of one batch once."""

from __future__ import annotations

from collections.abc import Sequence

import attrs


@attrs.frozen
class PrefixGroup:
    """Datums ``members`` (indices into the batch) whose first ``shared`` input tokens are equal."""

    shared: int
    members: tuple[int, ...]


def _common_prefix(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def group_by_prefix(sequences: Sequence[Sequence[int]], min_shared: int) -> list[PrefixGroup]:
    """Group sequences by a shared prefix of at least ``min_shared`` tokens (others alone, ``shared=0``).

    Sequences are sorted so that the ones sharing a prefix are neighbours; each group keeps
    the prefix all its members share, leaving every member at least one token of its own.
    """
    order = sorted(range(len(sequences)), key=lambda i: tuple(sequences[i]))
    groups: list[PrefixGroup] = []
    members: list[int] = []
    shared = 0
    for index in order:
        if members:
            first = sequences[members[0]]
            limit = min(shared, len(sequences[index]) - 1)
            candidate = _common_prefix(first, sequences[index], limit)
            if candidate >= min_shared:
                members.append(index)
                shared = candidate
                continue
            groups.append(PrefixGroup(shared if len(members) > 1 else 0, tuple(members)))
        members = [index]
        shared = len(sequences[index]) - 1
    if members:
        groups.append(PrefixGroup(shared if len(members) > 1 else 0, tuple(members)))
    return groups
