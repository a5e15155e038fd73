"""The endpoint misbehaving (README: when the endpoint fails): slow, resetting, down, garbage,
rate-limited, failing with a status. A fault that clears within the retries changes no verdict;
one that does not makes the pairs abstain, counted; a wrong key, URL or model stops the run."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest
from judge_helpers import TRUE_VERDICTS, judged
from stub_endpoint import StubEndpoint

from debate_core import ConfigError

RETRIED = {
    "hang": "timeouts",
    "reset": "connection_errors",
    "garbage": "garbage",
    "no_choices": "garbage",
    "429": "rate_limited",
    "500": "server_errors",
    "503": "server_errors",
}
"""Each fault that is retried, and what it counts as."""


class Waits:
    """The judge's sleep, recorded instead of waited."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def judge_with_waits(stub: StubEndpoint, **options: Any) -> tuple[Any, Waits]:
    from debate_judge_openai import OpenAIJudge, OpenAIJudgeOptions

    waits = Waits()
    quick = {"failure_pause_s": 0.0, "timeout_s": 10.0, "cache": False, "concurrency": 1}
    judge = OpenAIJudge(OpenAIJudgeOptions(base_url=stub.url, model="judge", **{**quick, **options}), sleep=waits)
    return judge, waits


@pytest.mark.parametrize("fault", list(RETRIED))
def test_a_fault_that_clears_within_the_retries_changes_no_verdict(stub: StubEndpoint, fault: str) -> None:
    stub.faults = [fault, fault]  # the first two tries of the first request
    judge, waits = judge_with_waits(stub, max_retries=2, backoff_s=0.5, max_backoff_s=8.0)
    assert judged(judge) == TRUE_VERDICTS
    counts = judge.take_counts()
    assert (counts[RETRIED[fault]], counts["retries"], counts.get("failed", 0)) == (2, 2, 0)
    assert counts["requests"] == 5 + 2
    assert waits.seconds == [0.5, 1.0]  # backoff_s, doubled


@pytest.mark.parametrize("fault", list(RETRIED))
def test_a_fault_that_does_not_clear_makes_every_pair_abstain_counted(stub: StubEndpoint, fault: str) -> None:
    stub.default = fault
    limit = 0.25 if fault == "hang" else 10.0  # a hang is never answered; the others are answered at once
    judge, waits = judge_with_waits(stub, max_retries=3, backoff_s=1.0, max_backoff_s=3.0, timeout_s=limit)
    with pytest.warns(UserWarning, match=r"failed after 4 tries .*its pairs get no verdict") as warned:
        assert judged(judge) == [None, None, None, None]
    assert len(warned) == 1  # one line per outage, not per request
    counts = judge.take_counts()
    assert (counts[RETRIED[fault]], counts["failed"], counts["requests"]) == (5 * 4, 5, 5 * 4)
    assert waits.seconds == [1.0, 2.0, 3.0] * 5  # doubling, capped at max_backoff_s


def test_a_429_waits_for_its_retry_after_capped(stub: StubEndpoint) -> None:
    stub.faults = ["429", "429"]
    stub.retry_after = "7"
    judge, waits = judge_with_waits(stub, max_retries=2, backoff_s=0.5, max_backoff_s=60.0)
    assert judged(judge) == TRUE_VERDICTS
    assert waits.seconds == [7.0, 7.0]  # Retry-After when longer than the backoff
    stub.faults = ["429"]
    stub.retry_after = "600"
    judge, waits = judge_with_waits(stub, max_retries=1, backoff_s=0.5, max_backoff_s=30.0)
    assert judged(judge) == TRUE_VERDICTS
    assert waits.seconds == [30.0]


def test_an_endpoint_that_is_down_abstains_and_pauses(stub: StubEndpoint) -> None:
    from debate_judge_openai import OpenAIJudge, OpenAIJudgeOptions

    stub.close()  # nothing listens on its port any more
    options = OpenAIJudgeOptions(base_url=stub.url, model="judge", max_retries=1, backoff_s=0.0, failure_pause_s=3600)
    judge = OpenAIJudge(options)
    with pytest.warns(UserWarning, match="connection_errors"):
        assert judged(judge) == [None] * 4
    counts = judge.take_counts()
    assert counts["connection_errors"] >= 2 and counts["failed"] >= 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second line while the outage lasts
        assert judged(judge) == [None] * 4
    assert judge.take_counts()["skipped"] == 5  # paused: nothing sent, every request abstains at once


def test_the_endpoint_back_after_a_failure_is_asked_again(stub: StubEndpoint) -> None:
    stub.faults = ["500"] * 2
    judge, _ = judge_with_waits(stub, max_retries=0)
    with pytest.warns(UserWarning):
        first = judged(judge)
    assert first.count(None) >= 1 and all(v in (None, *TRUE_VERDICTS) for v in first)
    assert judged(judge) == TRUE_VERDICTS  # failure_pause_s = 0: asked again at once
    stub.default = "500"
    with pytest.warns(UserWarning):  # a new outage: a new line
        judged(judge)


def test_a_refused_request_is_not_retried(stub: StubEndpoint) -> None:
    stub.default = "400"
    judge, waits = judge_with_waits(stub, max_retries=3)
    with pytest.warns(UserWarning, match="refused"):
        assert judged(judge) == [None] * 4
    counts = judge.take_counts()
    assert (counts["refused"], counts["requests"], counts["failed"]) == (5, 5, 5) and waits.seconds == []


@pytest.mark.parametrize(("fault", "says"), [("401", "refuses the API key"), ("404", "has no such model or path")])
def test_a_wrong_key_url_or_model_stops_the_run_with_one_line(stub: StubEndpoint, fault: str, says: str) -> None:
    stub.default = fault
    judge, _ = judge_with_waits(stub, max_retries=3)
    with pytest.raises(ConfigError) as caught:
        judged(judge)
    line = str(caught.value)
    assert line.startswith(f"judge 'openai': the endpoint {stub.url} (model 'judge') {says}: HTTP {fault}")
    assert "\n" not in line and len(stub.requests) <= 5  # the other requests were cancelled, none retried


def test_a_slow_endpoint_is_given_up_after_the_time_limit_of_each_try(stub: StubEndpoint) -> None:
    """A request that gets no answer at all (the endpoint hangs) ends at ``timeout_s``, not never."""
    stub.default = "hang"
    judge, _ = judge_with_waits(stub, max_retries=1, timeout_s=0.5, backoff_s=0.0)

    async def bounded() -> list[int | None]:
        from judge_helpers import Host, pairs

        # a hang detector far above 5 requests x 2 tries x 0.5 s, one at a time
        return list(await asyncio.wait_for(judge.compare(pairs(), Host()), 600))

    with pytest.warns(UserWarning, match="timeouts"):
        assert asyncio.run(bounded()) == [None] * 4
    assert judge.take_counts()["timeouts"] == 10
