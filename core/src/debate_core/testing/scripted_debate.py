"""Debates without a model: a policy that returns canned texts, and ``scripted_debate`` that
runs the real debate (``run_debate``) on them over the byte tokenizer.

Used by this package's tests and by the ``make_debate`` fixture of ``debate_core.testing``,
so plugin authors get records exactly as coordinators produce them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Literal, TypeVar

import attrs

from debate_core.debate.history_policies import AllRounds
from debate_core.debate.personas import DefaultPersonas
from debate_core.debate.protocols import builtin_coordinator
from debate_core.debate.rendering import RoleColonRenderer
from debate_core.debate.running import run_debate
from debate_core.debate.setup import DebateSetup
from debate_core.debate.xml_parser import XmlParser
from debate_core.records import (
    DebateEpisode,
    DebateRecord,
    Grader,
    HistoryPolicy,
    PersonaSet,
    Problem,
    Renderer,
    SampledAction,
    StopCondition,
    Tokenizer,
)
from debate_core.testing.tokenizer import ByteTokenizer

T = TypeVar("T")


@attrs.frozen
class ScriptedCall:
    """What a scripted response function is told about the turn it answers."""

    step: int
    prompt_text: str
    temperature: float
    seed: int | None


Script = Sequence[str] | Mapping[int, str] | Callable[[ScriptedCall], str]
"""Texts by step (a sequence), by round (a mapping, 1-based), or a function of the call."""


class ScriptedPolicy:
    """An ``AgentPolicy`` for one agent that returns canned texts, as a sampler would:
    cut after the first string stop, or ended with the first token-id stop, cut to
    ``max_tokens``; every token has logprob ``logprob``.

    Use one instance per agent: it counts its own calls (call ``k`` is the agent's step ``k``,
    round ``k + 1`` under both built-in protocols). A script that runs out raises, which fails
    that turn.
    """

    def __init__(self, script: Script, tokenizer: Tokenizer | None = None, *, logprob: float = -1.0) -> None:
        self.script = script
        self.tokenizer = tokenizer if tokenizer is not None else ByteTokenizer()
        self.logprob = logprob
        self.calls: list[ScriptedCall] = []

    def _text(self, call: ScriptedCall) -> str:
        script = self.script
        if callable(script):
            return script(call)
        if isinstance(script, Mapping):
            if call.step + 1 not in script:
                raise LookupError(f"no scripted response for round {call.step + 1}")
            return script[call.step + 1]
        if call.step >= len(script):
            raise LookupError(f"no scripted response for step {call.step} (the script has {len(script)})")
        return script[call.step]

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        """The next canned text as a sampled action."""
        call = ScriptedCall(len(self.calls), self.tokenizer.decode(list(prompt)), temperature, seed)
        self.calls.append(call)
        text = self._text(call)
        stop_reason = "stop"
        if stop.strings:
            ends = [text.find(s) + len(s) for s in stop.strings if s and s in text]
            if ends:
                text = text[: min(ends)]
        tokens = list(self.tokenizer.encode(text, add_special_tokens=False))
        if stop.token_ids:
            tokens.append(stop.token_ids[0])
        if len(tokens) > max_tokens:
            tokens, stop_reason = tokens[:max_tokens], "length"
        decoded = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return SampledAction(tuple(tokens), (self.logprob,) * len(tokens), decoded, stop_reason)


def scripted_setup(
    num_agents: int,
    max_rounds: int,
    *,
    protocol: Literal["sequential", "parallel"] = "sequential",
    blind_review: bool = False,
    history: HistoryPolicy | None = None,
    personas: PersonaSet | None = None,
    renderer: Renderer | None = None,
    max_tokens: int = 4096,
    temperature: float = 1.0,
) -> DebateSetup:
    """A debate setup of built-in components over the byte tokenizer (for tests)."""
    coordinator = builtin_coordinator(protocol, blind_review)
    return DebateSetup(
        num_agents=num_agents,
        max_rounds=max_rounds,
        max_tokens=max_tokens,
        temperature=temperature,
        coordinator=coordinator,
        parser=XmlParser(),
        persona_set=personas or DefaultPersonas(),
        history_policy=history or AllRounds(),
        renderer=renderer or RoleColonRenderer(ByteTokenizer()),
    )


def run_sync(coroutine: Coroutine[object, None, T]) -> T:
    """Run a coroutine to completion from synchronous code, even inside a running event loop
    (then on a fresh loop in a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def run_scripted_debate(
    texts: Sequence[str],
    num_agents: int,
    *,
    protocol: Literal["sequential", "parallel"] = "sequential",
    question: str = "What is 6 * 7?",
    answer: str | None = None,
    max_rounds: int | None = None,
    setup: DebateSetup | None = None,
    grader: Grader | None = None,
    seed: int = 0,
    debate_id: str = "scripted",
) -> DebateEpisode:
    """``scripted_debate`` for async callers, returning the whole episode (tokens included)."""
    if num_agents < 1:
        raise ValueError("a debate needs at least one agent")
    rounds = max_rounds if max_rounds is not None else max(1, math.ceil(len(texts) / num_agents))
    if setup is None:
        setup = scripted_setup(num_agents, rounds, protocol=protocol)
    tokenizer = getattr(setup.renderer, "tokenizer", None)
    policies = [ScriptedPolicy(list(texts[agent::num_agents]), tokenizer) for agent in range(num_agents)]
    problem = Problem(id=debate_id, question=question, answer=answer)
    return await run_debate(problem, setup, policies, seed=seed, debate_id=debate_id, grader=grader)


def scripted_debate(
    texts: Sequence[str],
    num_agents: int,
    protocol: Literal["sequential", "parallel"] = "sequential",
    *,
    question: str = "What is 6 * 7?",
    answer: str | None = None,
    max_rounds: int | None = None,
    setup: DebateSetup | None = None,
    grader: Grader | None = None,
    seed: int = 0,
    debate_id: str = "scripted",
) -> DebateRecord:
    """The record of a debate whose responses are ``texts`` in commit order (agent ``k % N``
    answers the ``k``-th text), run through the real debate (``run_debate``).

    The debate's rules apply: the debate stops at the first failed turn or when a whole
    round says YES to consensus, and later texts are then unused; a missing text (fewer than
    ``N * rounds``) fails that turn. ``max_rounds`` defaults to ``ceil(len(texts) / N)``.
    """
    episode = run_sync(
        run_scripted_debate(
            texts,
            num_agents,
            protocol=protocol,
            question=question,
            answer=answer,
            max_rounds=max_rounds,
            setup=setup,
            grader=grader,
            seed=seed,
            debate_id=debate_id,
        )
    )
    return episode.record
