"""What an RL iteration's debates say about collapse (docs/training.md#collapse-alarms): figures
that need no labels, and, where ground truth exists, two that read it for monitoring only (no
reward ever sees them).

An agent's *answer* in a turn is what the run's grader reads in its solution (``Grade.extracted``,
whitespace collapsed), or without a grader the solution itself, whitespace collapsed; a turn
that broke the output contract, or a solution the grader reads no answer in, has none. An
agent's final answer is that of its latest turn that followed the contract
(``DebateRecord.final_turn``). Label-free, under ``monitor/``:

* ``answer_diversity``: per debate of at least two agents, the distinct final answers over the
  agents (an agent without an answer counts as one more distinct answer), averaged over those
  debates: 1/N when every agent agrees, 1 when none does;
* ``degenerate_consensus``: share of debates of at least two agents whose agents all gave the
  same answer in round 1 and all end on it: nobody ever disagreed;
* ``no_signal``: share of debates whose advantages are all zero (the rewards, failed-turn
  penalties included, do not vary across the agents in any stream), dropped debates included;
* ``top_answer_share``: share of all the batch's final answers taken by its most common one
  (omitted when no agent has an answer);
* ``unreadable_answers``: share of agents without a final answer.

With ground truth (turn grades), for monitoring only:

* ``reward_accuracy``: over every pair of agents of a debate whose final answers differ in
  correctness (one right, one wrong), the share where the reward plugin gives the right agent a
  strictly higher reward (a tie is a miss); ``reward_pairs`` counts those pairs;
* ``label_accuracy``: over debates with graded final answers, the share whose majority answer
  (held by more agents than any other, as the ``majority`` reward reads it; a tie for the most is
  no majority, and counts wrong) is right; ``labelled_debates`` counts them.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

from debate_core.records import DebateRecord, Grader, Problem, RewardResult, Turn
from debate_core.rewards.advantages import UNIFORM_TOLERANCE, DebateAdvantages
from debate_core.stats import mean

PREFIX = "monitor"
"""The metrics' namespace in a metrics record."""


def read_answer(turn: Turn | None, grader: Grader | None, truth: str | None) -> str | None:
    """The answer of a turn (module docstring); ``None`` when it has none. ``truth`` is only handed
    to the grader's ``grade``, whose extraction does not depend on it."""
    if turn is None or turn.failed:
        return None
    if grader is None:
        text = " ".join(turn.response.solution.split())
        return text or None
    grade = grader.grade(turn.response.solution, truth or "")
    if not grade.formatted or grade.extracted is None:
        return None
    return " ".join(grade.extracted.split())


def uniform(advantages: DebateAdvantages | None) -> bool:
    """No advantage of the debate differs from zero (a dropped debate has none)."""
    if advantages is None:
        return True
    values = [*advantages.agent_advantages]
    values += [x for rows in advantages.step_advantages.values() for row in rows for x in row]
    return all(abs(x) <= UNIFORM_TOLERANCE for x in values)


def _distinct(answers: Sequence[str | None]) -> int:
    return len({a for a in answers if a is not None}) + sum(a is None for a in answers)


def _agreed_throughout(record: DebateRecord, first: Sequence[str | None], finals: Sequence[str | None]) -> bool:
    """Every agent answered in round 1, all alike, and every final answer is that one."""
    return len(first) == record.num_agents and first[0] is not None and len({*first, *finals}) == 1


def label_free_metrics(
    records: Sequence[DebateRecord],
    problems: Sequence[Problem],
    advantages: Sequence[DebateAdvantages | None],
    grader: Grader | None,
) -> dict[str, float]:
    """The label-free figures of a batch (module docstring), under ``monitor/``."""
    diversity: list[float] = []
    degenerate: list[float] = []
    everything: list[str | None] = []
    for record, problem in zip(records, problems, strict=True):
        finals = [read_answer(record.final_turn(a), grader, problem.answer) for a in range(record.num_agents)]
        everything += finals
        if record.num_agents < 2:
            continue
        first = [read_answer(t, grader, problem.answer) for t in record.turns if t.round == 1]
        diversity.append(_distinct(finals) / record.num_agents)
        degenerate.append(float(_agreed_throughout(record, first, finals)))
    out = {
        f"{PREFIX}/no_signal": mean(float(uniform(a)) for a in advantages),
        f"{PREFIX}/unreadable_answers": mean(float(a is None) for a in everything),
    }
    if diversity:
        out[f"{PREFIX}/answer_diversity"] = mean(diversity)
        out[f"{PREFIX}/degenerate_consensus"] = mean(degenerate)
    readable = Counter(a for a in everything if a is not None)
    if readable:
        out[f"{PREFIX}/top_answer_share"] = readable.most_common(1)[0][1] / len(everything)
    return out


def _final_grade(record: DebateRecord, agent: int) -> float | None:
    turn = record.final_turn(agent)
    return None if turn is None else turn.grade


def ground_truth_metrics(
    records: Sequence[DebateRecord],
    problems: Sequence[Problem],
    results: Sequence[RewardResult],
    grader: Grader | None,
) -> dict[str, float]:
    """Reward and label accuracy (module docstring), for monitoring only; ``{}`` without grades."""
    ranked: list[float] = []
    labels: list[float] = []
    for record, problem, result in zip(records, problems, results, strict=True):
        grades = [_final_grade(record, a) for a in range(record.num_agents)]
        for i, j in itertools.combinations(range(record.num_agents), 2):
            gi, gj = grades[i], grades[j]
            if gi is None or gj is None or gi == gj:
                continue
            right, wrong = (i, j) if gi > gj else (j, i)
            ranked.append(float(result.agent_rewards[right] > result.agent_rewards[wrong]))
        if all(g is None for g in grades):
            continue
        answers = [read_answer(record.final_turn(a), grader, problem.answer) for a in range(record.num_agents)]
        counts = Counter(a for a in answers if a is not None).most_common()
        unique = bool(counts) and (len(counts) == 1 or counts[0][1] > counts[1][1])
        holder = answers.index(counts[0][0]) if unique else None
        labels.append(float(holder is not None and grades[holder] == 1.0))
    out: dict[str, float] = {}
    if ranked:
        out[f"{PREFIX}/reward_accuracy"] = mean(ranked)
        out[f"{PREFIX}/reward_pairs"] = float(len(ranked))
    if labels:
        out[f"{PREFIX}/label_accuracy"] = mean(labels)
        out[f"{PREFIX}/labelled_debates"] = float(len(labels))
    return out
