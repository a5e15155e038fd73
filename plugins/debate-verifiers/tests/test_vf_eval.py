"""``vf-eval debate_verifiers`` offline against ``debate serve`` (docs/verifiers.md): every
episode succeeds, each agent's ``debate_reward`` is what ``debate score`` prints for the saved
transcript, the debates are the ones ``debate run --questions`` holds with the same seeds, and a
run whose every episode failed (``vf-eval`` still exits 0) is caught by ``debate-verifiers-check``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from debate_core.hosting import load_problems

Served = Any  # conftest.Served: the run directory, the served URL and model name

VF_EVAL = shutil.which("vf-eval") or str(Path(sys.executable).parent / "vf-eval")
CHECK = shutil.which("debate-verifiers-check") or str(Path(sys.executable).parent / "debate-verifiers-check")
TASKS = 2
STOP_MARKER = "</consensus_reason>"  # the XML output contract's last tag (docs/protocol.md)


def vf_eval(served: Served, out: Path, url: str | None = None, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBATE_ENDPOINT_KEY": "unused", "OMP_NUM_THREADS": "1"}
    command = [
        VF_EVAL,
        "debate_verifiers",
        "-m",
        served.model,
        "-n",
        str(TASKS),
        "--client.base-url",
        url or served.url,
        "--client.api-key-var",
        "DEBATE_ENDPOINT_KEY",
        "--no-push",
        "--env.taskset.run-file",
        str(served.run / "config.toml"),
        "--env.transcripts-dir",
        str(out / "transcripts"),
        "-o",
        str(out / "outputs"),
        *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, check=False)


def episodes(out: Path) -> list[Any]:
    (traces,) = (out / "outputs").glob("*/traces.jsonl")
    return [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_vf_eval_plays_the_debate_and_each_agent_s_reward_is_debate_score_s(served: Served, tmp_path: Path) -> None:
    from debate_core.cli import main

    done = vf_eval(served, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    check = subprocess.run(
        [CHECK, "--strict", str(next((tmp_path / "outputs").glob("*")))], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stderr
    played = episodes(tmp_path)
    assert len(played) == TASKS and all(e["ok"] for e in played)
    transcripts = sorted((tmp_path / "transcripts").glob("*.json"))
    assert len(transcripts) == TASKS
    reward = (
        __import__("debate_core.config", fromlist=["x"])
        .load_run_config(
            served.run / "config.toml", registry=__import__("debate_core.plugin", fromlist=["x"]).get_registry()
        )
        .reward
    )
    for episode in sorted(played, key=lambda e: e["task"]["data"]["idx"]):
        (transcript,) = [t for t in transcripts if t.name.startswith(episode["task"]["data"]["id"] + "-")]
        scored = subprocess.run(
            [sys.executable, "-m", "debate_core.cli", "score", str(transcript), "--reward", reward.name],
            capture_output=True,
            text=True,
            check=True,
        )
        rewards = json.loads(scored.stdout)["rewards"]
        assert episode["traces"], "an episode with no turn"
        for trace in episode["traces"]:
            agent = trace["info"]["debate"]["agent"]
            assert trace["rewards"]["debate_reward"]["score"] == rewards[agent]
            assert trace["metrics"]["debate_answer_found"] in (0.0, 1.0) and "debate_answer_correct" in trace["metrics"]
            assert (
                trace["task"]["data"]["prompt"][0]["role"] == "system"
            )  # the turn's own prompt, as debate run renders it
    # whole debates: round 2 was played, its turns kept the contract and compared the agents (the
    # rewards agree anyway when every agent gives the same answer: tests/hosting/test_scripted_parity.py
    # checks rewards that differ between agents)
    rounds = {t["info"]["debate"]["round"] for e in played for t in e["traces"]}
    assert max(rounds) >= 2, rounds
    second = [
        turn
        for path in transcripts
        for turn in json.loads(path.read_text(encoding="utf-8"))["turns"]
        if turn["round"] == 2
    ]
    assert second and any("<comparison>Agent" in turn["text"] for turn in second), [t["text"] for t in second]
    # the same debates as debate run --questions over the same problems (seed run.seed + i)
    problems = load_problems(served.run / "config.toml")[:TASKS]
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(json.dumps({"id": p.id, "question": p.question, "answer": p.answer}) + "\n" for p in problems),
        encoding="utf-8",
    )
    out = tmp_path / "debate-run.jsonl"
    config = str(served.run / "config.toml")
    assert (
        main(
            [
                "run",
                config,
                "--checkpoint",
                str(served.run),
                "--questions",
                str(questions),
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    expected = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for problem, record in zip(problems, expected, strict=True):
        (transcript,) = [t for t in transcripts if t.name.startswith(problem.id + "-")]
        ours = json.loads(transcript.read_text(encoding="utf-8"))
        assert [(t["agent"], t["round"], t["text"]) for t in ours["turns"]] == [
            (t["agent"], t["round"], t["text"]) for t in record["turns"]
        ]


def test_a_run_whose_every_episode_failed_is_caught(served: Served, tmp_path: Path) -> None:
    """Nothing listens at the endpoint: vf-eval exits 0 with every episode failed, and the check fails."""
    done = vf_eval(served, tmp_path, "http://127.0.0.1:9/v1")
    assert done.returncode == 0  # vf-eval's own status says nothing
    check = subprocess.run(
        [CHECK, str(next((tmp_path / "outputs").glob("*")))], capture_output=True, text=True, check=False
    )
    assert check.returncode == 1 and "0 of 2 episodes succeeded" in check.stderr


def test_a_fixed_agent_is_not_trained(served: Served, tmp_path: Path) -> None:
    done = vf_eval(served, tmp_path, None, "--env.fixed-agents", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    traces = [t for e in episodes(tmp_path) for t in e["traces"]]
    standing = {t["info"]["debate"]["agent"]: t["agent"] for t in traces}
    assert standing, "no turn played"
    for agent, info in standing.items():
        assert info["trainable"] is (agent != 1), info


@pytest.mark.skipif(shutil.which("uv") is None, reason="verifiers' stock harnesses run their program with uv")
def test_a_stock_harness_plays_the_turns_too(served: Served, tmp_path: Path) -> None:
    """verifiers' ``null`` harness streams and sends the agent's own sampling, not the turn's
    stop: each turn's reply is its trace's last message, cut after the first stop."""
    seats = [arg for agent in (0, 1) for arg in (f"--env.agent-{agent}.harness.id", "null")]
    done = vf_eval(served, tmp_path, None, *seats)
    assert done.returncode == 0, done.stderr[-3000:]
    played = episodes(tmp_path)
    assert len(played) == TASKS and all(e["ok"] for e in played)
    for episode in played:
        (transcript,) = (tmp_path / "transcripts").glob(episode["task"]["data"]["id"] + "-*.json")
        turns = json.loads(transcript.read_text(encoding="utf-8"))["turns"]
        replies = [
            [n["message"]["content"] for n in t["nodes"] if n["sampled"]][-1]
            for t in sorted(
                episode["traces"], key=lambda t: (t["info"]["debate"]["round"], t["info"]["debate"]["agent"])
            )
        ]
        assert len(turns) == len(replies) > 0
        for turn, reply in zip(turns, replies, strict=True):
            # the streamed reply, cut at the turn's first stop; a stop on the contract's marker leaves
            # it out of the reply, and the debate writes it back (docs/verifiers.md)
            assert turn["text"] and (reply.startswith(turn["text"]) or turn["text"] == reply + STOP_MARKER)
