"""Problems from a Hugging Face dataset through the ``datasets`` library: a dataset on the hub
(which needs the network), or local files through one of the library's builders
(``path = "json"`` with ``data_files``), which works offline."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from debate_core.records import Problem
from debate_core.tasks.errors import DatasetError
from debate_core.tasks.fields import RecordSourceOptions, none_if_empty
from debate_core.tasks.splits import check_split


@attrs.frozen(kw_only=True)
class HuggingFaceOptions(RecordSourceOptions):
    """Options of the ``huggingface`` dataset."""

    path: str
    """The dataset's name on the hub (``openai/gsm8k``), a local dataset directory, or a builder of
    the ``datasets`` library (``json``) that reads ``data_files``."""
    name: str | None = attrs.field(default=None, converter=none_if_empty)
    """The dataset's configuration (``main`` for GSM8K)."""
    train_split: str = "train"
    test_split: str | None = attrs.field(default="test", converter=none_if_empty)
    data_files: dict[str, str] = attrs.field(factory=dict)
    """Local files by split name, for a builder ``path`` (``{ train = "train.jsonl", test = "test.jsonl" }``
    with ``path = "json"``); empty: the dataset's own files."""


_NO_LIBRARY = (
    "the huggingface dataset needs the 'datasets' package: pip install datasets "
    "(or export the data to JSON Lines and use the jsonl dataset)"
)


def require_datasets_library() -> None:
    """``DatasetError`` when the ``datasets`` library is not installed (found without importing it)."""
    if importlib.util.find_spec("datasets") is None:
        raise DatasetError(_NO_LIBRARY)


def load_rows(options: HuggingFaceOptions, split_name: str) -> Any:  # Any: a `datasets` split (untyped)
    """The rows of one split through ``datasets.load_dataset``; ``DatasetError`` when the library
    is missing or the dataset cannot be loaded."""
    try:
        import datasets
    except ImportError:
        raise DatasetError(_NO_LIBRARY) from None
    try:
        if options.data_files:
            return datasets.load_dataset(options.path, options.name, split=split_name, data_files=options.data_files)
        return datasets.load_dataset(options.path, options.name, split=split_name)
    except Exception as exc:  # network, missing dataset, bad split: all reported the same way
        raise DatasetError(
            f"could not load Hugging Face dataset '{options.path}' (config {options.name!r}, split "
            f"'{split_name}'): {type(exc).__name__}: {exc}. Without network access, download it elsewhere "
            "and use the jsonl dataset"
        ) from None


class HuggingFaceDataset:
    """Problems from a Hugging Face dataset, loaded on first use of each split."""

    def __init__(self, options: HuggingFaceOptions) -> None:
        self.options = options
        self._cache: dict[str, tuple[Problem, ...]] = {}

    def _split_name(self, split: str) -> str:
        o = self.options
        check_split(split, f"huggingface dataset {o.path}")
        split_name = o.train_split if split == "train" else o.test_split
        if split_name is None:
            raise DatasetError(f"huggingface dataset {o.path}: no test split; set dataset.options.test_split")
        return split_name

    def check(self, splits: Sequence[str]) -> None:
        """What the run will read of ``splits`` without downloading (``debate config check``): the
        ``datasets`` library installed, each split named, and with ``data_files``, a file of each
        split's name that exists (a file name with a wildcard or a URL is left to the library)."""
        o = self.options
        names = [self._split_name(split) for split in splits]
        if names:
            require_datasets_library()
        for name in names if o.data_files else ():
            if name not in o.data_files:
                has = ", ".join(o.data_files)
                raise DatasetError(f"huggingface dataset {o.path}: data_files has no '{name}' split (it has: {has})")
            file = o.data_files[name]
            if not any(mark in file for mark in "*?[") and "://" not in file and not Path(file).exists():
                raise DatasetError(f"huggingface dataset {o.path}: data_files.{name}: no such file {file}")

    def problems(self, split: str) -> Sequence[Problem]:
        o = self.options
        split_name = self._split_name(split)
        if split in self._cache:
            return self._cache[split]
        mapping = o.mapping()
        problems: list[Problem] = []
        for index, row in enumerate(load_rows(o, split_name)):
            if o.limit is not None and index >= o.limit:
                break
            where = f"{o.path}[{split_name}][{index}]"
            problems.append(mapping.problem(row, where, f"{o.path.replace('/', '-')}-{split_name}-{index}"))
        self._cache[split] = tuple(problems)
        return self._cache[split]

    def __repr__(self) -> str:
        return f"HuggingFaceDataset({self.options!r})"
