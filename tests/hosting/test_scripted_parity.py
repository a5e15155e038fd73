"""Parity over a scripted model (docs/verifiers.md): a 3-agent, 2-round debate in which every
agent answers and judges (``tests/serve/test_answers.py``'s script: agent 0 says 41, the others
42, and each judge prefers a 42), played once by ``debate run``'s code on the sampler and once
through ``debate_core.hosting`` with every turn a chat request to ``debate serve`` of the same
model. The turns, each agent's reward (as ``debate score`` prints it) and the answer are equal."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from debate_core.debate.transcripts import save_transcript
from debate_core.hosting import HostedDebate, HostedResult
from debate_core.plugin import build_choice, get_registry
from debate_core.records import DebateRecord, Problem
from debate_core.serve import EventLoopThread, PolicyServer

from ..serve.test_answers import RUNOFF_RUN_FILE, served
from .test_parity import chat_turns

pytest.importorskip("openai", reason="the official client: pip install openai (tox installs it)")


def played_both_ways(policy: Any, session: Any) -> tuple[HostedDebate, DebateRecord, HostedResult]:
    """The debate of "What is 40+2?" (seed 7) played by ``debate run``'s code on the sampler, and
    through ``debate_core.hosting`` with every turn a chat request to ``debate serve``."""
    problem = Problem(id="q", question="What is 40+2?", answer="42")
    reward = build_choice(get_registry(), "reward", policy.config.reward, "reward")
    hosted = HostedDebate(policy.config, policy.debate, reward, policy.session)
    direct = asyncio.run(policy.debate.play(problem, session.sampler(), seed=7, debate_id="q"))
    loop = EventLoopThread()
    server = PolicyServer(policy, loop, "127.0.0.1", 0, None)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        result = asyncio.run(hosted.play(problem, chat_turns(server.url, "policy"), seed=7))
    finally:
        server.shutdown()
        thread.join()
        server.close()
        loop.stop()
    return hosted, direct.record, result


def test_a_hosted_debate_through_debate_serve_has_debate_run_s_turns_rewards_and_answer(
    tmp_path: Path, capsys: Any
) -> None:
    from debate_core.cli import main

    policy, session = served(tmp_path)
    hosted, record, result = played_both_ways(policy, session)
    assert len(record.turns) == 6 and not record.aborted  # every agent answered in both rounds
    assert [(t.agent, t.round, t.text) for t in result.record.turns] == [
        (t.agent, t.round, t.text) for t in record.turns
    ]
    transcript = save_transcript(record, tmp_path / "debate.json")
    capsys.readouterr()
    assert main(["score", str(transcript), "--reward", policy.config.reward.name]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert list(result.rewards) == scored["rewards"] and len(set(scored["rewards"])) > 1
    assert result.answer.answer == "42" and result.answer.correct
    assert result.answer == hosted.score(record).answer


def test_a_hosted_runoff_through_debate_serve_has_debate_run_s_turns_seats_and_answer(tmp_path: Path) -> None:
    """The runoff coordinator through the hosting path: each turn a chat request named by the
    debate's agent, its messages seated (docs/protocol.md#the-runoff)."""
    policy, session = served(tmp_path, RUNOFF_RUN_FILE)
    _, record, result = played_both_ways(policy, session)
    assert record.protocol == "runoff" and not record.aborted
    assert [(t.agent, t.seats) for t in record.turns if t.round == 2] == [(6, (6, 1, 0)), (7, (7, 0, 1))]
    assert [(t.agent, t.round, t.text, t.seats) for t in result.record.turns] == [
        (t.agent, t.round, t.text, t.seats) for t in record.turns
    ]
    assert result.answer.rule == "runoff" and result.answer.answer == "42" and result.answer.correct
