"""Mapping records (JSON objects, dataset rows) to problems: which field holds the question,
which the answer, and how to cut the answer out of a longer text (``#### 72`` in GSM8K)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from debate_core.records import Problem
from debate_core.records.json_values import JsonMapping, JsonValue
from debate_core.tasks.errors import DatasetError


def none_if_empty(value: str | None) -> str | None:
    """``""`` means "none" in a run file (TOML has no null)."""
    return value or None


def check_regex(instance: object, attribute: attrs.Attribute[str | None], value: str | None) -> None:
    if value is None:
        return
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"'{attribute.name}' is not a valid regular expression: {exc}") from None


@attrs.frozen(kw_only=True)
class FieldMapping:
    """Where a record keeps its question, answer and id. Dotted names reach into nested
    objects (``answer.value``) and list items (``choices.0``)."""

    question_field: str = "question"
    answer_field: str | None = attrs.field(default="answer", converter=none_if_empty)
    """``None`` (``""`` in a run file) for prompts without a ground truth (non-verifiable tasks)."""
    id_field: str | None = attrs.field(default=None, converter=none_if_empty)
    """``None``: ids are the source name and the record's position."""
    answer_regex: str | None = attrs.field(default=None, converter=none_if_empty, validator=check_regex)
    """Applied to the answer text; the first group (or the whole match) is the answer, e.g.
    ``'####\\s*(.+)$'`` for GSM8K's answer field."""
    solution_field: str | None = attrs.field(default=None, converter=none_if_empty)
    """A worked solution, the warm-start's reference text (``metadata["solution"]``); GSM8K's
    ``answer`` holds one. Records without it, and runs without this option, get
    ``warmstart.solution_template``."""

    def problem(self, record: object, where: str, default_id: str) -> Problem:
        """The problem in one record; ``where`` (file and line) prefixes every error."""
        if not isinstance(record, Mapping):
            raise DatasetError(f"{where}: expected a JSON object, got {type(record).__name__}")
        question = _lookup(record, self.question_field, where)
        if not isinstance(question, str) or not question.strip():
            raise DatasetError(f"{where}: field '{self.question_field}' must be a non-empty string, got {question!r}")
        answer = None
        if self.answer_field is not None:
            raw = _lookup(record, self.answer_field, where)
            answer = None if raw is None else self._extract(_as_text(raw), where)
        problem_id = default_id if self.id_field is None else _as_text(_lookup(record, self.id_field, where))
        metadata = {"source": where}
        if self.solution_field is not None:
            try:
                solution = _lookup(record, self.solution_field, where)
            except DatasetError:  # a record without a worked solution gets the template
                solution = None
            if solution is not None and _as_text(solution).strip():
                metadata["solution"] = _as_text(solution).strip()
        return Problem(id=problem_id, question=question, answer=answer, metadata=metadata)

    def _extract(self, text: str, where: str) -> str:
        if self.answer_regex is None:
            return text.strip()
        match = re.search(self.answer_regex, text, flags=re.MULTILINE)
        if match is None:
            raise DatasetError(f"{where}: answer_regex {self.answer_regex!r} does not match the answer {text[:80]!r}")
        return (match.group(1) if match.groups() else match.group(0)).strip()


def _as_text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _lookup(record: JsonMapping, dotted: str, where: str) -> JsonValue:
    node: JsonValue = record
    for depth, part in enumerate(dotted.split(".")):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            path = ".".join(dotted.split(".")[:depth]) or "the record"
            keys = ", ".join(sorted(map(str, node))) if isinstance(node, Mapping) else type(node).__name__
            raise DatasetError(f"{where}: no field '{dotted}' ({path} has: {keys})")
    return node


@attrs.frozen(kw_only=True)
class RecordSourceOptions(FieldMapping):
    """Options shared by the datasets that read records (``jsonl``, ``huggingface``): the field
    mapping, and how many problems to take."""

    limit: int | None = attrs.field(default=None, validator=attrs.validators.optional(attrs.validators.ge(1)))
    """At most this many problems per split (the first ones)."""

    def mapping(self) -> FieldMapping:
        """The field mapping alone."""
        return FieldMapping(
            question_field=self.question_field,
            answer_field=self.answer_field,
            id_field=self.id_field,
            answer_regex=self.answer_regex,
            solution_field=self.solution_field,
        )
