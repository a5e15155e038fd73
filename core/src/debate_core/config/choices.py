"""A component picked by name in a run file, with the raw options its own class validates."""

from __future__ import annotations

import re

import attrs

from debate_core.records.json_values import JsonObject


def normalise_name(name: str) -> str:
    """Lower-case a component name and turn ``-``, ``.`` and spaces into ``_``; an import path
    (``my_rewards:majority``, ``pkg.module:attribute``) is kept as written."""
    if is_import_path(name):
        return name.strip()
    return re.sub(r"[-.\s]+", "_", name.strip().lower())


def is_import_path(name: str) -> bool:
    """True when a component is named by ``module:attribute`` rather than by a plugin's name."""
    return ":" in name


@attrs.frozen(kw_only=True)
class ComponentChoice:
    """A component picked by name, with the raw options its own attrs class validates.

    In TOML: ``[reward]`` with ``name = "v2"`` and a ``[reward.options]`` table.
    """

    name: str = attrs.field(converter=normalise_name)
    options: JsonObject = attrs.field(factory=dict)


NESTED_KIND = "debate_core.component_kind"
"""The ``attrs`` metadata key that marks an option choosing another component (:func:`nested_component`)."""


def nested_component(kind: str) -> dict[str, str]:
    """The ``attrs`` field metadata of an option that chooses a component of ``kind`` (a wrapper
    reward's inner reward, a judge): ``debate config check`` resolves it and checks its options
    like a top-level choice.

    Example::

        @attrs.frozen(kw_only=True)
        class SmoothedOptions:
            inner: ComponentChoice = attrs.field(
                factory=lambda: ComponentChoice(name="v2"), metadata=nested_component("reward")
            )
    """
    return {NESTED_KIND: kind}


def nested_choices(options: object) -> list[tuple[str, str, ComponentChoice]]:
    """``(option name, kind, choice)`` of every :func:`nested_component` field of a structured
    options object (none for options that are not an attrs instance)."""
    cls = type(options)
    if not attrs.has(cls):
        return []
    found = []
    for field in attrs.fields(cls):
        kind = field.metadata.get(NESTED_KIND)
        value = getattr(options, field.name)
        if kind is not None and isinstance(value, ComponentChoice):
            found.append((field.name, kind, value))
    return found
