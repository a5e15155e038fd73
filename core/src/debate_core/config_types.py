"""Small value types shared by every section of a run file."""

from __future__ import annotations

from typing import Any

import attrs

from debate_core.components import normalise_name


@attrs.frozen(kw_only=True)
class ComponentChoice:
    """A component picked by name, with the raw options its own attrs class validates.

    In TOML: ``[reward]`` with ``name = "v2"`` and a ``[reward.options]`` table.
    """

    name: str = attrs.field(converter=normalise_name)
    options: dict[str, Any] = attrs.field(factory=dict)
