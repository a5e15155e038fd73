"""The plugin system: the spec records registration hooks return, the hooks and their markers,
the registry that loads entry points and builds components by name, and the checked calls
through which the host calls every plugin (docs/plugin-guide.md).

Its modules are private; this ``__init__`` is the package's API, as in pluggy and tox 4's
``tox.plugin``. ``__all__`` is what plugin authors and tools may use (the spec records and
``hookimpl`` are also in the ``debate_core`` namespace). The checked calls below ``__all__``
(``PluginCall``, ``call_plugin``, ``checked_*``) are the host's: debate-core's own packages
call plugins through them, and a plugin never needs them.
"""

from __future__ import annotations

import warnings

from debate_core.plugin import _hookspecs, _registry, _specs
from debate_core.plugin._hookspecs import *  # noqa: F403
from debate_core.plugin._registry import *  # noqa: F403
from debate_core.plugin._results import REWARD_BOUND as REWARD_BOUND
from debate_core.plugin._results import PluginCall as PluginCall
from debate_core.plugin._results import call_async_plugin as call_async_plugin
from debate_core.plugin._results import call_plugin as call_plugin
from debate_core.plugin._results import check_judge_verdicts as check_judge_verdicts
from debate_core.plugin._results import check_reward_result as check_reward_result
from debate_core.plugin._results import checked_debate_answer as checked_debate_answer
from debate_core.plugin._results import checked_decoded_text as checked_decoded_text
from debate_core.plugin._results import checked_grade as checked_grade
from debate_core.plugin._results import checked_history as checked_history
from debate_core.plugin._results import checked_instance as checked_instance
from debate_core.plugin._results import checked_parsed_response as checked_parsed_response
from debate_core.plugin._results import checked_persona as checked_persona
from debate_core.plugin._results import checked_problems as checked_problems
from debate_core.plugin._results import checked_prompt as checked_prompt
from debate_core.plugin._results import checked_reward_result as checked_reward_result
from debate_core.plugin._results import checked_stop_condition as checked_stop_condition
from debate_core.plugin._results import reward_result_problems as reward_result_problems
from debate_core.plugin._specs import *  # noqa: F403


def warn_old_path(module: str) -> None:
    """Warn that ``module``, one of 0.1's documented paths of these names, is an alias now."""
    warnings.warn(
        f"{module} is part of the debate_core.plugin package now; import its names from debate_core.plugin",
        DeprecationWarning,
        stacklevel=3,
    )


__all__ = [*_specs.__all__, *_hookspecs.__all__, *_registry.__all__]
