"""Trainer checkpoints on disk: written so that a crash never breaks resuming, found, verified, pruned.

A checkpoint is three things: the backend's saved state (weights and optimizer, written by
``save_state``), the same weights saved for sampling (``save_weights_for_sampler``: what
``debate eval --checkpoint`` and ``debate run --checkpoint`` open, without a training model),
and a JSON manifest ``checkpoints/step_NNNNNN.json`` that points to both and holds the trainer's
position (warm-start steps and RL iterations done, the data position) and every RNG state
(Python, NumPy, and torch when it is loaded, each as one base64 string so that a manifest stays
a few lines long). The manifest is written last, through a temporary file and a rename, so a
manifest exists only for a complete checkpoint. ``training.keep_last`` prunes old periodic
checkpoints (:func:`prune_checkpoints`): the manifest goes first, then the backend states it named.

A manifest carries the SHA-256 of every file of the states it names that lie in the run
directory (``files``) and the SHA-256 of its own content (``checksum``): a checkpoint is *intact*
when its manifest reads back whole, its own checksum matches, its position adds up and every
file matches (:func:`verify_checkpoint`). Resuming and ``--checkpoint RUN_DIR`` take the newest
intact checkpoint (:func:`scan_checkpoints` says which newer ones were damaged and why). States
on a remote backend (``tinker://...``) are covered by the manifest's own checksum only.
What a manifest holds, version by version, is :mod:`debate_core.runtime.checkpoint_format`.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sys
from pathlib import Path

import attrs
import numpy as np

from debate_core.errors import DebateError
from debate_core.files import atomic_write_json
from debate_core.limits import loads_json, read_limited_text
from debate_core.records.json_values import JsonObject
from debate_core.runtime.checkpoint_format import (
    Checkpoint,
    CheckpointError,
    decode_manifest,
    encode_manifest,
    pack_integers,
    relative_state_path,
    unpack_integers,
)

MANIFEST_PREFIX = "step_"


def file_checksum(path: Path) -> str:
    """``sha256:<hex>`` of one file's bytes."""
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def _state_files(directory: Path, saved: str | None) -> dict[str, str]:
    """Checksums of the files of one saved state inside the run directory, by path relative to
    ``directory`` (the manifests' folder); remote states and states elsewhere give none."""
    if saved is None or "://" in saved:
        return {}
    state = (directory / saved) if not Path(saved).is_absolute() else Path(saved)
    run_root = directory.resolve().parent
    try:
        state.resolve().relative_to(run_root)
    except ValueError:
        return {}
    files = sorted(p for p in state.rglob("*") if p.is_file()) if state.is_dir() else [state]
    return {
        Path(os.path.relpath(f.resolve(), directory.resolve())).as_posix(): file_checksum(f)
        for f in files
        if f.exists()
    }


def capture_rng_state() -> JsonObject:
    """Every process-wide RNG state, as JSON-ready data (state vectors as base64 strings)."""
    version, state, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    captured: JsonObject = {
        "python": [version, pack_integers(state, np.uint32), gauss],
        "numpy": [name, pack_integers(keys, np.uint32), int(pos), int(has_gauss), float(cached)],
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        captured["torch"] = pack_integers(torch.random.get_rng_state().numpy(), np.uint8)
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            captured["torch_cuda"] = [pack_integers(s.numpy(), np.uint8) for s in torch.cuda.get_rng_state_all()]
    return captured


def restore_rng_state(captured: JsonObject) -> None:
    """Put back what :func:`capture_rng_state` captured (torch only when it is loaded)."""
    if "python" in captured:
        version, state, gauss = captured["python"]
        random.setstate((version, tuple(int(x) for x in unpack_integers(state, np.uint32)), gauss))
    if "numpy" in captured:
        name, keys, pos, has_gauss, cached = captured["numpy"]
        np.random.set_state((name, unpack_integers(keys, np.uint32), pos, has_gauss, cached))
    torch = sys.modules.get("torch")
    if torch is not None and "torch" in captured:
        torch.random.set_rng_state(torch.tensor(unpack_integers(captured["torch"], np.uint8).copy(), dtype=torch.uint8))
        if "torch_cuda" in captured and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(
                [torch.tensor(unpack_integers(s, np.uint8).copy(), dtype=torch.uint8) for s in captured["torch_cuda"]]
            )


def manifest_path(directory: Path, step: int) -> Path:
    """``checkpoints/step_000012.json``."""
    return directory / f"{MANIFEST_PREFIX}{step:06d}.json"


def write_checkpoint(directory: Path, checkpoint: Checkpoint) -> Path:
    """Write a manifest atomically; the backend state it names must already be saved. Paths of
    states inside the run directory are stored relative to ``directory``."""
    path = manifest_path(directory, checkpoint.step)
    files: dict[str, str] = {}
    for saved in (checkpoint.backend_state, checkpoint.sampler_weights):
        files |= _state_files(directory, relative_state_path(directory, saved))
    atomic_write_json(path, encode_manifest(checkpoint, directory, files))
    return path


def list_checkpoints(directory: Path) -> list[Checkpoint]:
    """Every readable manifest in ``directory``, oldest step first."""
    found: list[Checkpoint] = []
    for path in manifest_paths(directory):
        try:
            found.append(read_checkpoint(path))
        except CheckpointError:
            continue
    return sorted(found, key=lambda c: c.step)


def prune_checkpoints(directory: Path, keep_last: int, keep_steps: set[int], state_root: Path) -> list[Checkpoint]:
    """Delete the periodic checkpoints older than the newest ``keep_last`` ones (0: prune nothing).

    Kept whatever their age: checkpoints that are not periodic (phase ends, stops, failures) and
    those of ``keep_steps`` (the best evaluation's). A pruned checkpoint's manifest is deleted
    first, so resuming never finds a manifest without its state, then its backend state when it
    lies inside ``state_root`` (states elsewhere, ``tinker://`` ones included, are left alone).
    Returns the pruned checkpoints.
    """
    if keep_last <= 0:
        return []
    periodic = [c for c in list_checkpoints(directory) if c.periodic]
    pruned = [c for c in periodic[: max(len(periodic) - keep_last, 0)] if c.step not in keep_steps]
    root = state_root.resolve()
    for checkpoint in pruned:
        manifest_path(directory, checkpoint.step).unlink(missing_ok=True)
        for saved in (checkpoint.backend_state, checkpoint.sampler_weights):
            if saved is None or "://" in saved:
                continue
            state = Path(saved).resolve()
            if state == root or root not in state.parents:
                continue
            if state.is_dir():
                shutil.rmtree(state, ignore_errors=True)
            else:
                state.unlink(missing_ok=True)
    return pruned


def read_checkpoint(path: Path) -> Checkpoint:
    """Read one manifest, checking its own checksum and that its position adds up (not the
    files it names: :func:`verify_checkpoint`)."""
    try:
        raw = loads_json(read_limited_text(path, "checkpoint manifest"))
        if not isinstance(raw, dict):
            raise TypeError("not a JSON object")
        return decode_manifest(raw, path.parent)
    except CheckpointError as exc:
        raise CheckpointError(f"{path}: {exc}") from exc
    except DebateError as exc:  # missing, too long, not UTF-8: the message names the file
        raise CheckpointError(str(exc)) from exc
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from exc


def _state_is_present(backend_state: str) -> bool:
    """For states on this machine (plain paths), the file must exist; remote paths are trusted."""
    if "://" in backend_state:
        return True
    return Path(backend_state).exists()


def verify_checkpoint(path: Path) -> Checkpoint:
    """Read one manifest and check the files of the states it names against its checksums.

    Raises:
        CheckpointError: naming the manifest or the first missing or damaged file.
    """
    checkpoint = read_checkpoint(path)
    if not _state_is_present(checkpoint.backend_state):
        raise CheckpointError(f"{path}: its backend state {checkpoint.backend_state} is missing")
    for name, expected in sorted(checkpoint.files.items()):
        file = path.parent / name
        try:
            actual = file_checksum(file)
        except OSError as exc:
            raise CheckpointError(f"{file}: missing or unreadable ({exc.strerror or exc})") from exc
        if actual != expected:
            raise CheckpointError(f"{file}: damaged (its checksum does not match {path.name})")
    return checkpoint


@attrs.frozen
class RejectedCheckpoint:
    """A manifest newer than the checkpoint chosen, and why it was not used."""

    path: Path
    reason: str


@attrs.frozen
class CheckpointScan:
    """The newest intact checkpoint of a folder and the newer manifests that were not intact."""

    intact: Checkpoint | None
    intact_path: Path | None
    rejected: tuple[RejectedCheckpoint, ...] = ()


def _manifest_step(path: Path) -> int | None:
    """The step a manifest's file name gives (``step_000012.json`` -> 12)."""
    digits = path.stem.removeprefix(MANIFEST_PREFIX)
    return int(digits) if digits.isdigit() else None


def manifest_paths(directory: Path) -> list[Path]:
    """Every ``step_NNNNNN.json`` in ``directory``, newest step first."""
    if not directory.is_dir():
        return []
    found = [p for p in directory.glob(f"{MANIFEST_PREFIX}*.json") if _manifest_step(p) is not None]
    return sorted(found, key=lambda p: _manifest_step(p) or 0, reverse=True)


def scan_checkpoints(directory: Path) -> CheckpointScan:
    """The newest intact checkpoint in ``directory`` (verified file by file), with the reason
    each newer manifest was passed over."""
    rejected: list[RejectedCheckpoint] = []
    for path in manifest_paths(directory):
        try:
            checkpoint = verify_checkpoint(path)
        except CheckpointError as exc:
            rejected.append(RejectedCheckpoint(path, str(exc)))
            continue
        if checkpoint.step != _manifest_step(path):
            rejected.append(RejectedCheckpoint(path, f"{path}: it holds step {checkpoint.step}, not its name's"))
            continue
        return CheckpointScan(checkpoint, path, tuple(rejected))
    return CheckpointScan(None, None, tuple(rejected))


def latest_checkpoint(directory: Path) -> Checkpoint | None:
    """The newest intact checkpoint in ``directory``; damaged or unreadable ones are skipped."""
    return scan_checkpoints(directory).intact


def load_checkpoint_argument(path: Path) -> Checkpoint:
    """A checkpoint named on the command line: a manifest file, a ``checkpoints/`` folder or a
    run directory (its newest checkpoint, which must be intact: a damaged one is named, with
    the newest intact one to name instead)."""
    if path.is_file():
        return verify_checkpoint(path)
    for directory in (path, path / "checkpoints"):
        scan = scan_checkpoints(directory)
        if scan.rejected:
            instead = f"; the newest intact one is {scan.intact_path}" if scan.intact_path else ""
            raise CheckpointError(f"{scan.rejected[0].reason}{instead}")
        if scan.intact is not None:
            return scan.intact
    raise CheckpointError(f"{path}: no checkpoint found (expected a step_*.json manifest, or a run directory)")


def resolve_state_path(path: str) -> str:
    """The backend state a checkpoint argument names: a trainer manifest (``checkpoints/step_*.json``)
    or a run directory resolve to the backend path they record; anything else (``tinker://...``,
    a local backend's state folder) is passed on as given."""
    if "://" in path:
        return path
    candidate = Path(path)
    is_manifest = candidate.is_file() and candidate.suffix == ".json"
    is_run = candidate.is_dir() and ((candidate / "checkpoints").is_dir() or candidate.name == "checkpoints")
    if not (is_manifest or is_run):
        return path
    return load_checkpoint_argument(candidate).backend_state
