"""Saved states of the local backend (``save_state``, ``save_weights_for_sampler``): a directory of
safetensors and JSON, never pickle.

```
<name>/
  state.json              what was saved: base model, fine-tuning mode, optimizer step, names
  weights.safetensors     the trained weights (every weight for full fine-tuning, the adapters for LoRA)
  optimizer.safetensors   AdamW's first and second moments per weight (``save_state`` only)
  tokenizer.json          the embedded tokenizer, when the base model is an embedded one
```

A directory is written under a temporary name and renamed into place, so a crash never
leaves a half-written checkpoint behind a valid name.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import attrs
import torch
from safetensors.torch import load_file, save_file

from debate_core.errors import DebateError
from debate_core.files import atomic_directory, write_failure
from debate_core.records.json_values import JsonObject

FORMAT = "debate-core-local/1"
STATE_FILE = "state.json"
WEIGHTS_FILE = "weights.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
TOKENIZER_FILE = "tokenizer.json"


class SavedStateError(DebateError):
    """A checkpoint is missing, incomplete, or does not fit the model it is loaded into."""


@attrs.frozen(kw_only=True)
class SavedState:
    """What a checkpoint directory holds, read back."""

    path: Path
    meta: JsonObject
    weights: dict[str, torch.Tensor]
    optimizer: dict[str, torch.Tensor] | None
    tokenizer_json: str | None


def write_state(
    path: Path,
    *,
    meta: JsonObject,
    weights: dict[str, torch.Tensor],
    optimizer: dict[str, torch.Tensor] | None,
    tokenizer_json: str | None,
    overwrite: bool,
) -> Path:
    """Write a checkpoint directory atomically; refuses to replace one unless ``overwrite``."""
    path = path.expanduser().resolve()
    if path.exists() and not overwrite:
        raise SavedStateError(f"checkpoint {path} already exists (pass overwrite=True to replace it)")
    with atomic_directory(path) as staging:
        _save_tensors(weights, staging / WEIGHTS_FILE, path / WEIGHTS_FILE)
        if optimizer is not None:
            _save_tensors(optimizer, staging / OPTIMIZER_FILE, path / OPTIMIZER_FILE)
        if tokenizer_json is not None:
            (staging / TOKENIZER_FILE).write_text(tokenizer_json, encoding="utf-8")
        full_meta = {"format": FORMAT, **meta, "has_optimizer": optimizer is not None}
        (staging / STATE_FILE).write_text(json.dumps(full_meta, indent=2, sort_keys=True), encoding="utf-8")
    return path


_OS_ERROR_CODE = re.compile(r"\(os error (\d+)\)|\bcode: (\d+)")
"""How safetensors' Rust writer names the system error of a failed write (``... File too large
(os error 27)``, or ``IoError(Os { code: 28, ... })`` in older versions)."""


def _save_tensors(tensors: dict[str, torch.Tensor], file: Path, shown: Path) -> None:
    """``save_file`` to ``file``; a write the system refuses (a full disk, a quota) becomes
    ``OutputWriteError`` naming ``shown`` (the file's final path), as every other file of a run
    does, so that the run ends with the resume command (docs/training.md#a-full-disk)."""
    try:
        save_file(_cpu_contiguous(tensors), str(file))
    except OSError as exc:
        raise write_failure(shown, exc) from exc
    except Exception as exc:  # safetensors reports a failed write as its own SafetensorError
        found = _OS_ERROR_CODE.search(str(exc))
        if found is None:
            raise
        code = int(found.group(1) or found.group(2))
        raise write_failure(shown, OSError(code, os.strerror(code))) from exc


def read_state(path: str | Path, *, with_optimizer: bool) -> SavedState:
    """Read a checkpoint directory; every problem is a ``SavedStateError`` naming the path."""
    directory = Path(str(path).removeprefix("local://")).expanduser()
    state_file = directory / STATE_FILE
    if not state_file.is_file():
        raise SavedStateError(f"{directory} is not a local-backend checkpoint (no {STATE_FILE})")
    try:
        meta = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SavedStateError(f"{state_file} cannot be read: {exc}") from None
    if meta.get("format") != FORMAT:
        raise SavedStateError(f"{state_file}: format {meta.get('format')!r} is not {FORMAT!r}")
    try:
        weights = load_file(str(directory / WEIGHTS_FILE))
    except (OSError, Exception) as exc:  # safetensors raises its own error type
        raise SavedStateError(f"{directory / WEIGHTS_FILE} cannot be read: {exc}") from None
    optimizer = None
    if with_optimizer:
        if not meta.get("has_optimizer"):
            raise SavedStateError(
                f"{directory} holds weights only (saved for sampling); resume needs a checkpoint from save_state"
            )
        try:
            optimizer = load_file(str(directory / OPTIMIZER_FILE))
        except (OSError, Exception) as exc:
            raise SavedStateError(f"{directory / OPTIMIZER_FILE} cannot be read: {exc}") from None
    tokenizer_file = directory / TOKENIZER_FILE
    tokenizer_json = tokenizer_file.read_text(encoding="utf-8") if tokenizer_file.is_file() else None
    return SavedState(
        path=directory.resolve(), meta=meta, weights=weights, optimizer=optimizer, tokenizer_json=tokenizer_json
    )


def _cpu_contiguous(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: t.detach().to("cpu").contiguous() for name, t in tensors.items()}
