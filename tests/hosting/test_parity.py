"""A run file's debate hosted through ``debate_core.hosting`` (docs/verifiers.md), its turns sent
as chat requests to ``debate serve``: the same questions and seeds give the debates ``debate run``
holds, the rewards ``debate score`` prints for their transcripts and the answers under the run's
rule. The served checkpoint is the one ``tests/serve`` trains."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from debate_core.config import load_run_config
from debate_core.hosting import HostedDebate, HostedResult, TurnReply, TurnRequest
from debate_core.plugin import get_registry
from debate_core.records import Problem

from ..serve.conftest import train_tiny_run

openai = pytest.importorskip("openai", reason="the official client: pip install openai (tox installs it)")

pytestmark = pytest.mark.slow  # a model trained, served and debated end to end

QUESTIONS = [
    {"id": "a", "question": "What is 2+3?", "answer": "5"},
    {"id": "b", "question": "What is 7+8?", "answer": "15"},
]


def chat_turns(url: str, model: str = "tiny") -> Any:
    """Each turn a chat request to ``url``: the prompt's messages with the turn's sampling, the
    sampled token ids and logprobs asked for."""
    client = openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0, timeout=600)

    async def answer(turn: TurnRequest) -> TurnReply:
        reply = await client.chat.completions.create(
            model=model,
            messages=[{"role": m.role, "content": m.content} for m in turn.messages],
            temperature=turn.temperature,
            max_tokens=turn.max_tokens,
            seed=turn.seed,
            stop=list(turn.stop) or None,
            logprobs=True,
            extra_body={"return_token_ids": True},
        )
        choice = reply.choices[0]
        logprobs = tuple(t.logprob for t in choice.logprobs.content)
        return TurnReply(choice.message.content or "", tuple(choice.model_extra["token_ids"]), logprobs)

    return answer


def test_a_hosted_debate_over_debate_serve_equals_debate_run_and_debate_score(tmp_path: Path, capsys: Any) -> None:
    from debate_core.cli import main
    from debate_core.debate.transcripts import load_transcripts
    from debate_core.serve import serving

    run = train_tiny_run(tmp_path)
    config_file = run / "config.toml"
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    out = tmp_path / "debates.jsonl"
    argv = [
        "run",
        str(config_file),
        "--checkpoint",
        str(run),
        "--questions",
        str(questions),
        "--quiet",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    expected = load_transcripts(str(out))

    async def hosted() -> tuple[list[HostedResult], list[HostedResult]]:
        registry = get_registry()
        debate = await HostedDebate.open(config_file, checkpoint=str(run))
        try:
            with serving(load_run_config(config_file, registry=registry), registry, str(run), "tiny") as server:
                answer = chat_turns(server.url)
                problems = [Problem(id=q["id"], question=q["question"], answer=q["answer"]) for q in QUESTIONS]
                played = [await debate.play(p, answer, seed=debate.seed + i) for i, p in enumerate(problems)]
            return played, [debate.score(record) for record in expected]
        finally:
            await debate.close()

    results, of_debate_run = asyncio.run(hosted())
    reward = load_run_config(config_file, registry=get_registry()).reward
    assert not reward.options, "the tiny run's reward takes no options: debate score needs only its name"
    capsys.readouterr()
    assert main(["score", str(out), "--reward", reward.name]) == 0
    scored = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert len(results) == len(expected) == len(scored) == 2
    for result, record, score, theirs in zip(results, expected, scored, of_debate_run, strict=True):
        assert [(t.agent, t.round, t.text) for t in result.record.turns] == [
            (t.agent, t.round, t.text) for t in record.turns
        ]
        assert (result.record.rounds_played, result.record.aborted) == (record.rounds_played, record.aborted)
        assert list(result.rewards) == score["rewards"]
        assert result.answer == theirs.answer  # the run's answer rule over debate run's transcript
    assert any(t.text for r in results for t in r.record.turns)  # the debates said something
