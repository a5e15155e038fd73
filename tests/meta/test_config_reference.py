"""docs/config-reference.md is generated from the attrs classes; keep them in step."""

from __future__ import annotations

from pathlib import Path

import attrs

from debate_core.config import RunConfig
from debate_core.config.reference import config_reference_markdown, field_docs

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "config-reference.md"


def test_reference_page_matches_the_schema() -> None:
    assert REFERENCE.read_text() == config_reference_markdown(), (
        "docs/config-reference.md is stale: run `debate config reference > docs/config-reference.md`"
    )


def test_every_setting_is_documented() -> None:
    def walk(cls: type) -> list[str]:
        missing = []
        docs = field_docs(cls)
        for field in attrs.fields(cls):
            target = field.type
            if (
                isinstance(target, type)
                and attrs.has(target)
                and target.__module__.startswith("debate_core")
                and target.__name__ != "ComponentChoice"
            ):
                missing += walk(target)
                continue
            if field.name not in docs and cls is not RunConfig:
                missing.append(f"{cls.__name__}.{field.name}")
        return missing

    import typing

    hints = typing.get_type_hints(RunConfig)
    undocumented: list[str] = []
    for field in attrs.fields(RunConfig):
        target = hints[field.name]
        target = typing.get_args(target)[0] if typing.get_origin(target) is tuple else target
        if attrs.has(target) and target.__name__ != "ComponentChoice":
            undocumented += walk(target)
    assert undocumented == []
