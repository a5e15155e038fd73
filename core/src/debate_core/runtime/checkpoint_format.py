"""The checkpoint manifest format: what ``checkpoints/step_NNNNNN.json`` holds, version by version.

A manifest is one JSON object naming a checkpoint's backend states and holding the trainer's
position and RNG states (docs/training.md#checkpoint-format). Writing always produces the current
version (:data:`FORMAT_VERSION`); reading dispatches on the version to that version's reader,
each of which returns the same :class:`Checkpoint`:

- **version 1**: no checksums. The version is the field ``format``. RNG state vectors may be JSON
  lists of integers; ``sampler_weights`` may be missing; a state path may be absolute, and an
  absolute path under some run's ``checkpoints/backend/`` means the state of that name in the run
  directory holding the manifest (the run may have been moved or copied since).
- **version 2**: version 1 plus ``files`` (``sha256:<hex>`` of every file of the states inside the
  run directory) and ``checksum`` (of the manifest's own content). States inside the run
  directory are named relative to the manifest's folder; RNG state vectors are base64 strings.
- **version 3**: version 2 with the version in the field ``format_version``.
- **version 4**: version 3 plus ``costs``: the tokens and dollars the run had used by this step
  (``training.costs.CostLedger``), from which a resumed run goes on counting.

A manifest of an unknown version, or whose version-2-or-later checksum does not match, or whose
position does not add up, is refused with :class:`CheckpointError` saying why.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import numpy as np
from numpy.typing import ArrayLike

from debate_core.errors import DebateError
from debate_core.records.json_values import JsonObject

FORMAT_VERSION = 4
"""The version every manifest is written in."""
VERSION_FIELD = "format_version"
"""The field holding the version (versions 1 and 2 wrote it as ``format``)."""
CHECKSUM_FIELD = "checksum"
"""The field holding the manifest's own checksum (version 2 on)."""

__all__ = [
    "CHECKSUM_FIELD",
    "FORMAT_VERSION",
    "VERSION_FIELD",
    "Checkpoint",
    "CheckpointError",
    "DataPosition",
    "decode_manifest",
    "encode_manifest",
    "manifest_checksum",
    "pack_integers",
    "position_problem",
    "readable_versions",
    "relative_state_path",
    "unpack_integers",
]


class CheckpointError(DebateError):
    """A checkpoint could not be read or restored."""


@attrs.frozen
class DataPosition:
    """How far the data stream has been read: stage, iterations done within it."""

    stage: int = 0
    stage_iteration: int = 0


@attrs.frozen
class Checkpoint:
    """A trainer checkpoint manifest, as read (paths absolute) or to be written.

    ``step`` counts every update phase done (warm-start steps, then RL iterations) and is the
    metrics step of the next record to write.
    """

    step: int
    warmstart_steps: int
    iteration: int
    backend_state: str
    data: DataPosition
    seed: int
    rng: JsonObject = attrs.field(factory=dict)
    created: float = attrs.field(factory=time.time)
    reason: str = "scheduled"
    sampler_weights: str | None = None
    """The backend's path of the weights saved for sampling (``None``: the checkpoint has none, as a
    version 1 manifest may; the training state is opened instead)."""
    ttl_seconds: int | None = None
    """How long the backend keeps both saves (``None``: until deleted)."""
    periodic: bool = False
    """A checkpoint of ``save_every`` that ``keep_last`` may prune (not a phase end, stop or failure)."""
    costs: JsonObject = attrs.field(factory=dict)
    """What the run had used by this step (tokens, dollars; version 4 on, ``{}`` before)."""
    files: dict[str, str] = attrs.field(factory=dict)
    """``sha256:<hex>`` of every file of the saved states inside the run directory, by path
    relative to the manifest's folder (filled in when written)."""
    format_version: int = FORMAT_VERSION
    """The version of the manifest it was read from (:data:`FORMAT_VERSION` when written)."""

    def expires_at(self) -> float | None:
        """When the backend drops this checkpoint (seconds since the epoch), ``None`` when never."""
        return None if self.ttl_seconds is None else self.created + self.ttl_seconds

    def expired(self, now: float | None = None) -> bool:
        """True once the backend may have dropped the saves this manifest names."""
        expiry = self.expires_at()
        return expiry is not None and (time.time() if now is None else now) >= expiry


def manifest_checksum(raw: JsonObject) -> str:
    """``sha256:<hex>`` of a manifest's content without its own checksum (keys sorted, compact)."""
    content = {k: v for k, v in raw.items() if k != CHECKSUM_FIELD}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()


def position_problem(checkpoint: Checkpoint) -> str | None:
    """Why a manifest's position cannot be a real one (``None`` when it adds up)."""
    counts = (checkpoint.step, checkpoint.warmstart_steps, checkpoint.iteration)
    if min(counts) < 0 or min(checkpoint.data.stage, checkpoint.data.stage_iteration) < 0:
        return "its position holds a negative count"
    if checkpoint.step != checkpoint.warmstart_steps + checkpoint.iteration:
        return (
            f"its step ({checkpoint.step}) is not warm-start steps plus RL iterations "
            f"({checkpoint.warmstart_steps} + {checkpoint.iteration})"
        )
    if checkpoint.data.stage_iteration > checkpoint.iteration:
        return f"its data position ({checkpoint.data.stage_iteration}) is past its iteration ({checkpoint.iteration})"
    return None


def pack_integers(values: ArrayLike, dtype: type[np.generic]) -> str:
    """Integers as one base64 string of their bytes (``dtype``, little-endian): how a manifest
    stores an RNG state vector."""
    return base64.b64encode(np.asarray(values, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()).decode("ascii")


def unpack_integers(packed: str, dtype: type[np.generic]) -> np.ndarray:
    """What :func:`pack_integers` packed."""
    return np.frombuffer(base64.b64decode(packed), dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype)


# ---------------------------------------------------------------- writing


def encode_manifest(checkpoint: Checkpoint, directory: Path, files: dict[str, str]) -> JsonObject:
    """The JSON object of a checkpoint in the current version, for a manifest in ``directory``:
    states inside the run directory named relative to it, ``files`` their checksums, the
    manifest's own checksum last."""
    content = attrs.asdict(
        attrs.evolve(
            checkpoint,
            backend_state=relative_state_path(directory, checkpoint.backend_state) or checkpoint.backend_state,
            sampler_weights=relative_state_path(directory, checkpoint.sampler_weights),
            files=files,
            format_version=FORMAT_VERSION,
        )
    )
    content[CHECKSUM_FIELD] = manifest_checksum(content)
    return content


def relative_state_path(directory: Path, saved: str | None) -> str | None:
    """A local path inside ``directory``'s run directory, written relative to ``directory`` (so a
    run directory can be moved or copied and still names its own states); others as given."""
    if saved is None or "://" in saved:
        return saved
    path = Path(saved)
    if not path.is_absolute():
        return saved
    run_root = directory.resolve().parent
    try:
        path.resolve().relative_to(run_root)
    except ValueError:
        return saved
    return os.path.relpath(path.resolve(), directory.resolve())


# ---------------------------------------------------------------- reading


def decode_manifest(raw: JsonObject, directory: Path) -> Checkpoint:
    """The checkpoint a manifest in ``directory`` holds, read by its version's reader; state paths
    come back absolute.

    Raises:
        CheckpointError: an unknown version, a checksum that does not match, a position that
            does not add up, or a field of the wrong shape.
    """
    version = raw.get(VERSION_FIELD, raw.get("format"))
    reader = _READERS.get(version) if isinstance(version, int) else None
    if reader is None or not isinstance(version, int):
        readable = ", ".join(str(v) for v in readable_versions())
        raise CheckpointError(f"unsupported checkpoint format version {version!r} (readable: {readable})")
    checkpoint = attrs.evolve(reader(raw, directory), format_version=version)
    problem = position_problem(checkpoint)
    if problem:
        raise CheckpointError(problem)
    return checkpoint


def readable_versions() -> tuple[int, ...]:
    """Every version a reader exists for."""
    return tuple(sorted(_READERS))


def _read_version_1(raw: JsonObject, directory: Path) -> Checkpoint:
    """No checksums; RNG vectors as lists or packed; absolute paths mean this run's own states."""
    checkpoint = _fields(raw, directory)
    return attrs.evolve(
        checkpoint,
        rng=_packed_rng(checkpoint.rng),
        backend_state=_own_state(directory, checkpoint.backend_state) or "",
        sampler_weights=_own_state(directory, checkpoint.sampler_weights),
    )


def _read_version_2(raw: JsonObject, directory: Path) -> Checkpoint:
    """Version 1 with the manifest's checksum (checked here) and its states' file checksums."""
    if raw.get(CHECKSUM_FIELD) != manifest_checksum(raw):
        raise CheckpointError("its checksum does not match its content (edited or damaged)")
    return _fields(raw, directory)


_READERS: dict[int, Callable[[JsonObject, Path], Checkpoint]] = {
    1: _read_version_1,
    2: _read_version_2,
    3: _read_version_2,  # version 3 renamed the version field only
    4: _read_version_2,  # version 4 added ``costs``, which ``_fields`` reads where present
}


def _fields(raw: JsonObject, directory: Path) -> Checkpoint:
    """The fields every version shares; relative state paths made absolute against ``directory``."""
    data = raw.get("data") or {}
    files = raw.get("files") or {}
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise CheckpointError("its 'files' is not a table of paths and checksums")
    return Checkpoint(
        step=int(raw["step"]),
        warmstart_steps=int(raw["warmstart_steps"]),
        iteration=int(raw["iteration"]),
        backend_state=_absolute_state_path(directory, str(raw["backend_state"])) or "",
        data=DataPosition(int(data.get("stage", 0)), int(data.get("stage_iteration", 0))),
        seed=int(raw["seed"]),
        rng=dict(raw.get("rng") or {}),
        created=float(raw.get("created", 0.0)),
        reason=str(raw.get("reason", "scheduled")),
        sampler_weights=_absolute_state_path(
            directory, None if raw.get("sampler_weights") is None else str(raw["sampler_weights"])
        ),
        ttl_seconds=None if raw.get("ttl_seconds") is None else int(raw["ttl_seconds"]),
        periodic=bool(raw.get("periodic", False)),
        files=dict(files),
        costs=_costs(raw.get("costs")),
    )


def _costs(raw: object) -> JsonObject:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CheckpointError("its 'costs' is not a table")
    return dict(raw)


def _absolute_state_path(directory: Path, saved: str | None) -> str | None:
    """A relative local path of a manifest, made absolute against the manifest's folder."""
    if saved is None or "://" in saved or Path(saved).is_absolute():
        return saved
    return str((directory / saved).resolve())


def _own_state(directory: Path, saved: str | None) -> str | None:
    """Version 1: an absolute path under some run's ``checkpoints/backend/`` names the state of that
    name in this run directory when it has one (a copied run must not load the original's weights)."""
    if saved is None or "://" in saved:
        return saved
    path = Path(saved)
    if path.parent.name != "backend" or path.parent.parent.name != "checkpoints":
        return saved
    own = directory / "backend" / path.name
    if own.resolve() != path.resolve() and own.exists():
        return str(own.resolve())
    return saved


_RNG_VECTORS: dict[str, tuple[int, type[np.generic]]] = {"python": (1, np.uint32), "numpy": (1, np.uint32)}
"""Where version 1 may hold an RNG state vector as a list: the state's key, its index, its dtype."""


def _packed_rng(rng: JsonObject) -> JsonObject:
    """Version 1's RNG states with every state vector packed as the later versions store it."""
    out = dict(rng)
    for key, (index, dtype) in _RNG_VECTORS.items():
        state = out.get(key)
        if isinstance(state, list) and len(state) > index and isinstance(state[index], list):
            out[key] = [*state[:index], pack_integers(state[index], dtype), *state[index + 1 :]]
    if isinstance(out.get("torch"), list):
        out["torch"] = pack_integers(out["torch"], np.uint8)
    if isinstance(out.get("torch_cuda"), list):
        out["torch_cuda"] = [pack_integers(s, np.uint8) if isinstance(s, list) else s for s in out["torch_cuda"]]
    return out
