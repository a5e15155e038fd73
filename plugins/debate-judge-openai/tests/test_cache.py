"""The answer cache (README: the cache): keyed by the request, kept in the run directory's
``judges/`` folder, read again by a new judge (a resumed run), so that no answer is paid twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_helpers import TRUE_VERDICTS, Host, build, judged
from stub_endpoint import StubEndpoint

from debate_judge_openai.cache import ResponseCache, request_key


def test_a_resumed_run_pays_no_request_twice(stub: StubEndpoint, tmp_path: Path) -> None:
    host = Host(tmp_path / "judges")
    judge = build(stub.url)
    assert judged(judge, host=host) == TRUE_VERDICTS
    assert len(stub.requests) == 5
    assert judged(judge, host=host) == TRUE_VERDICTS  # the same debate scored again
    assert len(stub.requests) == 5 and judge.take_counts()["cache_hits"] == 5
    resumed = build(stub.url)  # a new process: only the file remains
    assert judged(resumed, host=host) == TRUE_VERDICTS
    assert len(stub.requests) == 5
    counts = resumed.take_counts()
    assert counts["cache_hits"] == 5 and "requests" not in counts
    lines = [json.loads(line) for line in (tmp_path / "judges" / "openai-cache.jsonl").read_text().splitlines()]
    assert len(lines) == 5 and all(set(line) == {"key", "model", "content"} for line in lines)
    assert {line["key"] for line in lines} == {request_key(r) for r in stub.requests}


def test_the_key_is_the_request_not_the_url(tmp_path: Path, stub: StubEndpoint) -> None:
    from stub_endpoint import stub_endpoint

    host = Host(tmp_path / "judges")
    judged(build(stub.url), host=host)
    with stub_endpoint() as moved:  # the same model served elsewhere: the answers still hold
        assert judged(build(moved.url), host=host) == TRUE_VERDICTS
        assert moved.requests == []
        judged(build(moved.url, temperature=0.5), host=host)  # another request: asked
        assert len(moved.requests) == 5


def test_a_damaged_line_is_skipped_counted_and_its_answer_asked_again(stub: StubEndpoint, tmp_path: Path) -> None:
    host = Host(tmp_path / "judges")
    judged(build(stub.url), host=host)
    cache = tmp_path / "judges" / "openai-cache.jsonl"
    text = cache.read_text()
    cache.write_text(text[: len(text) - 20])  # the last line cut, as by a kill while writing it
    resumed = build(stub.url)
    assert judged(resumed, host=host) == TRUE_VERDICTS
    counts = resumed.take_counts()
    assert (counts["cache_damaged_lines"], counts["cache_hits"], counts["requests"]) == (1, 4, 1)


def test_a_failed_request_is_not_kept(stub: StubEndpoint, tmp_path: Path) -> None:
    host = Host(tmp_path / "judges")
    stub.faults = ["500"]
    judge = build(stub.url, max_retries=0, concurrency=1)
    with pytest.warns(UserWarning):
        first = judged(judge, host=host)
    assert first == [None, None, 0, 0]  # the first request (right vs wrong) serves the first two pairs
    assert judged(judge, host=host) == TRUE_VERDICTS
    assert judge.take_counts()["requests"] == 5 + 1


def test_without_a_run_directory_the_cache_is_in_memory_and_can_be_off(stub: StubEndpoint, tmp_path: Path) -> None:
    judge = build(stub.url)
    judged(judge)
    judged(judge)
    assert len(stub.requests) == 5
    judged(build(stub.url))  # another judge, nothing on disk: asked again
    assert len(stub.requests) == 10
    off = build(stub.url, cache=False)
    judged(off, host=Host(tmp_path / "judges"))
    judged(off, host=Host(tmp_path / "judges"))
    assert len(stub.requests) == 20 and not (tmp_path / "judges").exists()


def test_cache_path_names_the_file(stub: StubEndpoint, tmp_path: Path) -> None:
    path = tmp_path / "shared" / "answers.jsonl"
    judged(build(stub.url, cache_path=str(path)), host=Host(tmp_path / "judges"))
    assert path.is_file() and not (tmp_path / "judges").exists()
    judged(build(stub.url, cache_path=str(path)))
    assert len(stub.requests) == 5


def test_the_cache_reads_back_what_it_wrote(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.jsonl")
    cache.put("k1", "m", "A > B")
    cache.put("k2", "m", 'B > A "quoted"\nand a second line ✓')
    again = ResponseCache(tmp_path / "c.jsonl")
    assert again.answers == {"k1": "A > B", "k2": 'B > A "quoted"\nand a second line ✓'}
    assert again.damaged_lines == 0
    assert request_key({"b": 1, "a": [1, 2]}) == request_key({"a": [1, 2], "b": 1})
    assert request_key({"a": 1}) != request_key({"a": 2})
