"""A component picked by name in a run file, with the raw options its own class validates."""

from __future__ import annotations

import re
from typing import Any

import attrs


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
    options: dict[str, Any] = attrs.field(factory=dict)
