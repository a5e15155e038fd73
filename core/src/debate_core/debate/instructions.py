"""The instructions at the end of each prompt: what the agent must do this turn.

Round-1 bootstrapping (docs/protocol.md#what-an-agent-sees), driven by whom the agent can see:

* nobody has answered yet (the first agent of a sequential round 1, every agent of a
  parallel round 1, every turn under the ``none`` history): propose a solution, write
  ``N/A`` in evaluation and comparison;
* exactly one other agent has answered: evaluate it, propose a solution, no comparisons;
* two or more: evaluate them, propose a solution, compare only those who already answered.

From round 2 on, whenever earlier rounds are in view: meta-judging: evaluate the others'
solutions, evaluations and comparisons, improve the solution, and compare the other agents,
weighing their latest responses most. Comparisons need two other agents in view (with two
agents in a debate every comparison would involve the author, so there are none).

Every turn ends with when to say YES (when the contract has a consensus section): an agent that
has seen every other agent's latest solution says YES only if every final answer it sees agrees
with its own; any other agent is told to say NO, since its YES would not count (docs/protocol.md#when-a-debate-ends).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from debate_core.records import OutputContract


def _agents(ids: Iterable[int]) -> str:
    names = [f"Agent {i}" for i in ids]
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + f" and {names[-1]}"


@attrs.frozen
class _Labels:
    """How the instructions name the contract's sections, and its marker for an empty one."""

    solution: str
    evaluation: str
    comparison: str
    na: str

    @classmethod
    def of(cls, contract: OutputContract) -> _Labels:
        """The labels of ``contract``."""
        solution, evaluation, comparison = (contract.label(s) for s in ("solution", "evaluation", "comparison"))
        return cls(solution, evaluation, comparison, contract.empty_marker)


def turn_instructions(
    *,
    agent: int,
    round: int,
    max_rounds: int,
    answered_this_round: Iterable[int],
    seen_in_earlier_rounds: Iterable[int],
    contract: OutputContract,
    informed: bool = True,
    brief: bool = False,
) -> str:
    """The instructions for one turn.

    Args:
        agent: the agent about to answer.
        round: the current round (1-based).
        max_rounds: the debate's last round.
        answered_this_round: agents whose current-round answers are in the prompt.
        seen_in_earlier_rounds: agents whose earlier-round answers are in the prompt.
        contract: the output contract, for the names of its sections and its empty marker.
        informed: whether the prompt shows the latest solution of every other agent; the
            consensus sentence says that a YES counts only then (docs/protocol.md#when-a-debate-ends).
        brief: the same instructions in a sentence or two (``debate.instructions = "brief"``),
            for small models that learn the debate in a warm-start.
    """
    if brief:
        return _brief_instructions(
            agent, round, max_rounds, answered_this_round, seen_in_earlier_rounds, contract, informed
        )
    labels = _Labels.of(contract)
    consensus = _consensus_sentence(contract, informed)
    header = f"Round {round} of {max_rounds}. You are Agent {agent}."
    now = sorted({a for a in answered_this_round if a != agent})
    earlier = sorted({a for a in seen_in_earlier_rounds if a != agent})
    if not earlier:
        return _first_answers(header, now, labels) + consensus
    return _meta_judging(header, sorted(set(now) | set(earlier)), labels) + consensus


def _consensus_sentence(contract: OutputContract, informed: bool) -> str:
    """When to say YES: only an agent that has seen every other agent's latest solution may; a
    contract without a consensus section (three sections) has no YES to give."""
    if "consensus" not in contract.sections:
        return ""
    agree = contract.label("consensus")
    if informed:
        return f" Say YES in {agree} only if every final answer you see agrees with yours."
    return f" Say NO in {agree}: you have not seen every other agent's latest solution."


def _first_answers(header: str, now: list[int], labels: _Labels) -> str:
    """Round-1 bootstrapping, with no earlier round in view: evaluate and compare only the agents
    who already answered this round (nobody, one, or two or more)."""
    solution, evaluation, comparison, na = labels.solution, labels.evaluation, labels.comparison, labels.na
    if not now:
        return (
            f"{header} Nobody else has answered yet. Propose your solution in {solution}. "
            f"Write {na} in {evaluation} and {na} in {comparison}."
        )
    if len(now) == 1:
        return (
            f"{header} {_agents(now)} has answered above. Propose your own solution in {solution}, "
            f"evaluate {_agents(now)}'s solution in {evaluation}, and write {na} in {comparison}."
        )
    return (
        f"{header} {_agents(now)} have answered above. Propose your own solution in {solution}, "
        f"evaluate their solutions in {evaluation}, and in {comparison} compare only agents who have "
        f"already answered ({_agents(now)}), never yourself."
    )


def _meta_judging(header: str, others: list[int], labels: _Labels) -> str:
    """Earlier rounds in view: judge the others' solutions, evaluations and comparisons, improve
    the solution, and compare the others when there are two of them to compare."""
    if len(others) < 2:
        comparing = f"Write {labels.na} in {labels.comparison}: there are not two other agents to compare."
    else:
        comparing = (
            f"In {labels.comparison}, compare the other agents ({_agents(others)}), one pair per line, "
            "weighing their most recent responses most; never include yourself."
        )
    return (
        f"{header} Read the responses above. Give your best solution in {labels.solution}, improving it where "
        f"the others showed you a mistake. In {labels.evaluation}, judge the other agents' solutions and also "
        "their evaluations and comparisons: say which judgments you agree with and why. " + comparing
    )


def _brief_instructions(
    agent: int,
    round: int,
    max_rounds: int,
    answered_this_round: Iterable[int],
    seen_in_earlier_rounds: Iterable[int],
    contract: OutputContract,
    informed: bool,
) -> str:
    """The brief instructions: the same rules (round-1 bootstrapping, whom to compare, when to say
    YES) in about a third of the tokens."""
    labels = _Labels.of(contract)
    solution, evaluation, comparison, na = labels.solution, labels.evaluation, labels.comparison, labels.na
    consensus = ""
    if "consensus" in contract.sections:  # a contract without one (three sections) has no YES to give
        agree = contract.label("consensus")
        consensus = f" YES in {agree} only if all answers agree with yours." if informed else f" NO in {agree}."
    header = f"Round {round} of {max_rounds}. You are Agent {agent}."
    others = sorted({a for a in (*answered_this_round, *seen_in_earlier_rounds) if a != agent})
    if not others:
        return f"{header} Solve it in {solution}, {na} in {evaluation} and {comparison}." + consensus
    checks = f"{header} Solve it in {solution}, check {_agents(others)} in {evaluation}"
    if len(others) < 2:
        return f"{checks}, {na} in {comparison}." + consensus
    return f"{checks}, compare them in {comparison}, never yourself." + consensus
