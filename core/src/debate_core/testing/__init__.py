"""The test kit for debate plugin authors: contract suites, debates without a model, fixtures.

The pytest plugin (``debate_core.testing.fixtures``, loaded through the ``pytest11`` entry point)
gives every test session the fixtures ``debate_registry_plugin``, ``make_debate`` and
``installed_<kind>``, and nothing else. The contract suites, one per kind of component, are
imported from here by the test modules that subclass them::

    from debate_core.testing import RewardContract

    class TestBrevityContract(RewardContract):
        reward_name = "brevity"          # looked up in the installed plugins

``RewardContract`` and ``ParserContract`` (``debate_core.testing.reward_parser_contracts``) and
``AnswerRuleContract`` (``debate_core.testing.answer_rule_contracts``) check what every reward
(parser, answer rule) must do on the debates coordinators can produce; ``PersonaSetContract``,
``HistoryPolicyContract``, ``DatasetContract``, ``GraderContract``, ``CoordinatorContract``,
``RendererContract``, ``MetricSinkContract``, ``BackendContract`` and ``JudgeContract``
(``debate_core.testing.other_kind_contracts``) do the same for the other kinds, with
``component_name``/``component_spec``/``component_options``. ``Installed<Kind>Contract``
(``InstalledRewardContract``, ...) runs a kind's suite over every installed component of that kind.

Names are imported from their modules on first use, so importing this package costs nothing.
The project's own test doubles (a scripted backend) live with its tests, not here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from debate_core.testing.answer_rule_contracts import AnswerRuleContract, InstalledAnswerRuleContract
    from debate_core.testing.fixtures import build_debate, installed_names
    from debate_core.testing.other_kind_contracts import (
        BackendContract,
        CoordinatorContract,
        DatasetContract,
        GraderContract,
        HistoryPolicyContract,
        JudgeContract,
        MetricSinkContract,
        PersonaSetContract,
        RendererContract,
        sdk_mismatches,
    )
    from debate_core.testing.reward_parser_contracts import (
        CONTRACT_DEBATES,
        CONTRACT_RESPONSES,
        PARSER_TEXTS,
        InstalledBackendContract,
        InstalledCoordinatorContract,
        InstalledDatasetContract,
        InstalledGraderContract,
        InstalledHistoryPolicyContract,
        InstalledJudgeContract,
        InstalledMetricSinkContract,
        InstalledParserContract,
        InstalledPersonaSetContract,
        InstalledRendererContract,
        InstalledRewardContract,
        ParserContract,
        RewardContract,
        build_installed,
    )
    from debate_core.testing.synthetic import TurnSpec

_HOMES = {
    "debate_core.testing.other_kind_contracts": (
        "BackendContract",
        "CoordinatorContract",
        "DatasetContract",
        "GraderContract",
        "HistoryPolicyContract",
        "JudgeContract",
        "MetricSinkContract",
        "PersonaSetContract",
        "RendererContract",
        "sdk_mismatches",
    ),
    "debate_core.testing.answer_rule_contracts": ("AnswerRuleContract", "InstalledAnswerRuleContract"),
    "debate_core.testing.reward_parser_contracts": (
        "CONTRACT_DEBATES",
        "CONTRACT_RESPONSES",
        "PARSER_TEXTS",
        "InstalledBackendContract",
        "InstalledCoordinatorContract",
        "InstalledDatasetContract",
        "InstalledGraderContract",
        "InstalledHistoryPolicyContract",
        "InstalledJudgeContract",
        "InstalledMetricSinkContract",
        "InstalledParserContract",
        "InstalledPersonaSetContract",
        "InstalledRendererContract",
        "InstalledRewardContract",
        "ParserContract",
        "RewardContract",
        "build_installed",
    ),
    "debate_core.testing.fixtures": ("build_debate", "installed_names"),
    "debate_core.testing.synthetic": ("TurnSpec",),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "AnswerRuleContract",
    "BackendContract",
    "CONTRACT_DEBATES",
    "CONTRACT_RESPONSES",
    "CoordinatorContract",
    "DatasetContract",
    "GraderContract",
    "HistoryPolicyContract",
    "InstalledAnswerRuleContract",
    "InstalledBackendContract",
    "InstalledCoordinatorContract",
    "InstalledDatasetContract",
    "InstalledGraderContract",
    "InstalledHistoryPolicyContract",
    "InstalledJudgeContract",
    "InstalledMetricSinkContract",
    "InstalledParserContract",
    "InstalledPersonaSetContract",
    "InstalledRendererContract",
    "InstalledRewardContract",
    "JudgeContract",
    "MetricSinkContract",
    "PARSER_TEXTS",
    "ParserContract",
    "PersonaSetContract",
    "RendererContract",
    "RewardContract",
    "TurnSpec",
    "build_debate",
    "build_installed",
    "installed_names",
    "sdk_mismatches",
]


def __getattr__(name: str) -> object:
    """Import a public name from its module on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
