"""A component picked by name in a run file, with the raw options its own class validates."""

from __future__ import annotations

import re
from typing import Any

import attrs

from debate_core.config.structuring import converter


def normalise_name(name: str) -> str:
    """Lower-case a component name and turn ``-``, ``.`` and spaces into ``_``."""
    return re.sub(r"[-.\s]+", "_", name.strip().lower())


@attrs.frozen(kw_only=True)
class ComponentChoice:
    """A component picked by name, with the raw options its own attrs class validates.

    In TOML: ``[reward]`` with ``name = "v2"`` and a ``[reward.options]`` table.
    """

    name: str = attrs.field(converter=normalise_name)
    options: dict[str, Any] = attrs.field(factory=dict)


def _structure_choice(value: Any, _: type) -> ComponentChoice:
    """Accept ``reward = "v2"`` as shorthand for ``[reward] name = "v2"``."""
    if isinstance(value, str):
        return ComponentChoice(name=value)
    if not isinstance(value, dict):
        raise TypeError(f"expected a component name or a table with 'name' and 'options', got {value!r}")
    return _structure_choice_table(value, ComponentChoice)


_structure_choice_table = converter.gen_structure_attrs_fromdict(ComponentChoice)
converter.register_structure_hook(ComponentChoice, _structure_choice)
