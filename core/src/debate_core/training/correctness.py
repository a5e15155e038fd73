"""Ground-truth measurements of debates on verifiable datasets (docs/training.md#metrics).

For one debate with a known answer every response is graded. Each agent's final answer is its
latest turn that followed the output contract (``DebateRecord.final_turn``). The measurements:

* ``format``: share of responses whose answer the grader could read; ``response_correct``:
  share of all responses (every round) that are correct;
* ``correct``: share of the agents' *final* answers that are correct; ``pass@k`` (any final
  answer correct), ``avg@k`` (their mean, ``correct`` per debate), and ``cons@k``: the
  majority of the final answers, peer votes breaking ties (the ``majority`` answer rule, the
  seeds' cons@k) is correct;
* ``answer_correct``: the debate's answer under the rule in force (``debate.final_answer``: the
  answer ``debate run`` prints) is correct, and ``rule/{name}/correct`` the same under each
  rule evaluated beside it; ``round1_cons@k`` and ``round1_pass@k``: the majority of the
  agents' round-1 answers, and any of them, is correct (docs/answer-rules.md#in-evaluation);
* judge accuracy: among valid votes between one correct and one wrong response (a
  *decidable* vote), the share that prefers the correct one; an ``=`` on such a pair is a
  wrong judgement, counted in ``judge_decidable_votes`` and ``judge_ties``;
* answer changes from each agent's first to its last response: ``wrong_to_right`` and
  ``right_to_wrong``, as shares of the agents that answered more than once;
* ``consensus_accuracy``: among informed turns that followed the contract, the share whose
  ``YES``/``NO`` is right: YES exactly when every final answer the turn saw equals its own
  (``consensus_turns`` counts them);
* ``round1_disagreement``: share of debates whose round-1 answers differ, and
  ``round1_disagreement_continued``: the share of those that went on to round 2;
* ``wrong_mode_share``: per problem, the share of the final answers held by its most common
  wrong answer (0 when none is wrong), averaged over problems: how much the mistakes agree. Near
  ``1 - correct`` they are one shared mistake that a majority would confirm; near ``0`` scattered.

The responses a vote compares are those ``DebateRecord.visible_responses`` names (the latest
turn of each agent among the turns the judge could see); a vote naming an agent the judge
has not seen is skipped. A response that breaks the output contract is neither formatted nor
correct. Standard errors take problems as the unit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import attrs

from debate_core.debate.final_answer import MajorityRule, choose_answer, final_answer
from debate_core.records import AnswerRule, AuthoredComparison, DebateRecord, Grade, Grader, Turn, tally_votes
from debate_core.stats import mean, standard_error

_UNGRADED = Grade(formatted=False, correct=False, extracted=None)


@attrs.frozen
class JudgeTally:
    """Votes on decidable pairs (one correct and one wrong response): how many, how many
    preferred the correct one, and how many called the two equal."""

    decidable: int = 0
    agreed: int = 0
    ties: int = 0

    def __add__(self, other: JudgeTally) -> JudgeTally:
        return JudgeTally(self.decidable + other.decidable, self.agreed + other.agreed, self.ties + other.ties)

    def metrics(self, prefix: str) -> dict[str, float]:
        """``judge_decidable_votes``, ``judge_ties`` and, with a decidable vote, ``judge_accuracy``
        (``_se`` binomial over the votes) under ``prefix``."""
        out = {f"{prefix}/judge_decidable_votes": float(self.decidable), f"{prefix}/judge_ties": float(self.ties)}
        if self.decidable:
            accuracy = self.agreed / self.decidable
            out[f"{prefix}/judge_accuracy"] = accuracy
            out[f"{prefix}/judge_accuracy_se"] = math.sqrt(accuracy * (1.0 - accuracy) / self.decidable)
        return out


@attrs.frozen
class ConsensusTally:
    """Informed turns that followed the contract, and how many said YES exactly when every final
    answer they saw equals their own (docs/protocol.md#when-a-debate-ends)."""

    turns: int = 0
    right: int = 0

    def __add__(self, other: ConsensusTally) -> ConsensusTally:
        return ConsensusTally(self.turns + other.turns, self.right + other.right)


def consensus_tally(record: DebateRecord, grades: Sequence[Grade]) -> ConsensusTally:
    """Whether each informed turn's YES or NO matches the answers it saw (an unreadable answer,
    its own or another's, agrees with nothing)."""
    turns = right = 0
    for position, turn in enumerate(record.turns):
        if not turn.informed or turn.failed:
            continue
        own = grades[position].extracted if grades[position].formatted else None
        seen = [
            grades[p].extracted if grades[p].formatted else None
            for agent, p in record.visible_responses(turn).items()
            if agent != turn.agent
        ]
        agree = own is not None and all(answer == own for answer in seen)
        turns += 1
        right += int(turn.response.consensus == agree)
    return ConsensusTally(turns, right)


@attrs.frozen
class AnswerChanges:
    """First-to-last answer changes of the agents that answered more than once."""

    agents: int = 0
    wrong_to_right: int = 0
    right_to_wrong: int = 0

    def __add__(self, other: AnswerChanges) -> AnswerChanges:
        return AnswerChanges(
            self.agents + other.agents,
            self.wrong_to_right + other.wrong_to_right,
            self.right_to_wrong + other.right_to_wrong,
        )


@attrs.frozen
class GradedDebate:
    """The grades of one debate's turns (in commit order), of its agents' final answers, and
    whether the debate's final answer is correct."""

    turn_grades: tuple[Grade, ...]
    final_grades: tuple[Grade, ...]
    final_answer_correct: bool
    judge: JudgeTally
    judge_by_agent: Mapping[int, JudgeTally]
    changes: AnswerChanges = AnswerChanges()
    round1_disagreement: bool = False
    """The agents' round-1 answers differ (an unreadable answer counts as different)."""
    continued: bool = False
    """The debate played a round 2."""
    consensus: ConsensusTally = ConsensusTally()
    rules: tuple[tuple[str, bool], ...] = ()
    """Whether the debate's answer is correct under each rule graded, the rule in force first."""
    round1_majority_correct: bool = False
    """The majority of the agents' round-1 answers is correct."""
    round1_any_correct: bool = False
    """At least one round-1 answer is correct."""

    @property
    def answer_correct(self) -> float:
        """The debate's answer under the rule in force is correct (``cons@k`` without rules)."""
        return float(self.rules[0][1]) if self.rules else self.cons_at_k

    @property
    def pass_at_k(self) -> float:
        return float(any(g.correct for g in self.final_grades))

    @property
    def avg_at_k(self) -> float:
        return sum(g.correct for g in self.final_grades) / len(self.final_grades) if self.final_grades else 0.0

    @property
    def cons_at_k(self) -> float:
        return float(self.final_answer_correct)

    @property
    def wrong_mode_share(self) -> float:
        """The share of the final answers held by the most common readable wrong answer."""
        wrong = Counter(g.extracted for g in self.final_grades if g.formatted and not g.correct)
        return max(wrong.values(), default=0) / len(self.final_grades) if self.final_grades else 0.0


def grade_turn(turn: Turn, answer: str, grader: Grader) -> Grade:
    """The grade of one response; a response that breaks the output contract is ungraded (0, 0)."""
    if turn.failed:
        return _UNGRADED
    return grader.grade(turn.response.solution, answer)


def judge_tally(
    record: DebateRecord, grades: Sequence[Grade], judges: Iterable[int] | None = None
) -> dict[int, JudgeTally]:
    """Per judging agent: its valid votes on decidable pairs and how many preferred the correct one.

    ``grades`` are the grades of ``record.turns``, in order.
    """
    allowed = None if judges is None else set(judges)
    by_turn: dict[int, list[AuthoredComparison]] = {}
    for vote in tally_votes(record).votes:
        by_turn.setdefault(vote.turn_index, []).append(vote)
    tallies: dict[int, JudgeTally] = {}
    for turn in record.turns:
        if allowed is not None and turn.agent not in allowed:
            continue
        latest = record.visible_responses(turn)
        decidable = agreed = ties = 0
        for vote in by_turn.get(turn.turn_index, ()):
            if vote.a not in latest or vote.b not in latest:
                continue
            a_correct = grades[latest[vote.a]].correct
            b_correct = grades[latest[vote.b]].correct
            if a_correct == b_correct:
                continue
            decidable += 1
            if vote.op == "=":
                ties += 1
            else:
                agreed += int(a_correct)
        if decidable or ties:
            tallies[turn.agent] = tallies.get(turn.agent, JudgeTally()) + JudgeTally(decidable, agreed, ties)
    return tallies


def grade_debate(
    record: DebateRecord,
    grader: Grader,
    answer: str | None = None,
    rules: Sequence[tuple[str, AnswerRule]] = (),
) -> GradedDebate | None:
    """Grade a debate against its answer, its own answer under each of ``rules`` (name, rule; the
    rule in force first); ``None`` when there is no answer to check against."""
    truth = answer if answer is not None else record.answer
    if truth is None:
        return None
    turn_grades = tuple(grade_turn(t, truth, grader) for t in record.turns)
    position = {id(t): i for i, t in enumerate(record.turns)}
    finals = tuple(
        _UNGRADED if (turn := record.final_turn(agent)) is None else turn_grades[position[id(turn)]]
        for agent in range(record.num_agents)
    )
    by_agent = judge_tally(record, turn_grades)
    total = JudgeTally()
    for tally in by_agent.values():
        total = total + tally
    by_rule = tuple((name, bool(final_answer(record, grader, truth, rule).correct)) for name, rule in rules)
    majority = dict(by_rule).get("majority")
    correct = majority if majority is not None else bool(final_answer(record, grader, truth, MajorityRule()).correct)
    first_round = [
        g.extracted if g.formatted else None for g, t in zip(turn_grades, record.turns, strict=True) if t.round == 1
    ]
    round1 = {t.agent: t.response.solution for t in record.turns if t.round == 1 and not t.failed}
    return GradedDebate(
        turn_grades,
        finals,
        correct,
        total,
        by_agent,
        answer_changes(record, turn_grades),
        round1_disagreement=len(first_round) > 1 and (None in first_round or len(set(first_round)) > 1),
        continued=record.rounds_played >= 2,
        consensus=consensus_tally(record, turn_grades),
        rules=by_rule,
        round1_majority_correct=bool(choose_answer(round1, grader, truth).correct),
        round1_any_correct=any(g.correct for g, t in zip(turn_grades, record.turns, strict=True) if t.round == 1),
    )


def answer_changes(record: DebateRecord, grades: Sequence[Grade]) -> AnswerChanges:
    """Each agent's first response against its last (agents with one response are left out)."""
    total = AnswerChanges()
    for agent in range(record.num_agents):
        indices = [i for i, t in enumerate(record.turns) if t.agent == agent]
        if len(indices) < 2:
            continue
        first, last = grades[indices[0]].correct, grades[indices[-1]].correct
        total = total + AnswerChanges(1, int(not first and last), int(first and not last))
    return total


def grade_samples(answers: Sequence[Turn], grader: Grader, answer: str) -> GradedDebate:
    """Grade ``k`` independent answers to one problem (direct evaluation) as one group: each
    answer, and the final answer chosen among them by the same rule as a debate's (without
    votes, ties go to the first answer). A failed answer grades as wrong."""
    grades = tuple(grade_turn(turn, answer, grader) for turn in answers)
    solutions = {i: turn.response.solution for i, turn in enumerate(answers) if not turn.failed}
    correct = bool(choose_answer(solutions, grader, answer).correct)
    return GradedDebate(grades, grades, correct, JudgeTally(), {})


def problem_means(values: Sequence[float], debates_per_problem: int) -> list[float]:
    """Per problem, the mean of its debates' values: ``values`` holds each problem's
    ``debates_per_problem`` debates one after another."""
    if debates_per_problem < 1 or len(values) % debates_per_problem:
        raise ValueError(f"{len(values)} values do not split into groups of {debates_per_problem} debates")
    return [mean(values[i : i + debates_per_problem]) for i in range(0, len(values), debates_per_problem)]


def answer_metrics(
    graded: Sequence[GradedDebate], prefix: str, k: int, debates_per_problem: int = 1
) -> dict[str, float]:
    """The debate's answer under each rule graded (``answer_correct``: the rule in force), and the
    round-1 majority and pass@k; none for direct answers, which are graded under no rule."""
    if not graded or not graded[0].rules:
        return {}

    def over_problems(values: Sequence[float]) -> list[float]:
        return problem_means(values, debates_per_problem)

    answered = over_problems([d.answer_correct for d in graded])
    out = {f"{prefix}/answer_correct": mean(answered), f"{prefix}/answer_correct_se": standard_error(answered)}
    for position, (name, _) in enumerate(graded[0].rules):
        out[f"{prefix}/rule/{name}/correct"] = mean(over_problems([float(d.rules[position][1]) for d in graded]))
    out[f"{prefix}/round1_cons@{k}"] = mean(over_problems([float(d.round1_majority_correct) for d in graded]))
    out[f"{prefix}/round1_pass@{k}"] = mean(over_problems([float(d.round1_any_correct) for d in graded]))
    return out


def verifiable_metrics(
    graded: Sequence[GradedDebate], prefix: str, k: int, debates_per_problem: int = 1
) -> dict[str, float]:
    """The ground-truth metrics of a batch of graded debates under ``prefix`` (module docstring).

    ``graded`` holds each problem's ``debates_per_problem`` debates one after another. ``correct``,
    ``cons@k``, ``pass@k`` and ``wrong_mode_share`` are means over problems of each problem's mean
    over its debates; ``correct_se`` and ``cons@k_se`` take problems as the unit (the responses to
    one problem are not independent); ``judge_accuracy_se`` is binomial over decidable votes.
    """
    if not graded:
        return {}
    responses = [g for d in graded for g in d.turn_grades]
    judge = JudgeTally()
    changes = AnswerChanges()
    consensus_votes = ConsensusTally()
    for d in graded:
        judge = judge + d.judge
        changes = changes + d.changes
        consensus_votes = consensus_votes + d.consensus
    per_problem = problem_means([d.avg_at_k for d in graded], debates_per_problem)
    consensus = problem_means([d.cons_at_k for d in graded], debates_per_problem)
    out = {
        f"{prefix}/format": mean([float(g.formatted) for g in responses]),
        f"{prefix}/response_correct": mean([float(g.correct) for g in responses]),
        f"{prefix}/correct": mean(per_problem),
        f"{prefix}/correct_se": standard_error(per_problem),
        f"{prefix}/pass@{k}": mean(problem_means([d.pass_at_k for d in graded], debates_per_problem)),
        f"{prefix}/avg@{k}": mean(per_problem),
        f"{prefix}/cons@{k}": mean(consensus),
        f"{prefix}/cons@{k}_se": standard_error(consensus),
        f"{prefix}/wrong_mode_share": mean(problem_means([d.wrong_mode_share for d in graded], debates_per_problem)),
        **judge.metrics(prefix),
    }
    if consensus_votes.turns:
        share = consensus_votes.right / consensus_votes.turns
        out[f"{prefix}/consensus_accuracy"] = share
        out[f"{prefix}/consensus_accuracy_se"] = math.sqrt(share * (1.0 - share) / consensus_votes.turns)
        out[f"{prefix}/consensus_turns"] = float(consensus_votes.turns)
    out.update(answer_metrics(graded, prefix, k, debates_per_problem))
    disagreed = [d for d in graded if d.round1_disagreement]
    out[f"{prefix}/round1_disagreement"] = len(disagreed) / len(graded)
    if disagreed:
        out[f"{prefix}/round1_disagreement_continued"] = mean([float(d.continued) for d in disagreed])
    if changes.agents:
        out[f"{prefix}/wrong_to_right"] = changes.wrong_to_right / changes.agents
        out[f"{prefix}/right_to_wrong"] = changes.right_to_wrong / changes.agents
        out[f"{prefix}/agents_answering_twice"] = float(changes.agents)
    return out
