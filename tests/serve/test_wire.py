"""The chat-completions wire format of ``debate serve`` without a model
(docs/training.md#serving-a-policy): what a request may hold, and the error every other body gets."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.records import Message
from debate_core.serve.wire import (
    ApiError,
    ChatRequest,
    Completion,
    completion_body,
    cut_at_stop,
    parse_chat_request,
    parse_completion_request,
)

MODELS = ("debate", "tiny")
USER = [{"role": "user", "content": "What is 2+3?"}]


def parse(body: Any) -> ChatRequest:
    return parse_chat_request(json.dumps(body).encode(), MODELS)


def test_a_request_is_read_with_what_it_leaves_to_the_server() -> None:
    request = parse({"model": "tiny", "messages": USER})
    assert request == ChatRequest("tiny", (Message("user", "What is 2+3?"),))
    full = parse(
        {
            "model": "debate",
            "messages": [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "What is "}, {"type": "text", "text": "2+3?"}]},
                {"role": "assistant", "content": "5"},
                {"role": "user", "content": "And 3+4?"},
            ],
            "max_completion_tokens": 7,
            "temperature": 0,
            "seed": 3,
            "stop": "\n",
            "n": 1,
            "stream": False,
            "user": "someone",  # parameters the server has no use for are accepted
        }
    )
    assert full.messages[0] == Message("system", "Be brief.") and full.messages[1].content == "What is 2+3?"
    assert (full.max_tokens, full.temperature, full.seed, full.stop) == (7, 0.0, 3, ("\n",))
    assert full.question == "And 3+4?"  # the last user message is what a debate answers


BAD_REQUESTS: dict[str, tuple[Any, int, str | None, str | None]] = {
    "no model": ({"messages": USER}, 400, "model", None),
    "an unknown model": ({"model": "gpt-9", "messages": USER}, 404, "model", "model_not_found"),
    "streaming as text": ({"model": "tiny", "messages": USER, "stream": "yes"}, 400, "stream", None),
    "stream options without a stream": (
        {"model": "tiny", "messages": USER, "stream_options": {"include_usage": True}},
        400,
        "stream_options",
        None,
    ),
    "n of 0": ({"model": "tiny", "messages": USER, "n": 0}, 400, "n", None),
    "n of 9": ({"model": "tiny", "messages": USER, "n": 9}, 400, "n", None),
    "top_logprobs": (
        {"model": "tiny", "messages": USER, "logprobs": True, "top_logprobs": 2},
        400,
        "top_logprobs",
        None,
    ),
    "logprobs as a number": ({"model": "tiny", "messages": USER, "logprobs": 1}, 400, "logprobs", None),
    "no messages": ({"model": "tiny", "messages": []}, 400, "messages", None),
    "no user message": ({"model": "tiny", "messages": [{"role": "system", "content": "x"}]}, 400, "messages", None),
    "a bad role": ({"model": "tiny", "messages": [{"role": "tool", "content": "x"}]}, 400, "messages[0].role", None),
    "an image": (
        {"model": "tiny", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
        400,
        "messages[0].content",
        None,
    ),
    "max_tokens 0": ({"model": "tiny", "messages": USER, "max_tokens": 0}, 400, "max_tokens", None),
    "max_tokens true": ({"model": "tiny", "messages": USER, "max_tokens": True}, 400, "max_tokens", None),
    "max_tokens huge": ({"model": "tiny", "messages": USER, "max_tokens": 10**9}, 400, "max_tokens", None),
    "temperature 3": ({"model": "tiny", "messages": USER, "temperature": 3}, 400, "temperature", None),
    "temperature text": ({"model": "tiny", "messages": USER, "temperature": "hot"}, 400, "temperature", None),
    "seed 1.5": ({"model": "tiny", "messages": USER, "seed": 1.5}, 400, "seed", None),
    "five stops": ({"model": "tiny", "messages": USER, "stop": list("abcde")}, 400, "stop", None),
    "an empty stop": ({"model": "tiny", "messages": USER, "stop": [""]}, 400, "stop", None),
    "an array body": ([1, 2], 400, None, None),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_a_bad_request_gets_an_openai_error_naming_the_parameter(case: str) -> None:
    body, status, param, code = BAD_REQUESTS[case]
    with pytest.raises(ApiError) as caught:
        parse(body)
    error = caught.value.body()["error"]
    assert (caught.value.status, error["param"], error["code"]) == (status, param, code)
    assert error["type"] == "invalid_request_error" and error["message"]


def test_bodies_that_are_not_json_objects_are_refused() -> None:
    for body in (b"", b"{", b"\xff\xfe", b"[" * 100 + b"]" * 100, b'{"model": 1' + b"0" * 5000 + b"}"):
        with pytest.raises(ApiError) as caught:
            parse_chat_request(body, MODELS)
        assert caught.value.status == 400


def test_a_body_over_the_input_limit_is_refused_before_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATE_MAX_INPUT_BYTES", "100")
    with pytest.raises(ApiError) as caught:
        parse({"model": "tiny", "messages": [{"role": "user", "content": "x" * 200}]})
    assert caught.value.status == 413


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    [
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "seed",
        "stop",
        "n",
        "stream",
        "stream_options",
        "logprobs",
        "top_logprobs",
        "return_token_ids",
    ]
)


@given(st.dictionaries(FIELDS, JSON | st.sampled_from(["tiny", "debate", USER]), max_size=6))
def test_any_json_object_is_a_request_or_a_client_error(body: dict[str, Any]) -> None:
    try:
        request = parse(body)
    except ApiError as exc:
        assert 400 <= exc.status < 500 and exc.body()["error"]["message"]
    else:
        assert request.model in MODELS and any(m.role == "user" for m in request.messages)


def test_stops_cut_the_text_at_the_first_one() -> None:
    assert cut_at_stop("5 then more\nUser: x", ["\nUser:", " then"]) == ("5", True)
    assert cut_at_stop("5", ["\n"]) == ("5", False)


def test_a_completion_reports_its_usage_and_a_debate_its_summary() -> None:
    request = ChatRequest("debate", (Message("user", "q"),))
    body = completion_body(request, [Completion("5", "stop", 30, 12, {"final_answer": "5"})], created=7)
    assert body["object"] == "chat.completion" and body["created"] == 7 and body["model"] == "debate"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "5"}
    assert body["usage"] == {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}
    assert body["debate"] == {"final_answer": "5"}
    plain = completion_body(request, [Completion("5", "stop", 30, 12)], created=7)
    assert "debate" not in plain and "direct" not in plain
    direct = Completion("\\boxed{5}", "stop", 30, 12, direct={"answer": "5", "format_ok": True, "response": "..."})
    assert completion_body(request, [direct], created=7)["direct"] == {
        "answer": "5",
        "format_ok": True,
        "response": "...",
    }


def test_stream_choices_logprobs_and_token_ids_are_read() -> None:
    request = parse(
        {
            "model": "tiny",
            "messages": USER,
            "stream": True,
            "stream_options": {"include_usage": True},
            "n": 3,
            "logprobs": True,
            "top_logprobs": 0,
            "return_token_ids": True,
        }
    )
    assert (request.stream, request.include_usage, request.n, request.logprobs, request.return_token_ids) == (
        True,
        True,
        3,
        True,
        True,
    )


def test_a_text_completion_request_takes_text_or_token_ids() -> None:
    def read(body: dict[str, Any]) -> ChatRequest:
        return parse_completion_request(json.dumps({"model": "tiny", **body}).encode(), MODELS)

    assert read({"prompt": "2+3="}).prompt == "2+3=" and read({"prompt": ["2+3="]}).question == "2+3="
    assert read({"prompt": [5, 6], "logprobs": 1}).prompt == (5, 6) and read({"prompt": "x", "logprobs": 1}).logprobs
    for bad, param in (
        ({"prompt": ""}, "prompt"),
        ({"prompt": [1, -2]}, "prompt"),
        ({"prompt": ["a", "b"]}, "prompt"),
        ({"prompt": "x", "logprobs": 5}, "logprobs"),
        ({"prompt": "x", "echo": True}, "echo"),
    ):
        with pytest.raises(ApiError) as caught:
            read(bad)
        assert caught.value.status == 400 and caught.value.param == param


def test_n_choices_their_usage_logprobs_and_token_ids_are_written() -> None:
    request = ChatRequest("tiny", (Message("user", "q"),), n=2, logprobs=True, return_token_ids=True)
    one = Completion(
        "ab", "stop", 3, 2, prompt_token_ids=(1, 2, 3), token_ids=(7, 8), token_logprobs=(("a", -0.5), ("b", -1.0))
    )
    two = Completion("c", "length", 3, 1, prompt_token_ids=(1, 2, 3), token_ids=(9,), token_logprobs=(("c", -2.0),))
    body = completion_body(request, [one, two])
    assert [c["index"] for c in body["choices"]] == [0, 1] and body["prompt_token_ids"] == [1, 2, 3]
    assert body["choices"][1]["token_ids"] == [9] and body["choices"][1]["finish_reason"] == "length"
    assert body["choices"][0]["logprobs"]["content"][1] == {
        "token": "b",
        "logprob": -1.0,
        "bytes": [98],
        "top_logprobs": [],
    }
    assert body["usage"] == {"prompt_tokens": 6, "completion_tokens": 3, "total_tokens": 9}
    text = completion_body(attrs.evolve(request, return_token_ids=False), [one], text=True)
    assert text["object"] == "text_completion" and text["choices"][0]["text"] == "ab" and "prompt_token_ids" not in text
    assert text["choices"][0]["logprobs"] == {
        "tokens": ["a", "b"],
        "token_logprobs": [-0.5, -1.0],
        "top_logprobs": None,
        "text_offset": [0, 1],
    }
    assert (
        completion_body(attrs.evolve(request, logprobs=False), [attrs.evolve(one, token_logprobs=None)])["choices"][0][
            "logprobs"
        ]
        is None
    )


def test_a_stream_sends_the_role_the_text_the_finish_the_usage_then_done() -> None:
    from debate_core.serve.streaming import stream_events

    request = ChatRequest("debate", (Message("user", "q"),), stream=True, include_usage=True)
    events = list(stream_events(request, [Completion("5", "stop", 30, 12, {"final_answer": "5"})]))
    assert events[-1] == b"data: [DONE]\n\n" and all(e.startswith(b"data: ") and e.endswith(b"\n\n") for e in events)
    chunks = [json.loads(e[6:]) for e in events[:-1]]
    assert [c["object"] for c in chunks] == ["chat.completion.chunk"] * 4
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[1]["choices"][0]["delta"] == {"content": "5"}
    assert chunks[2]["choices"][0]["finish_reason"] == "stop" and chunks[2]["debate"] == {"final_answer": "5"}
    assert chunks[3]["choices"] == [] and chunks[3]["usage"]["total_tokens"] == 42
    quiet = list(stream_events(attrs.evolve(request, include_usage=False), [Completion("5", "stop", 30, 12)]))
    assert len(quiet) == 4 and b"usage" not in b"".join(quiet)
