"""Trainer checkpoints: where the run is, written so that a crash never breaks resuming.

A checkpoint is three things: the backend's saved state (weights and optimizer, written by
``save_state``), the same weights saved for sampling (``save_weights_for_sampler``: what
``debate eval --checkpoint`` and ``debate run --checkpoint`` open, without a training model),
and a JSON manifest ``checkpoints/step_NNNNNN.json`` that points to both and holds the trainer's
position (warm-start steps and RL iterations done, the data position)
and every RNG state (Python, NumPy, and torch when it is loaded). The manifest is written
last, through a temporary file and a rename, so a manifest exists only for a complete
checkpoint; resuming picks the newest manifest that reads back whole.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from debate_core.errors import DebateError

FORMAT_VERSION = 1
MANIFEST_PREFIX = "step_"


class CheckpointError(DebateError):
    """A checkpoint could not be read or restored."""


@attrs.frozen
class DataPosition:
    """How far the data stream has been read: stage, iterations done within it."""

    stage: int = 0
    stage_iteration: int = 0


@attrs.frozen
class Checkpoint:
    """A trainer checkpoint manifest.

    ``step`` counts every update phase done (warm-start steps, then RL iterations) and is the
    metrics step of the next record to write.
    """

    step: int
    warmstart_steps: int
    iteration: int
    backend_state: str
    data: DataPosition
    seed: int
    rng: dict[str, Any] = attrs.field(factory=dict)
    created: float = attrs.field(factory=time.time)
    reason: str = "scheduled"
    sampler_weights: str | None = None
    """The backend's path of the weights saved for sampling (``None`` in manifests written before
    sampler weights were saved: the training state is opened instead)."""
    ttl_seconds: int | None = None
    """How long the backend keeps both saves (``None``: until deleted)."""
    format: int = FORMAT_VERSION

    def expires_at(self) -> float | None:
        """When the backend drops this checkpoint (seconds since the epoch), ``None`` when never."""
        return None if self.ttl_seconds is None else self.created + self.ttl_seconds

    def expired(self, now: float | None = None) -> bool:
        """True once the backend may have dropped the saves this manifest names."""
        expiry = self.expires_at()
        return expiry is not None and (time.time() if now is None else now) >= expiry

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Checkpoint:
        if raw.get("format") != FORMAT_VERSION:
            raise CheckpointError(f"unsupported checkpoint format {raw.get('format')!r}")
        data = raw.get("data") or {}
        return cls(
            step=int(raw["step"]),
            warmstart_steps=int(raw["warmstart_steps"]),
            iteration=int(raw["iteration"]),
            backend_state=str(raw["backend_state"]),
            data=DataPosition(int(data.get("stage", 0)), int(data.get("stage_iteration", 0))),
            seed=int(raw["seed"]),
            rng=dict(raw.get("rng") or {}),
            created=float(raw.get("created", 0.0)),
            reason=str(raw.get("reason", "scheduled")),
            sampler_weights=None if raw.get("sampler_weights") is None else str(raw["sampler_weights"]),
            ttl_seconds=None if raw.get("ttl_seconds") is None else int(raw["ttl_seconds"]),
        )


def capture_rng_state() -> dict[str, Any]:
    """Every process-wide RNG state, as JSON-ready data."""
    version, state, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    captured: dict[str, Any] = {
        "python": [version, list(state), gauss],
        "numpy": [name, [int(k) for k in keys], int(pos), int(has_gauss), float(cached)],
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        captured["torch"] = [int(b) for b in torch.random.get_rng_state().tolist()]
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            captured["torch_cuda"] = [[int(b) for b in s.tolist()] for s in torch.cuda.get_rng_state_all()]
    return captured


def restore_rng_state(captured: dict[str, Any]) -> None:
    """Put back what :func:`capture_rng_state` captured (torch only when it is loaded)."""
    if "python" in captured:
        version, state, gauss = captured["python"]
        random.setstate((version, tuple(state), gauss))
    if "numpy" in captured:
        name, keys, pos, has_gauss, cached = captured["numpy"]
        np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch = sys.modules.get("torch")
    if torch is not None and "torch" in captured:
        torch.random.set_rng_state(torch.tensor(captured["torch"], dtype=torch.uint8))
        if "torch_cuda" in captured and torch.cuda.is_available():
            torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8) for s in captured["torch_cuda"]])


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON through a temporary file in the same folder, fsync, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def manifest_path(directory: Path, step: int) -> Path:
    """``checkpoints/step_000012.json``."""
    return directory / f"{MANIFEST_PREFIX}{step:06d}.json"


def write_checkpoint(directory: Path, checkpoint: Checkpoint) -> Path:
    """Write a manifest atomically; the backend state it names must already be saved."""
    path = manifest_path(directory, checkpoint.step)
    atomic_write_json(path, checkpoint.to_json())
    return path


def read_checkpoint(path: Path) -> Checkpoint:
    """Read one manifest."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Checkpoint.from_json(raw)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint ({exc})") from exc


def _state_is_present(backend_state: str) -> bool:
    """For states on this machine (plain paths), the file must exist; remote paths are trusted."""
    if "://" in backend_state:
        return True
    return Path(backend_state).exists()


def latest_checkpoint(directory: Path) -> Checkpoint | None:
    """The newest complete checkpoint in ``directory``; unreadable manifests are skipped."""
    if not directory.is_dir():
        return None
    candidates = sorted(directory.glob(f"{MANIFEST_PREFIX}*.json"), reverse=True)
    for path in candidates:
        try:
            checkpoint = read_checkpoint(path)
        except CheckpointError:
            continue
        if _state_is_present(checkpoint.backend_state):
            return checkpoint
    return None


def load_checkpoint_argument(path: Path) -> Checkpoint:
    """A checkpoint named on the command line: a manifest file, a ``checkpoints/`` folder or a run directory."""
    if path.is_file():
        return read_checkpoint(path)
    for directory in (path, path / "checkpoints"):
        found = latest_checkpoint(directory)
        if found is not None:
            return found
    raise CheckpointError(f"{path}: no checkpoint found (expected a step_*.json manifest, or a run directory)")
