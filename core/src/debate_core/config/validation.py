"""The components a run file chooses, checked against a catalog of installed components.

The catalog is passed in (it is the plugin registry, which lives in a higher layer), so the
configuration never reaches up to the plugin system by itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, TypeVar

import tomli_w

from debate_core.config.choices import ComponentChoice, nested_choices
from debate_core.config.sections import RunConfig
from debate_core.config.structuring import unstructure
from debate_core.errors import ConfigError, DebateError
from debate_core.files import atomic_write_text
from debate_core.records.json_values import JsonMapping, JsonObject, JsonValue

SpecT = TypeVar("SpecT")


class ComponentCatalog(Protocol[SpecT]):
    """What the configuration needs of the plugin registry: find a component, structure its options."""

    def resolve(self, kind: str, name: str) -> SpecT: ...

    def structure_options(self, spec: SpecT, options: JsonMapping | None, path: str = "") -> object: ...


def component_choices(config: RunConfig) -> Iterator[tuple[str, str, ComponentChoice]]:
    """Every component a run file picks: ``(key path, kind, choice)``."""
    yield "backend", "backend", config.backend
    yield "debate.coordinator", "coordinator", config.debate.coordinator
    yield "debate.parser", "parser", config.debate.parser
    yield "debate.persona_set", "persona_set", config.debate.persona_set
    yield "debate.history_policy", "history_policy", config.debate.history_policy
    yield "debate.renderer", "renderer", config.debate.renderer
    yield "debate.final_answer", "answer_rule", config.debate.final_answer
    yield "reward", "reward", config.reward
    yield "dataset", "dataset", config.dataset
    yield "grader", "grader", config.grader
    for i, stage in enumerate(config.curriculum):
        yield f"curriculum[{i}].dataset", "dataset", stage.dataset
    for i, sink in enumerate(config.logging.sinks):
        yield f"logging.sinks[{i}]", "metric_sink", sink


def validate_components(config: RunConfig, registry: ComponentCatalog[SpecT]) -> dict[str, object]:
    """Resolve every chosen component and structure its options; return ``{key path: options}``.

    Every problem is collected, so one run of ``debate config check`` reports them all.
    """
    problems: list[str] = []
    resolved: dict[str, object] = {}
    for path, kind, choice in component_choices(config):
        options = _checked_options(registry, path, kind, choice, problems)
        if options is not _INVALID:
            resolved[path] = options
    if problems:
        raise ConfigError("\n".join(problems))
    return resolved


_INVALID = object()
"""What :func:`_checked_options` returns for a choice whose problems it recorded."""


def _checked_options(
    registry: ComponentCatalog[SpecT], path: str, kind: str, choice: ComponentChoice, problems: list[str]
) -> object:
    """The structured options of ``choice`` at ``path``, after checking the components they choose
    in turn (``config.choices.nested_component``); ``_INVALID`` with ``problems`` extended."""
    try:
        spec = registry.resolve(kind, choice.name)
    except DebateError as exc:
        problems.append(f"{path}.name: {exc}")
        return _INVALID
    try:
        options = registry.structure_options(spec, choice.options, f"{path}.options")
    except DebateError as exc:
        problems.extend(str(exc).splitlines())
        return _INVALID
    for option, nested_kind, nested in nested_choices(options):
        _checked_options(registry, f"{path}.options.{option}", nested_kind, nested, problems)
    return options


def resolved_config_dict(config: RunConfig, registry: ComponentCatalog[SpecT]) -> JsonObject:
    """The run file with every default filled in, component options included."""
    options = validate_components(config, registry)
    data: JsonObject = unstructure(config)
    for path, value in options.items():
        node = _node_at(data, path)
        node["options"] = unstructure(value) if value is not None else {}
    return _drop_none_in_table(data)


def _node_at(data: JsonObject, path: str) -> JsonObject:
    node: JsonValue = data
    for part in path.replace("[", ".[").split("."):
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    assert isinstance(node, dict)
    return node


def _drop_none_in_table(table: JsonObject) -> JsonObject:
    """The table without its ``None`` values, at every depth (TOML has no null)."""
    return {k: _drop_none(x) for k, x in table.items() if x is not None}


def _drop_none(value: JsonValue) -> JsonValue:
    if isinstance(value, dict):
        return _drop_none_in_table(value)
    if isinstance(value, list | tuple):
        return [_drop_none(x) for x in value]
    return value


def resolved_config_toml(config: RunConfig, registry: ComponentCatalog[SpecT]) -> str:
    """The resolved run file as TOML text."""
    return tomli_w.dumps(resolved_config_dict(config, registry))


def write_resolved_config(config: RunConfig, path: str | os.PathLike[str], registry: ComponentCatalog[SpecT]) -> None:
    """Write the resolved run file atomically (a crash never leaves half a file)."""
    atomic_write_text(Path(path), resolved_config_toml(config, registry))
