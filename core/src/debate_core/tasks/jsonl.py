"""Problems from a local JSON Lines file, one object per line, with a configurable field mapping
(how users bring GSM8K, MATH, AIME or LongWriter-style prompts)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import attrs
from attrs import validators as v

from debate_core.files import read_jsonl
from debate_core.records import Problem
from debate_core.tasks.errors import DatasetError
from debate_core.tasks.fields import FieldMapping, RecordSourceOptions, none_if_empty
from debate_core.tasks.math_presets import PACKAGE_PREFIX, source_folder
from debate_core.tasks.splits import check_split


@attrs.frozen(kw_only=True)
class JsonlDatasetOptions(RecordSourceOptions):
    """Options of the ``jsonl`` dataset. Relative paths are relative to the working directory."""

    path: str
    """The train file (and the test file too when ``test_fraction`` > 0): a path, or
    ``package:NAME/RELATIVE`` for a file an installed package ships (the sample of
    ``examples/seed000-tinker.toml``: ``package:debate_core/tasks/data/open_prompts.jsonl``)."""
    test_path: str | None = attrs.field(default=None, converter=none_if_empty)
    """A separate test file (a path or ``package:NAME/RELATIVE``); otherwise the last ``test_fraction``
    of ``path`` is held out."""
    test_fraction: float = attrs.field(default=0.0, validator=[v.ge(0.0), v.lt(1.0)])


def data_file(name: str) -> Path:
    """The file a ``path`` option names: a path, or ``package:NAME/RELATIVE`` inside an installed
    package (found without running its code).

    Raises:
        DatasetError: the package is not installed.
    """
    if not name.startswith(PACKAGE_PREFIX):
        return Path(name)
    package, _, relative = name[len(PACKAGE_PREFIX) :].partition("/")
    return source_folder(PACKAGE_PREFIX + package, f"jsonl dataset {name}") / relative


def read_problems(path: Path, mapping: FieldMapping) -> list[Problem]:
    """Every problem of a JSON Lines file; blank lines are skipped, a bad line is an error."""
    problems = [
        mapping.problem(record, where, f"{path.stem}-{where.rsplit(':', 1)[1]}")
        for where, record in read_jsonl(path, DatasetError, "dataset file", limit="dataset_bytes")
    ]
    if not problems:
        raise DatasetError(f"{path}: the dataset file has no records")
    return problems


class JsonlDataset:
    """Problems from JSON Lines files, read once and kept."""

    def __init__(self, options: JsonlDatasetOptions) -> None:
        self.options = options
        self._cache: dict[str, tuple[Problem, ...]] = {}

    def _load(self, split: str) -> tuple[Problem, ...]:
        o = self.options
        mapping = o.mapping()
        if o.test_path is not None:
            problems = read_problems(data_file(o.test_path if split == "test" else o.path), mapping)
        else:
            everything = read_problems(data_file(o.path), mapping)
            held_out = math.ceil(len(everything) * o.test_fraction)
            if split == "test" and held_out == 0:
                raise DatasetError(
                    f"jsonl dataset {o.path}: no test split; set dataset.options.test_path or test_fraction"
                )
            cut = len(everything) - held_out
            problems = everything[cut:] if split == "test" else everything[:cut]
            if not problems:
                raise DatasetError(f"jsonl dataset {o.path}: test_fraction {o.test_fraction} leaves no train problem")
        return tuple(problems[: o.limit] if o.limit is not None else problems)

    def check(self, splits: Sequence[str]) -> None:
        """Each split of ``splits`` read as the run will read it (``debate config check``): a
        missing file, a bad record, no test split or a ``test_fraction`` that leaves no train
        problem is found before the run starts. The problems read are kept."""
        for split in splits:
            self.problems(split)

    def problems(self, split: str) -> Sequence[Problem]:
        check_split(split, f"jsonl dataset {self.options.path}")
        if split not in self._cache:
            self._cache[split] = self._load(split)
        return self._cache[split]

    def __repr__(self) -> str:
        return f"JsonlDataset({self.options!r})"
