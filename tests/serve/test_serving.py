"""``debate serve`` over loopback (docs/training.md#serving-a-policy): the official ``openai``
client and ``curl`` against a served checkpoint, the ``debate`` model against ``debate run``, and
the command itself (the URL on its first line, SIGTERM stops it)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from debate_core.serve import PolicyServer

openai = pytest.importorskip("openai", reason="the official client: pip install openai (tox installs it)")

pytestmark = pytest.mark.slow  # a model trained and served end to end, and the command in a subprocess

QUESTION = "What is 2+3?"


def client(server: PolicyServer) -> Any:
    return openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=600)


def ask(server: PolicyServer, **request: Any) -> Any:
    request.setdefault("messages", [{"role": "user", "content": QUESTION}])
    return client(server).chat.completions.create(**request)


def test_the_openai_client_lists_both_models_and_gets_a_sample_with_its_usage(server: PolicyServer) -> None:
    assert [m.id for m in client(server).models.list()] == ["debate", "tiny"]
    assert client(server).models.retrieve("tiny").id == "tiny"
    answer = ask(server, model="tiny")
    assert answer.model == "tiny" and answer.object == "chat.completion"
    assert isinstance(answer.choices[0].message.content, str)
    assert answer.choices[0].finish_reason in ("stop", "length")
    usage = answer.usage
    assert usage.prompt_tokens > 0 and 0 < usage.completion_tokens <= 16  # debate.max_tokens of the run
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_max_tokens_and_temperature_are_honoured(server: PolicyServer) -> None:
    short = ask(server, model="tiny", max_tokens=3, temperature=1.0)
    assert short.usage.completion_tokens <= 3
    assert short.choices[0].finish_reason == "length" or short.usage.completion_tokens < 3
    greedy = {ask(server, model="tiny", temperature=0, seed=seed).choices[0].message.content for seed in range(3)}
    assert len(greedy) == 1  # temperature 0: the seed does not matter
    hot = {ask(server, model="tiny", temperature=2.0, seed=seed).choices[0].message.content for seed in range(3)}
    assert len(hot) > 1
    again = ask(server, model="tiny", temperature=2.0, seed=1).choices[0].message.content
    assert again in hot  # a seed gives the same answer again


def test_the_debate_model_answers_as_debate_run_does(server: PolicyServer, tiny_run: Path, tmp_path: Path) -> None:
    """The ``debate`` model's answer is the final answer of the debate ``debate run --checkpoint``
    holds for the same question, seed (the run's) and temperature."""
    from debate_core.cli import main
    from debate_core.debate.transcripts import load_transcript

    answer = ask(server, model="debate", temperature=0.7)
    summary = answer.model_extra["debate"]
    out = tmp_path / "debate.json"
    config = str(tiny_run / "config.toml")
    argv = ["run", config, "--checkpoint", str(tiny_run), "--question", QUESTION, "--temperature", "0.7"]
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    record = load_transcript(out)
    assert (summary["rounds_played"], summary["aborted"], summary["abort_reason"]) == (
        record.rounds_played,
        record.aborted,
        record.abort_reason,
    )
    assert answer.choices[0].message.content == (summary["final_answer"] or "")
    assert summary["num_agents"] == 2 and answer.usage.completion_tokens > 0
    # a lone question is answered in agent 0's first-turn prompt, the debate's first prompt; the debate
    # counts every turn's prompt (one turn here when the untrained model breaks the contract at once)
    single = ask(server, model="tiny").usage.prompt_tokens
    assert answer.usage.prompt_tokens >= single and (answer.usage.prompt_tokens > single) == (len(record.turns) > 1)


def test_concurrent_requests_are_all_answered(server: PolicyServer) -> None:
    async def many() -> list[Any]:
        async_client = openai.AsyncOpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=600)
        asks = [
            async_client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": f"What is {n}+1?"}], max_tokens=4
            )
            for n, model in enumerate(["tiny", "debate", "tiny", "tiny"])
        ]
        try:
            return list(await asyncio.gather(*asks))
        finally:
            await async_client.close()

    answers = asyncio.run(many())
    assert [a.model for a in answers] == ["tiny", "debate", "tiny", "tiny"]


@pytest.mark.parametrize(
    ("request_", "error", "param"),
    [
        ({"model": "gpt-9"}, "NotFoundError", "model"),
        ({"model": "tiny", "logprobs": True, "top_logprobs": 3}, "BadRequestError", "top_logprobs"),
        ({"model": "debate", "logprobs": True}, "BadRequestError", "logprobs"),
        ({"model": "tiny", "logprobs": True}, "BadRequestError", "logprobs"),  # a lone question: the reply is cut
        ({"model": "tiny", "n": 9}, "BadRequestError", "n"),
        ({"model": "tiny", "temperature": 2.5}, "BadRequestError", "temperature"),
        ({"model": "tiny", "max_tokens": 0}, "BadRequestError", "max_tokens"),
        ({"model": "tiny", "messages": [{"role": "user", "content": "7+8=15. " * 400}]}, "BadRequestError", "messages"),
    ],
)
def test_bad_requests_get_the_errors_the_client_knows(
    server: PolicyServer, request_: dict[str, Any], error: str, param: str
) -> None:
    with pytest.raises(getattr(openai, error)) as caught:
        ask(server, **request_)
    assert caught.value.body["param"] == param and caught.value.body["message"]


def test_the_server_stays_up_after_a_context_overflow(server: PolicyServer) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        ask(server, model="debate", messages=[{"role": "user", "content": "7+8=15. " * 400}])
    assert caught.value.body["code"] == "context_length_exceeded"
    assert ask(server, model="tiny").usage.completion_tokens > 0


CURL = shutil.which("curl")


@pytest.mark.skipif(CURL is None, reason="curl is not installed (apt-get install -y curl)")
def test_curl(server: PolicyServer) -> None:
    def curl(*args: str) -> tuple[int, Any]:
        done = subprocess.run(
            [str(CURL), "-s", "-w", "\n%{http_code}", *args], capture_output=True, text=True, check=True, timeout=600
        )
        body, _, status = done.stdout.rpartition("\n")
        return int(status), json.loads(body)

    status, models = curl(f"{server.url}/models")
    assert status == 200 and [m["id"] for m in models["data"]] == ["debate", "tiny"]
    request = {"model": "tiny", "messages": [{"role": "user", "content": QUESTION}], "max_tokens": 5}
    status, answer = curl(
        f"{server.url}/chat/completions", "-H", "Content-Type: application/json", "-d", json.dumps(request)
    )
    assert status == 200 and answer["usage"]["completion_tokens"] <= 5
    assert isinstance(answer["choices"][0]["message"]["content"], str)
    status, error = curl(f"{server.url}/chat/completions", "-d", "{not json")
    assert status == 400 and error["error"]["type"] == "invalid_request_error"
    status, error = curl(f"{server.url}/nowhere")
    assert status == 404 and error["error"]["code"] == "not_found"
    status, error = curl("-X", "GET", f"{server.url}/chat/completions")
    assert status == 405


def test_the_command_prints_its_url_first_and_stops_on_sigterm(tiny_run: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "debate_core.cli", "serve", str(tiny_run), "--port", "0", "--name", "mine"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    first = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert first.wait(600), "no line from debate serve"  # a hang detector: loading takes seconds
        url = lines[0].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        answer = openai.OpenAI(base_url=url, api_key="unused", max_retries=0).chat.completions.create(
            model="mine", messages=[{"role": "user", "content": QUESTION}], max_tokens=2
        )
        assert answer.usage.completion_tokens <= 2
    finally:
        process.send_signal(signal.SIGTERM)
        returncode = process.wait(600)
        reader.join(60)
    assert returncode == 0, process.stderr.read() if process.stderr else ""
    assert lines[-1].strip() == "debate serve: stopped"


def test_a_checkpoint_outside_a_run_directory_needs_the_run_file(tmp_path: Path, capsys: Any) -> None:
    from debate_core.cli import main

    assert main(["serve", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no run directory holds this checkpoint" in err[0] and "--config" in err[0]


def test_the_policy_cannot_be_named_debate(tiny_run: Path, capsys: Any) -> None:
    from debate_core.cli import main

    assert main(["serve", str(tiny_run), "--name", "debate"]) == 1
    assert "choose another with --name" in capsys.readouterr().err
