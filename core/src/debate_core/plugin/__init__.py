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

from debate_core.plugin._hookspecs import HOOK_KINDS, PROJECT_NAME, hookimpl, hookspec
from debate_core.plugin._registry import (
    CORE_DISTRIBUTION,
    DISABLE_AUTOLOAD_ENV,
    ONLY_ENV,
    STRICT_ENV,
    ComponentEntry,
    PluginLoadWarning,
    PluginSource,
    PluginStatus,
    Registry,
    get_registry,
    installed_distributions,
    kind_label,
    load_registry,
    normalise_distribution,
    reset_registry,
)
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
from debate_core.plugin._specs import (
    KINDS,
    SPEC_TYPES,
    AnswerRuleSpec,
    BackendSpec,
    BuildContext,
    ComponentBuilder,
    ComponentSpec,
    CoordinatorSpec,
    DatasetSpec,
    GraderSpec,
    HistoryPolicySpec,
    JudgeSpec,
    MetricSinkSpec,
    ParserSpec,
    PersonaSetSpec,
    RendererSpec,
    RewardSpec,
    build_choice,
)

__all__ = [
    "CORE_DISTRIBUTION",
    "DISABLE_AUTOLOAD_ENV",
    "HOOK_KINDS",
    "KINDS",
    "ONLY_ENV",
    "PROJECT_NAME",
    "SPEC_TYPES",
    "STRICT_ENV",
    "AnswerRuleSpec",
    "BackendSpec",
    "BuildContext",
    "ComponentBuilder",
    "ComponentEntry",
    "ComponentSpec",
    "CoordinatorSpec",
    "DatasetSpec",
    "GraderSpec",
    "HistoryPolicySpec",
    "JudgeSpec",
    "MetricSinkSpec",
    "ParserSpec",
    "PersonaSetSpec",
    "PluginLoadWarning",
    "PluginSource",
    "PluginStatus",
    "Registry",
    "RendererSpec",
    "RewardSpec",
    "build_choice",
    "get_registry",
    "hookimpl",
    "hookspec",
    "installed_distributions",
    "kind_label",
    "load_registry",
    "normalise_distribution",
    "reset_registry",
]
