"""Every hook a debate plugin can implement: one registration hook per kind of component.

A plugin is a module (named by an entry point in the ``debate`` group) with functions
decorated by :data:`hookimpl`. Each hook takes no arguments and returns an iterable of
specs of its kind; the registries collect them and reject duplicate names.

A spec's ``build(options)`` makes the component when a run uses it. A component whose options
choose other components (a reward that wraps another) takes a second parameter,
``build(options, context)``: the host passes a :class:`~debate_core.plugin.BuildContext`
that builds the nested components through the same registry and names their key paths in
errors. Builds that take only the options keep working unchanged.

The functions below are specifications: pluggy reads their names, signatures and
docstrings but never calls them. Their ``return ()`` body (no specs) only keeps them
well-typed.
"""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

from debate_core.plugin._specs import (
    AnswerRuleSpec,
    BackendSpec,
    CoordinatorSpec,
    DatasetSpec,
    GraderSpec,
    HistoryPolicySpec,
    JudgeSpec,
    MetricSinkSpec,
    ParserSpec,
    PersonaSetSpec,
    RendererSpec,
    RewardSpec,
)

__all__ = [
    "HOOK_KINDS",
    "PROJECT_NAME",
    "debate_answer_rules",
    "debate_backends",
    "debate_coordinators",
    "debate_datasets",
    "debate_graders",
    "debate_history_policies",
    "debate_judges",
    "debate_metric_sinks",
    "debate_parsers",
    "debate_persona_sets",
    "debate_renderers",
    "debate_rewards",
    "hookimpl",
    "hookspec",
]

PROJECT_NAME = "debate"
"""The pluggy project name and the entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks the hook specifications below."""
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's hook implementation: ``@hookimpl`` above ``def debate_rewards(): ...``."""


@hookspec
def debate_parsers() -> Iterable[ParserSpec]:
    """Register output parsers: raw model text to a structured response, and the format itself.

    Returns:
        Specs whose ``build(options)`` returns an ``OutputParser``: ``parse(text: str) ->
        ParsedResponse`` and ``contract``, the ``OutputContract`` the prompts, stop conditions
        and reference responses are written from (see ``debate_core.records.output_contract``).

    Example::

        @hookimpl
        def debate_parsers():
            return [ParserSpec(name="json", description="JSON answers", build=lambda _: JsonParser())]
    """
    return ()


@hookspec
def debate_rewards() -> Iterable[RewardSpec]:
    """Register reward functions: a finished debate to rewards per agent (and per stream).

    Returns:
        Specs whose ``build(options)`` returns a callable
        ``(debate: DebateRecord) -> RewardResult`` (see ``debate_core.records.rewards``).

    Example::

        @hookimpl
        def debate_rewards():
            return [RewardSpec(name="brevity", description="shorter wins", build=Brevity, options=BrevityOptions)]

    A reward that wraps another (its options name it, ``[reward.options.inner]``) builds it with
    the build context the host passes as the second argument of ``build``::

        def build_smoothed(options: SmoothedOptions, context: BuildContext) -> Smoothed:
            return Smoothed(context.build("reward", options.inner, "inner"), options)
    """
    return ()


@hookspec
def debate_persona_sets() -> Iterable[PersonaSetSpec]:
    """Register persona sets: the system prompt and sampling temperature of each agent.

    Returns:
        Specs whose ``build(options)`` returns a ``PersonaSet`` with
        ``persona(agent_id: int, num_agents: int) -> Persona``.

    Example::

        @hookimpl
        def debate_persona_sets():
            return [PersonaSetSpec(name="terse", description="one-line personas", build=lambda _: Terse())]
    """
    return ()


@hookspec
def debate_history_policies() -> Iterable[HistoryPolicySpec]:
    """Register history policies: which earlier turns appear in an agent's prompt, and how.

    Returns:
        Specs whose ``build(options)`` returns a ``HistoryPolicy`` with
        ``select(turns, current_round) -> Sequence[HistoryEntry]``.

    Example::

        @hookimpl
        def debate_history_policies():
            return [HistoryPolicySpec(name="last_two", description="last 2 rounds", build=lambda _: LastRounds(2))]
    """
    return ()


@hookspec
def debate_datasets() -> Iterable[DatasetSpec]:
    """Register datasets: questions with optional ground-truth answers.

    Returns:
        Specs whose ``build(options)`` returns a ``Dataset`` with
        ``problems(split: str) -> Sequence[Problem]``.

    Example::

        @hookimpl
        def debate_datasets():
            return [DatasetSpec(name="gsm8k_local", description="GSM8K from disk", build=Gsm8k, options=Gsm8kOptions)]
    """
    return ()


@hookspec
def debate_graders() -> Iterable[GraderSpec]:
    """Register answer graders: the check of a final answer against the ground truth.

    Returns:
        Specs whose ``build(options)`` returns a ``Grader`` with
        ``grade(solution: str, answer: str) -> Grade``.

    Example::

        @hookimpl
        def debate_graders():
            return [GraderSpec(name="exact", description="exact string match", build=lambda _: Exact())]
    """
    return ()


@hookspec
def debate_backends() -> Iterable[BackendSpec]:
    """Register training backends: service clients with the Tinker SDK's surface.

    Returns:
        Specs whose ``build(options)`` returns a ``ServiceClient``-like object
        (see ``debate_core.backends.contract``). Import heavy libraries inside ``build``.

    Example::

        @hookimpl
        def debate_backends():
            return [BackendSpec(name="my_cluster", description="our server", build=connect, options=ClusterOptions)]
    """
    return ()


@hookspec
def debate_coordinators() -> Iterable[CoordinatorSpec]:
    """Register turn protocols: the order of turns and each turn's instructions.

    Returns:
        Specs whose ``build(options)`` returns a ``Coordinator`` that runs one debate.

    Example::

        @hookimpl
        def debate_coordinators():
            return [CoordinatorSpec(name="round_robin_2", description="...", build=RoundRobin)]
    """
    return ()


@hookspec
def debate_renderers() -> Iterable[RendererSpec]:
    """Register renderers: chat messages to prompt tokens, with matching stop conditions.

    Returns:
        Specs whose ``build(options)`` returns a factory ``(tokenizer) -> Renderer``.

    Example::

        @hookimpl
        def debate_renderers():
            return [RendererSpec(name="chatml", description="ChatML tags", build=lambda _: ChatMl)]
    """
    return ()


@hookspec
def debate_metric_sinks() -> Iterable[MetricSinkSpec]:
    """Register metric sinks: where one record of metrics per iteration goes.

    Returns:
        Specs whose ``build(options)`` returns a factory ``(run_dir: Path) -> MetricSink``.

    Example::

        @hookimpl
        def debate_metric_sinks():
            return [MetricSinkSpec(name="stdout", description="print metrics", build=lambda _: Stdout)]
    """
    return ()


@hookspec
def debate_judges() -> Iterable[JudgeSpec]:
    """Register external judges: components whose verdicts on the pairs of responses the agents
    compared are mixed into the peer reward, with a weight that falls to zero over the run (the
    ``judge_mix`` reward's option ``judge`` in a run file; docs/rewards.md#a-stronger-judge-phased-out).

    Returns:
        Specs whose ``build(options)`` returns a ``Judge``: ``await judge.compare(pairs, host)``
        gives one verdict per ``JudgePair`` (+1 first better, -1 second better, 0 equal); ``host``
        serves a sampling policy of any model the run's backend can serve.

    Example::

        class Longer:
            async def compare(self, pairs, host):
                return [(len(p.first.text) > len(p.second.text)) - (len(p.first.text) < len(p.second.text))
                        for p in pairs]

        @hookimpl
        def debate_judges():
            return [JudgeSpec(name="longer", description="prefers the longer response", build=lambda _: Longer())]
    """
    return ()


@hookspec
def debate_answer_rules() -> Iterable[AnswerRuleSpec]:
    """Register answer rules: how a finished debate becomes its one answer, the answer that
    evaluation grades, ``debate run``, ``debate show`` and ``debate serve`` print and the
    ``selected_answer`` reward pays agreement with (``debate.final_answer`` in a run file;
    docs/answer-rules.md).

    Returns:
        Specs whose ``build(options)`` returns an ``AnswerRule``:
        ``rule(debate, read_answer) -> DebateAnswer``, where ``read_answer(solution)`` reads the
        answer a solution gives (``None`` when it gives none). The rule must not read the ground
        truth and must not raise on a debate with no comparisons or no valid turn.

    Example::

        class LastWord:
            def __call__(self, debate, read_answer):
                turn = next((t for t in reversed(debate.turns) if not t.failed), None)
                if turn is None:
                    return DebateAnswer("last_word", None, None, ())
                solution = turn.response.solution
                answer = answer_of(solution, read_answer)[0]
                return DebateAnswer("last_word", answer, solution, (Candidate(answer, (turn.agent,), 1.0, solution),))

        @hookimpl
        def debate_answer_rules():
            return [AnswerRuleSpec(name="last_word", description="the latest valid answer", build=lambda _: LastWord())]
    """
    return ()


HOOK_KINDS: dict[str, str] = {
    "debate_parsers": ParserSpec.kind,
    "debate_rewards": RewardSpec.kind,
    "debate_persona_sets": PersonaSetSpec.kind,
    "debate_history_policies": HistoryPolicySpec.kind,
    "debate_datasets": DatasetSpec.kind,
    "debate_graders": GraderSpec.kind,
    "debate_backends": BackendSpec.kind,
    "debate_coordinators": CoordinatorSpec.kind,
    "debate_renderers": RendererSpec.kind,
    "debate_metric_sinks": MetricSinkSpec.kind,
    "debate_judges": JudgeSpec.kind,
    "debate_answer_rules": AnswerRuleSpec.kind,
}
"""Which kind of component each hook registers."""
