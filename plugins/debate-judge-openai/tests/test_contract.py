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

    def test_one_verdict_per_pair(self, contract_component: Any, contract_host: Any) -> None:
        """The served policy is a debate policy: it answers in the debate's format, not the verdict's,
        so a reply it cannot read is no verdict (``None``, counted ``unreadable``), not a made-up tie
        (docs/rewards.md#a-judge-behind-an-openai-compatible-endpoint: what model it needs)."""
        from debate_core.testing.other_kind_contracts import _judge_pairs

        pairs = _judge_pairs()
        verdicts = self._compare(contract_component, pairs, contract_host)
        assert len(verdicts) == len(pairs) and all(v in (-1, 0, 1, None) for v in verdicts), verdicts
        unreadable = contract_component.take_counts().get("unreadable", 0)
        assert (None in verdicts) == (unreadable > 0)
