"""Deprecated alias of :mod:`debate_core.component_specs` (the specs module's old name).

Importing it warns with a ``DeprecationWarning``; import the specs from ``debate_core`` or
``debate_core.component_specs`` instead.
"""

from __future__ import annotations

import warnings

from debate_core.component_specs import *  # noqa: F403
from debate_core.component_specs import __all__ as __all__

warnings.warn(
    "debate_core.components is renamed debate_core.component_specs; import the specs from there or from debate_core",
    DeprecationWarning,
    stacklevel=2,
)
