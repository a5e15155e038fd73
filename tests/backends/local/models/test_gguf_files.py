"""Which GGUF file a ``model.base_model`` names (docs/local-backend.md#a-gguf-file), and the
clear errors when it names none; loading one without the ``gguf`` package is a config error."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path
from typing import Any

import pytest

from debate_core.backends.local.models import gguf_files
from debate_core.backends.local.models.gguf_files import find_gguf
from debate_core.errors import ConfigError


def _file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF")
    return path


def test_a_gguf_prefix_names_a_file_or_a_directory_holding_one(tmp_path: Path) -> None:
    model = _file(tmp_path / "models" / "tiny.Q4_1.gguf")
    assert find_gguf(f"gguf:{model}") == model.resolve()
    assert find_gguf(f"gguf:{model.parent}") == model.resolve()
    assert find_gguf(str(model)) == model.resolve()  # a path ending in .gguf needs no prefix
    assert find_gguf(str(model.parent)) == model.resolve()  # nor a directory without config.json


def test_names_that_are_no_gguf_model_are_left_to_the_other_loaders(tmp_path: Path) -> None:
    hf = tmp_path / "hf"
    _file(hf / "extra.gguf")
    (hf / "config.json").write_text("{}")
    assert find_gguf(str(hf)) is None  # a Hugging Face directory, even with a .gguf beside it
    assert find_gguf("embedded:debate-tiny") is None
    assert find_gguf(str(tmp_path / "nothing-here")) is None


def test_a_directory_with_several_gguf_files_asks_for_one(tmp_path: Path) -> None:
    _file(tmp_path / "a.gguf")
    _file(tmp_path / "b.gguf")
    with pytest.raises(ConfigError, match=r"holds 2 \.gguf files \(a\.gguf, b\.gguf\); name one"):
        find_gguf(f"gguf:{tmp_path}")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match=r"holds no \.gguf file"):
        find_gguf(f"gguf:{empty}")


def test_a_missing_target_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="neither a file, a directory, nor an installed package"):
        find_gguf(f"gguf:{tmp_path / 'missing.gguf'}")
    with pytest.raises(ConfigError, match="needs a path"):
        find_gguf("gguf:")


class _Distribution:
    def __init__(self, root: Path, files: list[str]) -> None:
        self.root = root
        self.files = [Path(f) for f in files]

    def locate_file(self, path: Any) -> Path:
        return self.root / path


def test_an_installed_package_that_ships_one_gguf_file_is_found_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _file(tmp_path / "site" / "tiny_model" / "tiny.gguf")
    packages = {
        "tiny-model": _Distribution(tmp_path / "site", ["tiny_model/__init__.py", "tiny_model/tiny.gguf"]),
        "two-models": _Distribution(tmp_path / "site", ["a.gguf", "b.gguf"]),
    }

    def distribution(name: str) -> Any:
        if name not in packages:
            raise importlib.metadata.PackageNotFoundError(name)
        return packages[name]

    monkeypatch.setattr(gguf_files.importlib.metadata, "distribution", distribution)
    assert find_gguf("gguf:tiny-model") == model.resolve()
    with pytest.raises(ConfigError, match=r"ships 2 \.gguf files"):
        find_gguf("gguf:two-models")


def test_loading_a_gguf_file_without_the_gguf_package_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from debate_core.backends.local.models.loading import load_base

    model = _file(tmp_path / "tiny.gguf")
    monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf now raises ImportError
    with pytest.raises(ConfigError, match=r"needs the 'gguf' package: pip install 'debate-core\[gguf\]'"):
        load_base(f"gguf:{model}", device=torch.device("cpu"), dtype=torch.float32, init_seed=0)
