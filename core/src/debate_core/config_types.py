"""Small value types shared by every section of a run file."""

from __future__ import annotations

from typing import Any

import attrs

from debate_core.components import normalise_name
from debate_core.structuring import converter


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
