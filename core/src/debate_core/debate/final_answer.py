"""The debate's answer: the built-in answer rules and the one function everything that answers calls.

Every place a debate answers (evaluation, ``debate run``, ``debate serve``, ``debate show``, the
report and the ``selected_answer`` reward) calls :func:`final_answer` with the run's rule
(``debate.final_answer``). The rules are defined in docs/answer-rules.md:

* ``majority``: the answer most agents hold in their final solutions, ties to the larger summed
  peer-vote score of its agents, then the lowest agent id (the seeds' cons@k reading);
* ``vote_winner``: the solution the debate's comparisons score highest (Borda: a win 1, a tie
  1/2, each vote counted for the solution the judge was shown), and its answer;
* ``answer_votes``: the same votes summed per answer, votes between two solutions of the same
  answer left out, so that an answer is ranked by how it fares against the other answers;
* ``runoff``: the two answers most held in round 1 (a runoff judge's own blind answer left out),
  decided by the votes between a solution of each (a win 1, a tie 1/2 each), ties to the more
  held: the answer of the ``runoff`` coordinator.

A vote rule on a debate with no usable vote falls back to ``majority`` and says so
(``DebateAnswer.fallback``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

import attrs

from debate_core.debate.runoff_protocol import is_runoff_judge
from debate_core.plugin import PluginCall, checked_debate_answer
from debate_core.records import (
    AgentVotes,
    AnswerReader,
    AnswerRule,
    Candidate,
    DebateAnswer,
    DebateRecord,
    Grader,
    Turn,
    answer_of,
    tally_votes,
    vote_counts,
)

MAJORITY = "majority"


def grader_reader(grader: Grader | None) -> AnswerReader:
    """The answer a grader extracts from a solution (``None`` without a grader)."""
    if grader is None:
        return lambda _solution: None
    return lambda solution: grader.grade(solution, "").extracted


def final_solutions(record: DebateRecord) -> dict[int, str]:
    """Each agent's final solution (``DebateRecord.final_turn``), for the agents that have one."""
    finals = {agent: record.final_turn(agent) for agent in range(record.num_agents)}
    return {agent: turn.response.solution for agent, turn in finals.items() if turn is not None}


def majority_of(
    solutions: Mapping[int, str], read_answer: AnswerReader, vote_scores: Mapping[int, float] | None = None
) -> DebateAnswer:
    """The majority answer of ``solutions`` (agent -> final solution): the answer most agents hold;
    ties go to the larger summed ``vote_scores``, then to the lowest agent id. The answer's solution
    is its group's first one whose answer the reader read, else its first."""
    scores = vote_scores or {}
    groups: dict[str, list[int]] = {}
    read: dict[int, bool] = {}
    for agent, solution in sorted(solutions.items()):
        answer, read[agent] = answer_of(solution, read_answer)
        groups.setdefault(answer, []).append(agent)
    ranked = sorted(
        groups.items(), key=lambda item: (-len(item[1]), -sum(scores.get(a, 0.0) for a in item[1]), item[1][0])
    )
    candidates = tuple(
        Candidate(
            answer,
            tuple(agents),
            sum(scores.get(a, 0.0) for a in agents),
            solutions[next((a for a in agents if read[a]), agents[0])],
        )
        for answer, agents in ranked
    )
    return _answer(MAJORITY, candidates)


def _answer(rule: str, candidates: tuple[Candidate, ...], fallback: str | None = None) -> DebateAnswer:
    if not candidates:
        return DebateAnswer(rule, None, None, (), fallback=fallback)
    return DebateAnswer(rule, candidates[0].answer, candidates[0].solution, candidates, fallback=fallback)


@attrs.frozen
class NamedAnswerRule:
    """An answer rule plugin with its name as the run file chose it: every answer it gives is
    checked (``plugin_results.checked_debate_answer``) and carries that name."""

    name: str
    rule: AnswerRule

    def __call__(self, debate: DebateRecord, read_answer: AnswerReader) -> DebateAnswer:
        call = PluginCall("answer rule", self.name, "__call__", f"debate '{debate.debate_id}'")
        answer = checked_debate_answer(call, lambda: self.rule(debate, read_answer))
        return answer if answer.rule == self.name else attrs.evolve(answer, rule=self.name)


class MajorityRule:
    """``majority``: the answer most agents' final solutions hold (docs/answer-rules.md#majority)."""

    name = MAJORITY

    def __call__(self, debate: DebateRecord, read_answer: AnswerReader) -> DebateAnswer:
        scores = {t.agent: t.win_score for t in vote_counts(debate)}
        return majority_of(final_solutions(debate), read_answer, scores)

    def __repr__(self) -> str:
        return "MajorityRule()"


@attrs.frozen
class JudgedVote:
    """One vote as a comparison of two solutions: the positions in ``DebateRecord.turns`` of the
    solutions the judge was shown, the better one first, and whether it called them equal."""

    judge: int
    first: int
    second: int
    tie: bool


def judged_votes(debate: DebateRecord) -> Iterator[JudgedVote]:
    """The debate's valid votes (``tally_votes``), each turned into the two solutions it judged
    (``DebateRecord.visible_responses``); a vote on an agent the judge had not seen, or on a
    response that broke the output contract, is left out."""
    turns = {turn.turn_index: turn for turn in debate.turns}
    for vote in tally_votes(debate).votes:
        seen = debate.visible_responses(turns[vote.turn_index])
        first, second = seen.get(vote.a), seen.get(vote.b)
        if first is None or second is None or debate.turns[first].failed or debate.turns[second].failed:
            continue
        yield JudgedVote(vote.author, first, second, vote.op == "=")


def _borda(votes: Iterable[JudgedVote]) -> dict[int, float]:
    """Each judged solution's score: 1 for a vote it won, 1/2 for a tie, 0 for a loss."""
    scores: dict[int, float] = {}
    for vote in votes:
        scores[vote.first] = scores.get(vote.first, 0.0) + (0.5 if vote.tie else 1.0)
        scores[vote.second] = scores.get(vote.second, 0.0) + (0.5 if vote.tie else 0.0)
    return scores


def _held(debate: DebateRecord, read_answer: AnswerReader) -> Counter[str]:
    """How many agents hold each answer in their final solutions (the vote rules' tie-break)."""
    return Counter(answer_of(s, read_answer)[0] for s in final_solutions(debate).values())


def _majority_instead(rule: str, debate: DebateRecord, read_answer: AnswerReader) -> DebateAnswer:
    """A vote rule's answer to a debate with no usable vote: the ``majority`` answer, saying so."""
    return attrs.evolve(MajorityRule()(debate, read_answer), rule=rule, fallback=MAJORITY)


class VoteWinnerRule:
    """``vote_winner``: the answer of the solution the comparisons score highest
    (docs/answer-rules.md#vote_winner)."""

    name = "vote_winner"

    def __call__(self, debate: DebateRecord, read_answer: AnswerReader) -> DebateAnswer:
        scores = _borda(judged_votes(debate))
        if not scores:
            return _majority_instead(self.name, debate, read_answer)
        answers = {p: answer_of(debate.turns[p].response.solution, read_answer)[0] for p in scores}
        held = _held(debate, read_answer)
        order = sorted(scores, key=lambda p: (-scores[p], -held[answers[p]], p))
        return _answer(self.name, _candidates(debate, order, answers, scores))

    def __repr__(self) -> str:
        return "VoteWinnerRule()"


class AnswerVotesRule:
    """``answer_votes``: the votes summed per answer, votes between two solutions of one answer
    left out (docs/answer-rules.md#answer_votes)."""

    name = "answer_votes"

    def __call__(self, debate: DebateRecord, read_answer: AnswerReader) -> DebateAnswer:
        def answer(position: int) -> str:
            return answer_of(debate.turns[position].response.solution, read_answer)[0]

        votes = [v for v in judged_votes(debate) if answer(v.first) != answer(v.second)]
        scores = _borda(votes)
        if not scores:
            return _majority_instead(self.name, debate, read_answer)
        answers = {p: answer(p) for p in scores}
        totals: dict[str, float] = {}
        for position, score in scores.items():
            totals[answers[position]] = totals.get(answers[position], 0.0) + score
        held = _held(debate, read_answer)
        order = sorted(scores, key=lambda p: (-totals[answers[p]], -held[answers[p]], -scores[p], p))
        grouped = {p: totals[answers[p]] for p in scores}
        return _answer(self.name, _candidates(debate, order, answers, grouped))

    def __repr__(self) -> str:
        return "AnswerVotesRule()"


def runoff_candidates(debate: DebateRecord) -> list[Turn]:
    """The first round's turns, less a runoff judge's own blind answer (``is_runoff_judge``)."""
    first = min((t.round for t in debate.turns), default=1)
    return [t for t in debate.turns if t.round == first and not is_runoff_judge(t)]


class RunoffRule:
    """``runoff``: the two most held round-1 answers, decided by the votes between them
    (docs/answer-rules.md#runoff)."""

    name = "runoff"

    def __call__(self, debate: DebateRecord, read_answer: AnswerReader) -> DebateAnswer:
        solutions = {t.agent: t.response.solution for t in runoff_candidates(debate) if not t.failed}
        ranked = majority_of(solutions, read_answer).candidates
        if len(ranked) < 2:
            return _answer(self.name, ranked)
        scores = dict.fromkeys((ranked[0].answer, ranked[1].answer), 0.0)
        for vote in judged_votes(debate):
            a, b = (answer_of(debate.turns[p].response.solution, read_answer)[0] for p in (vote.first, vote.second))
            if a != b and a in scores and b in scores:
                scores[a] += 0.5 if vote.tie else 1.0
                scores[b] += 0.5 if vote.tie else 0.0
        order = [1, 0] if scores[ranked[1].answer] > scores[ranked[0].answer] else [0, 1]
        finalists = [attrs.evolve(ranked[i], score=scores[ranked[i].answer]) for i in order]
        rest = [attrs.evolve(c, score=0.0) for c in ranked[2:]]
        return _answer(self.name, (*finalists, *rest))

    def __repr__(self) -> str:
        return "RunoffRule()"


def builtin_rules() -> dict[str, AnswerRule]:
    """The built-in answer rules by name, which evaluation reports beside the rule in force."""
    return {MAJORITY: MajorityRule(), VoteWinnerRule.name: VoteWinnerRule(), AnswerVotesRule.name: AnswerVotesRule()}


def rules_side_by_side(in_force: AnswerRule) -> list[tuple[str, AnswerRule]]:
    """The rule in force (named by its ``name``, ``majority`` when it has none) first, then every
    other built-in rule: the rules evaluation grades each debate under."""
    name = str(getattr(in_force, "name", MAJORITY))
    return [(name, in_force), *((n, r) for n, r in builtin_rules().items() if n != name)]


def _candidates(
    debate: DebateRecord, order: Sequence[int], answers: Mapping[int, str], scores: Mapping[int, float]
) -> tuple[Candidate, ...]:
    """One candidate per answer, in the order of its best-ranked solution (``order``): the agents
    whose scored solutions hold it, its score, and that best solution."""
    agents: dict[str, set[int]] = {}
    best: dict[str, int] = {}
    for position in order:
        agents.setdefault(answers[position], set()).add(debate.turns[position].agent)
        best.setdefault(answers[position], position)
    return tuple(
        Candidate(answer, tuple(sorted(agents[answer])), scores[position], debate.turns[position].response.solution)
        for answer, position in best.items()
    )


def graded(answer: DebateAnswer, grader: Grader | None, truth: str | None) -> DebateAnswer:
    """``answer`` with ``correct`` set when a grader and the ground truth are known: the grader's
    verdict on the chosen answer's solution."""
    if grader is None or truth is None:
        return answer
    if answer.solution is None:
        return attrs.evolve(answer, correct=False)
    return attrs.evolve(answer, correct=grader.grade(answer.solution, truth).correct)


def final_answer(
    record: DebateRecord, grader: Grader | None = None, answer: str | None = None, rule: AnswerRule | None = None
) -> DebateAnswer:
    """The debate's answer under ``rule`` (default: ``majority``), answers read by ``grader``;
    graded against ``answer`` (default: the record's) when both are known."""
    chosen = (rule or MajorityRule())(record, grader_reader(grader))
    return graded(chosen, grader, answer if answer is not None else record.answer)


def choose_answer(
    solutions: Mapping[int, str],
    grader: Grader | None = None,
    answer: str | None = None,
    vote_scores: Mapping[int, float] | None = None,
) -> DebateAnswer:
    """The majority answer of independent solutions (direct answers' ``cons@k``), graded against
    ``answer`` when a grader and the answer are given; without votes ties go to the first."""
    return graded(majority_of(solutions, grader_reader(grader), vote_scores), grader, answer)


def format_vote_counts(counts: Sequence[AgentVotes]) -> list[str]:
    """One line per agent, for ``debate run``."""
    return [f"Agent {t.agent}: {t.wins} wins, {t.losses} losses, {t.ties} ties ({t.votes} votes)" for t in counts]
