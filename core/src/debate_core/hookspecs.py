"""0.1's documented module of the hooks: an alias of ``debate_core.plugin`` that warns."""

from debate_core.plugin import warn_old_path
from debate_core.plugin._hookspecs import *  # noqa: F403
from debate_core.plugin._hookspecs import __all__ as __all__

warn_old_path(__name__)
