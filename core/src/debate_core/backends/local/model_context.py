"""How many positions a local model reads, found in its config without loading it (no torch)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

EMBEDDED_PREFIX = "embedded:"


def context_positions(base_model: str) -> int | None:
    """The context length of ``base_model`` as the local backend would load it: an embedded model's
    ``max_positions``, or a model directory's ``max_position_embeddings`` (or ``n_positions``) in its
    ``config.json``. ``None`` when it cannot be told without loading the model."""
    if base_model.startswith(EMBEDDED_PREFIX):
        text = resources.files("debate_core.backends.local").joinpath("data/embedded_models.json").read_text("utf-8")
        spec = json.loads(text).get(base_model[len(EMBEDDED_PREFIX) :])
        return int(spec["max_positions"]) if isinstance(spec, dict) else None
    config = Path(base_model) / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    value = data.get("max_position_embeddings") or data.get("n_positions")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
