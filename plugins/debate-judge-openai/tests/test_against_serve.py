"""The ``openai`` judge asking a trained policy behind ``debate serve`` (docs/training.md#serving-a-policy)."""

from __future__ import annotations

from typing import Any

import pytest
from judge_helpers import build, judged

pytestmark = pytest.mark.slow  # a model trained and served end to end


def test_a_served_policy_judges_every_pair_and_reports_its_tokens(served: Any) -> None:
    judge = build(served.url, model="tiny", max_tokens=6, cache=False)
    verdicts = judged(judge)
    assert len(verdicts) == 4 and all(v in (-1, 0, 1, None) for v in verdicts)
    counts = judge.take_counts()
    # a debate policy answers in its own format, not the verdict's: what it cannot read is no verdict,
    # counted (docs/rewards.md: what model it needs)
    assert (None in verdicts) == (counts.get("unreadable", 0) > 0)
    assert counts["requests"] == 5 and "failed" not in counts
    assert counts["prompt_tokens"] > 0 and 0 < counts["completion_tokens"] <= 5 * 6  # debate serve's usage


def test_a_model_the_server_does_not_have_stops_the_run(served: Any) -> None:
    from debate_core import ConfigError

    with pytest.raises(ConfigError, match=r"has no such model or path: HTTP 404"):
        judged(build(served.url, model="gpt-9"))
