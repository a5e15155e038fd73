"""The 0.1 documented path of :mod:`debate_core.plugin`'s registry names, kept for code that imports it.

Importing it warns with a ``DeprecationWarning``; import the names from ``debate_core.plugin``
(or, for the spec records and ``hookimpl``, from ``debate_core``).
"""

from __future__ import annotations

import warnings

from debate_core.plugin._registry import *  # noqa: F403
from debate_core.plugin._registry import __all__ as __all__

warnings.warn(
    "debate_core.plugins is part of the debate_core.plugin package now; import its names from debate_core.plugin",
    DeprecationWarning,
    stacklevel=2,
)
