"""Boolean switches read from the environment (``DEBATE_DEBUG``, ``DEBATE_STRICT_PLUGINS``, ...)."""

from __future__ import annotations

import os

FALSE_VALUES: frozenset[str] = frozenset({"", "0", "false", "no", "off"})
"""Values (after stripping and lower-casing) that leave a switch off; anything else turns it on."""


def env_flag(name: str) -> bool:
    """True when the environment variable ``name`` is set to something other than an off value."""
    return os.environ.get(name, "").strip().lower() not in FALSE_VALUES
