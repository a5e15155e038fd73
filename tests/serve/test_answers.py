"""What ``debate serve`` answers, over a scripted model (docs/training.md#serving-a-policy): the
policy's own name answers a question in the prompt evaluation's direct answers use, and the
``debate`` model answers with the debate's answer under ``debate.final_answer``. The scripted
model is built so that the two differ: agent 0 answers 41 on its own, the others 42, and every
judge prefers a 42."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from debate_core.config import load_run_config
from debate_core.debate.running import first_turn_prompt, run_debate
from debate_core.debate.sampling_policy import SamplingClientPolicy
from debate_core.plugin import get_registry
from debate_core.records import Problem
from debate_core.runtime.retries import RetryPolicy
from debate_core.runtime.session import BackendSession
from debate_core.runtime.token_meter import TokenMeter
from debate_core.serve.policy import ServedPolicy
from debate_core.serve.wire import ChatRequest
from debate_core.testing.tokenizer import ByteTokenizer
from debate_core.training.evaluation.evaluator import direct_setup
from debate_core.training.evaluation.policy_debate import PolicyDebate

from ..debate.helpers import response, sampled_future

pytest.importorskip("tinker", reason="the scripted sampler answers with the SDK's types")

RUN_FILE = """
[debate]
num_agents = 3
max_rounds = 2
coordinator = { name = "parallel", options = { blind_review = true } }
final_answer = { name = "vote_winner" }

[grader]
name = "boxed"
"""


class ScriptedSampler:
    """Agent 0 answers 41, agents 1 and 2 answer 42; in round 2 each judge prefers a 42 (agent 0
    compares 1 and 2: a tie). Every prompt it is given is kept."""

    def __init__(self, tokenizer: ByteTokenizer, prompts: list[str]) -> None:
        self.tokenizer = tokenizer
        self.prompts = prompts

    def sample(self, prompt: Any, num_samples: int, sampling_params: Any, *_: Any, **__: Any) -> Any:
        text = self.tokenizer.decode(prompt.to_ints())
        self.prompts.append(text)
        agent = int(text.split("You are Agent ", 1)[1][0])
        second_round = "Round 2 of" in text
        votes = {0: ["Agent 1 = Agent 2"], 1: ["Agent 2 > Agent 0"], 2: ["Agent 1 > Agent 0"]}[agent]
        solution = "\\boxed{41}" if agent == 0 else "\\boxed{42}"
        tokens = self.tokenizer.encode(response(solution, votes if second_round else []))
        return sampled_future(tokens)


class ScriptedSession:
    backend_name = "scripted"
    context_length = None

    def __init__(self) -> None:
        self.tokenizer = ByteTokenizer()
        self.retry = RetryPolicy(max_attempts=1)
        self.tokens = TokenMeter()
        self.prompts: list[str] = []

    def sampling_client(self) -> Any:
        return ScriptedSampler(self.tokenizer, self.prompts)

    sampler = BackendSession.sampler

    async def close(self, status: str = "success") -> None:
        pass


RUNOFF_RUN_FILE = """
[debate]
num_agents = 8
max_rounds = 2
coordinator = { name = "runoff" }
final_answer = { name = "runoff" }

[grader]
name = "boxed"
"""
"""The runoff (docs/protocol.md#the-runoff) over the same script: six candidates seated at 0, 1, 2,
0, 1, 2 answer 41, 42, 42, 41, 42, 42; agents 6 and 7 judge the finalists (agents 1 and 0) seated
at agent 0, which the script has call agents 1 and 2 equal: a tie, to the more held 42."""


def served(tmp_path: Path, run_text: str = RUN_FILE) -> tuple[ServedPolicy, ScriptedSession]:
    run_file = tmp_path / "run.toml"
    run_file.write_text(run_text, encoding="utf-8")
    registry = get_registry()
    config = load_run_config(run_file, registry=registry)
    session = ScriptedSession()
    debate = PolicyDebate.build(config, registry, session.tokenizer)
    return ServedPolicy(config, session, "policy", debate), session  # type: ignore[arg-type]


def ask(policy: ServedPolicy, model: str) -> Any:
    request = ChatRequest(model=model, messages=(_user("What is 40+2?"),))  # type: ignore[call-arg]
    (answer,) = asyncio.run(policy.answer(request))
    return answer


def _user(text: str) -> Any:
    from debate_core.records import Message

    return Message(role="user", content=text)


def test_the_policy_answers_a_question_in_the_prompt_of_direct_evaluation(tmp_path: Path) -> None:
    policy, session = served(tmp_path)
    answer = ask(policy, "policy")
    assert answer.text == "\\boxed{41}" and answer.direct["answer"] == "41" and answer.direct["format_ok"]
    # the prompt is agent 0's in the blind first round of the run's debate: what direct evaluation samples
    problem = Problem(id="q", question="What is 40+2?")
    expected = first_turn_prompt(problem, policy.setup)
    assert session.prompts == [session.tokenizer.decode(list(expected.tokens))]
    assert answer.prompt_tokens == len(expected.tokens)
    sampler = SamplingClientPolicy(policy.session.sampler(), policy.setup.renderer)
    episode = asyncio.run(run_debate(problem, direct_setup(policy.setup), [sampler] * 3, seed=0))
    assert episode.record.turns[0].prompt == expected.messages


def test_the_debate_model_answers_by_the_rule_in_force_and_beats_the_single_sample(tmp_path: Path) -> None:
    policy, _ = served(tmp_path)
    single = ask(policy, "policy")
    debate = ask(policy, "debate")
    # majority of the final answers 41, 42, 42 would be 42 too; here the votes decide: each 42 beat the 41
    assert debate.text == "42" and debate.debate["answer_rule"] == "vote_winner"
    assert debate.debate["answer_rule_fallback"] is None
    assert single.direct["answer"] == "41"  # wrong: the debate is right where one sample is not


def test_a_conversation_is_rendered_as_it_is(tmp_path: Path) -> None:
    from debate_core.records import Message

    policy, session = served(tmp_path)
    request = ChatRequest(  # type: ignore[call-arg]
        model="policy", messages=(Message(role="system", content="You are Agent 1."), _user("Say 42."))
    )
    (answer,) = asyncio.run(policy.answer(request))
    assert answer.direct is None and "Say 42." in session.prompts[0] and "Round 1 of" not in session.prompts[0]


def test_a_question_s_reply_is_cut_at_the_request_s_stop(tmp_path: Path) -> None:
    policy, _ = served(tmp_path)
    request = ChatRequest(model="policy", messages=(_user("What is 40+2?"),), stop=("{",))  # type: ignore[call-arg]
    (answer,) = asyncio.run(policy.answer(request))
    assert answer.text == "\\boxed" and answer.direct["answer"] == "41"  # the answer is read before the cut
