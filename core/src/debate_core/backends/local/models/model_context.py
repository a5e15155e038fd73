"""What the local backend can tell about a model without loading it (no torch): whether it can
load ``model.base_model`` at all, how many positions the model reads, and whether its tokenizer
has a chat template."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from debate_core.backends.local.models.gguf_files import find_gguf
from debate_core.errors import ConfigError

EMBEDDED_PREFIX = "embedded:"


def check_loadable(base_model: str) -> None:
    """Refuse a ``model.base_model`` the local backend cannot load, before anything loads: an unknown
    embedded model, a GGUF path that names no file, or a name that is not a local directory (a hub
    name such as ``Qwen/Qwen3-8B``: the local backend never downloads).

    Raises:
        ConfigError: naming the key, the value and what the local backend accepts.
    """
    if base_model.startswith(EMBEDDED_PREFIX):
        names = _embedded_specs()
        if base_model[len(EMBEDDED_PREFIX) :] not in names:
            raise ConfigError(
                f"model.base_model: no embedded model {base_model[len(EMBEDDED_PREFIX) :]!r}; the embedded models are "
                + ", ".join(f"{EMBEDDED_PREFIX}{n}" for n in sorted(names))
            )
        return
    if find_gguf(base_model) is not None:
        return
    if not Path(base_model).expanduser().is_dir():
        raise ConfigError(
            f"model.base_model: {base_model!r} is neither an embedded model ({EMBEDDED_PREFIX}<name>, e.g. "
            f"{EMBEDDED_PREFIX}debate-tiny), a GGUF file (gguf:PATH) nor a local directory; the local backend "
            "never downloads, so point it at a Hugging Face model directory on disk (config.json, weights and "
            "tokenizer files) or a .gguf file"
        )


def _embedded_specs() -> dict[str, object]:
    text = resources.files("debate_core.backends.local").joinpath("data/embedded_models.json").read_text("utf-8")
    specs = json.loads(text)
    return specs if isinstance(specs, dict) else {}


def context_positions(base_model: str) -> int | None:
    """The context length of ``base_model`` as the local backend would load it: an embedded model's
    ``max_positions``, or a model directory's ``max_position_embeddings`` (or ``n_positions``) in its
    ``config.json``. ``None`` when it cannot be told without loading the model."""
    if base_model.startswith(EMBEDDED_PREFIX):
        spec = _embedded_specs().get(base_model[len(EMBEDDED_PREFIX) :])
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


GGUF_CHAT_TEMPLATE = "tokenizer.chat_template"
"""The GGUF metadata key of the tokenizer's chat template."""


def has_chat_template(base_model: str) -> bool | None:
    """Whether the tokenizer the local backend loads for ``base_model`` has a chat template, which
    the ``hf_chat_template`` renderer needs (a base model's GGUF file often has none): a GGUF file's
    ``tokenizer.chat_template`` metadata, or a model directory's ``chat_template.jinja``,
    ``chat_template.json`` or ``tokenizer_config.json``'s ``chat_template``. ``None`` when it cannot
    be told without loading the model (an embedded model, an unreadable file, no ``gguf`` library)."""
    if base_model.startswith(EMBEDDED_PREFIX):
        return None
    gguf_file = find_gguf(base_model)
    if gguf_file is not None:
        return _gguf_has_chat_template(gguf_file)
    directory = Path(base_model).expanduser()
    if any((directory / name).is_file() for name in ("chat_template.jinja", "chat_template.json")):
        return True
    try:
        data = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return bool(data.get("chat_template")) if isinstance(data, dict) else None


def _gguf_has_chat_template(path: Path) -> bool | None:
    try:
        from gguf import GGUFReader
    except ImportError:
        return None
    try:
        return GGUF_CHAT_TEMPLATE in GGUFReader(path).fields
    except (OSError, ValueError):
        return None  # the loader says what is wrong with the file
