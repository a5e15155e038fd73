"""Every kind's contract suite over every component of that kind installed in this environment
(tox's ``contract`` env installs every distribution of the repository together), through the
``Installed*Contract`` classes a third party's tox env uses the same way."""

from __future__ import annotations

from debate_core.testing import (
    InstalledAnswerRuleContract,
    InstalledBackendContract,
    InstalledCoordinatorContract,
    InstalledDatasetContract,
    InstalledGraderContract,
    InstalledHistoryPolicyContract,
    InstalledJudgeContract,
    InstalledMetricSinkContract,
    InstalledPersonaSetContract,
    InstalledRendererContract,
)


class TestEveryPersonaSet(InstalledPersonaSetContract):
    pass


class TestEveryHistoryPolicy(InstalledHistoryPolicyContract):
    pass


class TestEveryDataset(InstalledDatasetContract):
    pass


class TestEveryGrader(InstalledGraderContract):
    pass


class TestEveryCoordinator(InstalledCoordinatorContract):
    pass


class TestEveryRenderer(InstalledRendererContract):
    pass


class TestEveryMetricSink(InstalledMetricSinkContract):
    pass


class TestEveryBackend(InstalledBackendContract):
    pass


class TestEveryJudge(InstalledJudgeContract):
    pass


class TestEveryAnswerRule(InstalledAnswerRuleContract):
    pass
