"""0.1's documented module of the registry: an alias of ``debate_core.plugin`` that warns."""

from debate_core.plugin import warn_old_path
from debate_core.plugin._registry import *  # noqa: F403
from debate_core.plugin._registry import __all__ as __all__

warn_old_path(__name__)
