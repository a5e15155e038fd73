"""Deprecated alias of :mod:`debate_core.testing.reward_parser_contracts` (its old name).

Importing it warns with a ``DeprecationWarning``; import the suites from ``debate_core.testing``.
"""

from __future__ import annotations

import warnings

from debate_core.testing.reward_parser_contracts import *  # noqa: F403
from debate_core.testing.reward_parser_contracts import __all__ as __all__

warnings.warn(
    "debate_core.testing.contracts is renamed debate_core.testing.reward_parser_contracts; "
    "import the suites from debate_core.testing",
    DeprecationWarning,
    stacklevel=2,
)
