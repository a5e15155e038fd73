"""The ``openai`` judge against a healthy endpoint: what it asks, how it reads the answers, both
orders, the concurrency limit, the key (README: asking, both orders, the key)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from judge_helpers import TRUE_VERDICTS, Host, build, judged
from stub_endpoint import StubEndpoint, always_a, stub_endpoint

from debate_core import ConfigError, CountingJudge, Judge
from debate_judge_openai.prompts import both_orders_verdict, read_verdict


def test_a_truthful_endpoint_gives_the_true_verdicts_asking_each_pair_in_both_orders(stub: StubEndpoint) -> None:
    judge = build(stub.url, max_tokens=5, temperature=0.3, seed=9)
    assert isinstance(judge, Judge) and isinstance(judge, CountingJudge)
    assert judged(judge) == TRUE_VERDICTS
    # 4 pairs in 2 orders, but a request is sent once: right-vs-wrong swapped is wrong-vs-right, and
    # right-vs-right swapped is itself: 5 distinct requests
    assert len(stub.requests) == 5
    for request in stub.requests:  # they arrive in any order: they are sent together
        assert (request["model"], request["max_tokens"], request["temperature"], request["seed"]) == (
            "judge",
            5,
            0.3,
            9,
        )
        system, user = request["messages"]
        assert system["role"] == "system" and "'A > B'" in system["content"]
        assert user["role"] == "user" and user["content"].startswith("Question:\nWhat is 6 * 7?\n\nAnswer A:\n")
    asked = {r["messages"][1]["content"].split("Answer A:\n")[1].split("\n\nWhich")[0] for r in stub.requests}
    assert "so \\boxed{42}\n\nAnswer B:\nso \\boxed{41}" in asked  # a pair and the same pair swapped
    assert "so \\boxed{41}\n\nAnswer B:\nso \\boxed{42}" in asked
    counts = judge.take_counts()
    assert counts["requests"] == 5 and counts["prompt_tokens"] > 0 and counts["completion_tokens"] == 15
    assert "inconsistent" not in counts or counts["inconsistent"] == 0
    assert judge.take_counts() == {}  # taken: counting starts again


def test_a_judge_biased_to_the_first_position_gets_ties_counted_as_flips() -> None:
    with stub_endpoint(always_a) as biased:
        assert judged(build(biased.url)) == [0, 0, 0, 0]
        judge = build(biased.url, both_orders=False)
        assert judged(judge) == [1, 1, 1, 1]  # one order: the position decides
        counts = build(biased.url)
        judged(counts)
        assert counts.take_counts()["flips"] == 4 and counts.take_counts() == {}


def test_both_orders_make_the_benchmarks_consistency_rule() -> None:
    assert both_orders_verdict(1, -1) == (1, True, False)  # A better, then (swapped) B better: the same answer
    assert both_orders_verdict(1, 1) == (0, False, True)  # the first position twice: a flip, a tie
    assert both_orders_verdict(1, 0) == (0, False, False)  # one order strict, the other equal: a tie
    assert both_orders_verdict(0, 0) == (0, True, False)


@given(st.sampled_from([-1, 0, 1]), st.sampled_from([-1, 0, 1]))
def test_a_verdict_in_both_orders_stands_only_when_the_orders_agree(first: int, swapped: int) -> None:
    verdict, consistent, flipped = both_orders_verdict(first, swapped)
    assert consistent == (first == -swapped) and (verdict == first if consistent else verdict == 0)
    assert flipped == (first != 0 and first == swapped)
    assert both_orders_verdict(swapped, first)[0] == -verdict  # the pair the other way round: the same requests


def test_read_verdict_takes_the_last_verdict_after_any_thinking() -> None:
    assert read_verdict("A > B") == 1 and read_verdict("B > A") == -1 and read_verdict(" A = B\n") == 0
    assert read_verdict("A < B") == -1 and read_verdict("B<A") == 1
    assert read_verdict("<think>maybe A > B</think>Checking again: B > A") == -1
    assert read_verdict("Answer A is wrong. So: B > A.") == -1
    assert read_verdict("I cannot tell") is None and read_verdict("A > A") is None and read_verdict("") is None


def test_an_unreadable_reply_is_no_verdict_counted() -> None:
    # issue 44: a policy served by debate serve answers out of the verdict's format; read as ties,
    # its replies moved every reward towards "equal" and nothing said that the judge gave no verdict
    with stub_endpoint(lambda request: "Both look fine to me.") as vague:
        judge = build(vague.url)
        assert judged(judge) == [None, None, None, None]
        assert judge.take_counts()["unreadable"] == 8


def test_check_finds_a_url_where_nothing_listens(stub: StubEndpoint) -> None:
    build(stub.url).check()  # something answers: no error
    url = stub.url
    stub.close()
    with pytest.raises(ConfigError, match=rf"judge 'openai': nothing answers at {re.escape(url)} \("):
        build(url).check()


def test_no_more_requests_are_in_flight_than_the_limit(stub: StubEndpoint) -> None:
    stub.gather = 3  # each request waits until three are in flight: a judge that asks one at a time hangs here
    judge = build(stub.url, concurrency=3, cache=False)
    assert judged(judge) == TRUE_VERDICTS
    assert stub.most_in_flight == 3


def test_the_key_comes_from_the_named_variable_and_is_never_shown(
    stub: StubEndpoint, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = "sk-test-" + os.urandom(8).hex()
    monkeypatch.setenv("JUDGE_KEY", secret)
    judge = build(stub.url, api_key_env="JUDGE_KEY")
    assert judged(judge, host=Host(tmp_path / "judges")) == TRUE_VERDICTS
    assert set(stub.keys) == {f"Bearer {secret}"}
    assert secret not in repr(judge) and secret not in repr(judge.options)
    assert all(secret not in p.read_text() for p in (tmp_path / "judges").iterdir())
    assert set(build(stub.url).__dict__) and secret not in str(build(stub.url, api_key_env="JUDGE_KEY").options)
    assert stub.keys[-1] == f"Bearer {secret}"


def test_a_named_key_variable_that_is_not_set_stops_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"api_key_env = 'NO_SUCH_KEY', but that environment variable is not set"):
        build("http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"base_url": "127.0.0.1:8000/v1"}, "base_url"),
        ({"api_key_env": "sk-abc123-secret"}, "api_key_env"),
        ({"concurrency": 0}, "concurrency"),
        ({"token_limit_name": "max_length"}, "token_limit_name"),
    ],
)
def test_bad_options_are_named(options: dict[str, object], named: str) -> None:
    from debate_core.plugin import get_registry

    full = {"base_url": "http://127.0.0.1:9/v1", "model": "judge", **options}
    with pytest.raises(ConfigError, match=named):
        get_registry().build("judge", "openai", full)


def test_max_completion_tokens_for_models_that_take_only_it(stub: StubEndpoint) -> None:
    judged(build(stub.url, token_limit_name="max_completion_tokens", max_tokens=7))
    assert stub.requests[0]["max_completion_tokens"] == 7 and "max_tokens" not in stub.requests[0]


def test_no_pairs_ask_nothing(stub: StubEndpoint) -> None:
    assert judged(build(stub.url), []) == []
    assert stub.requests == []
