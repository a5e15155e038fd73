"""The core's judge contract suite on the ``openai`` judge, built through its entry point: against a
scripted endpoint, and against ``debate serve`` of a trained checkpoint (the official ``openai``
client over loopback both times)."""

from __future__ import annotations

from typing import Any

import pytest
from judge_helpers import build
from stub_endpoint import StubEndpoint

from debate_core.testing import JudgeContract


class TestOnAScriptedEndpoint(JudgeContract):
    @pytest.fixture
    def contract_component(self, stub: StubEndpoint) -> Any:
        return build(stub.url)


@pytest.mark.slow  # a model trained and served end to end
class TestOnDebateServe(JudgeContract):
    @pytest.fixture
    def contract_component(self, served: Any) -> Any:
        return build(served.url, model="tiny", cache=False)  # every verdict asked of the policy
