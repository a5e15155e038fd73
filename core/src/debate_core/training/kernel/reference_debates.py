"""Reference debates: debates that show the whole skill of a debate (solving, judging, comparing
and revising), the warm-start's training data (``training.warmstart.data``) and the judge
benchmark's cases (``training.evaluation``) alike (docs/training.md#warm-start).

The reference debates run *through the debate itself*, with every agent a
:class:`ReferenceAgent` that writes its response from the structured view of its turn, so the
prompts (personas, history, round instructions, renderer) are exactly the ones RL shows:

* an agent's **first** turn is the problem's reference solution, or with probability
  ``flawed_share`` a plausibly wrong one (a dropped carry, a digit slip, an off-by-one for
  arithmetic; a wrong final answer of the same form for any other dataset with answers);
* whenever other agents' solutions are in view, the response **evaluates** each of them,
  saying who is right, who is wrong and (where the dataset can tell) which step is wrong;
  **compares** every pair of them, the correct one ``>`` the wrong one and ``=`` only between
  two equally right or two equally wrong solutions; and from its second turn on **revises**
  its own solution to the correct one;
* it says ``<consensus>YES</consensus>`` only when it has seen the latest solution of every
  other agent and every one of those final answers agrees with its own.

Each agent records the training weight of each of its turns (``ReferenceAgent.weights``): wrong
first answers are what the others judge, and by default not themselves trained on
(``train_on_flawed``).
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Sequence

import attrs

from debate_core.config.sections import EvaluationForm, WarmstartFlaw
from debate_core.records import (
    Comparison,
    Grade,
    Grader,
    HistoryEntry,
    OutputContract,
    Problem,
    ResponseContent,
    SampledAction,
    StopCondition,
    Tokenizer,
    TurnView,
)
from debate_core.tasks.flaws import (
    AnswerChecks,
    AnswerFlaws,
    FlawedSolution,
    SolutionFlaws,
    far_answer,
    replace_final_answer,
    wrong_answer,
)
from debate_core.tasks.worked_solutions import digit_check
from debate_core.training.run_components import NamedDataset


def reference_solution(problem: Problem, template: str, grader: Grader | None) -> str | None:
    """The problem's correct solution: its worked solution (``metadata["solution"]``), with the
    template's sentence appended when the grader does not find the answer in it, or the
    template filled with the answer. None without an answer or a worked solution."""
    given = problem.metadata.get("solution") if problem.metadata else None
    if problem.answer is None:
        return str(given) if given else None
    filled = template.replace("{answer}", problem.answer)
    if not given:
        return filled
    if grader is not None and not grader.grade(str(given), problem.answer).correct:
        return f"{given} {filled}"
    return str(given)


@attrs.frozen
class SeenAnswer:
    """Another agent's latest solution as the reference agent judges it."""

    agent: int
    grade: Grade
    critique: str | None
    check: str | None = None
    """The dataset's own check of the stated answer (``evaluation_form = "verify"``)."""


@attrs.frozen
class Lesson:
    """What the reference agents of one problem know: the right solution and answer, how to
    critique a wrong solution, and how to grade one."""

    problem: Problem
    solution: str
    answer: str
    grader: Grader
    flaws: SolutionFlaws | None
    checks: AnswerChecks | None = None

    def judge(self, entry: HistoryEntry) -> SeenAnswer:
        """Grade another agent's shown solution, with a critique when it is wrong and the
        dataset's check of its stated answer where the dataset has one."""
        grade = self.grader.grade(entry.solution, self.answer)
        critique = None if grade.correct or self.flaws is None else self.flaws.critique(self.problem, entry.solution)
        check = None
        if self.checks is not None and grade.extracted is not None:
            check = self.checks.check_answer(self.problem, grade.extracted)
        return SeenAnswer(entry.agent, grade, critique, check)


def answer_check(stated: str, own: str) -> str:
    """A stated answer's characters checked against one's own, right-aligned, the way the worked
    solutions add columns (:func:`~debate_core.tasks.worked_solutions.digit_check`):
    ``7-7 same, 4-3 differ: wrong`` (stated ``74``, own ``73``).

        >>> answer_check("28", "28")
        '2-2 same, 8-8 same: right'
    """
    return digit_check(stated, own)


def evaluation_text(seen: Sequence[SeenAnswer], answer: str, form: EvaluationForm = "verdict") -> str:
    """One clause per judged agent ("" with nobody to judge); an agent without an answer "gives
    no answer".

    ``form="verdict"``: right, or wrong and why (``Agent 1: 74 is wrong, the answer is 73.``).
    ``form="check"``: the judge's own answer first, then each stated answer in the words of the
    prompt's recap (``Agent 1 says 74``, docs/protocol.md#what-an-agent-sees) checked against it by
    :func:`answer_check`: ``I say 73. Agent 1 says 74: 7-7 same, 4-3 differ: wrong.``
    ``form="verify"``: each stated answer checked by itself with the dataset's check
    (``Agent 1 says 38: 38+27: 8+7=15 5-5 same, 3+2+1=6 6-6 same: right.``); an answer the
    dataset cannot check gets the check form's clause.
    """
    clauses = [f"I say {answer}."] if form == "check" and seen else []
    for s in seen:
        if not s.grade.formatted or s.grade.extracted is None:
            clauses.append(f"Agent {s.agent} gives no answer.")
        elif form == "verify":
            check = s.check or answer_check(s.grade.extracted, answer)
            clauses.append(f"Agent {s.agent} says {s.grade.extracted}: {check}.")
        elif form == "check":
            clauses.append(f"Agent {s.agent} says {s.grade.extracted}: {answer_check(s.grade.extracted, answer)}.")
        elif s.grade.correct:
            clauses.append(f"Agent {s.agent}: {s.grade.extracted} is right.")
        else:
            why = s.critique or f"the answer is {answer}"
            clauses.append(f"Agent {s.agent}: {s.grade.extracted} is wrong, {why}.")
    return " ".join(clauses)


def reference_comparisons(seen: Sequence[SeenAnswer]) -> tuple[Comparison, ...]:
    """Every pair of judged agents: the correct one first with ``>``, ``=`` when equally right or wrong."""
    out: list[Comparison] = []
    for a, b in itertools.combinations(sorted(seen, key=lambda s: s.agent), 2):
        if a.grade.correct == b.grade.correct:
            out.append(Comparison(a.agent, "=", b.agent))
        elif a.grade.correct:
            out.append(Comparison(a.agent, ">", b.agent))
        else:
            out.append(Comparison(b.agent, ">", a.agent))
    return tuple(out)


def consensus_of(seen: Sequence[SeenAnswer], own_answer: str, informed: bool) -> tuple[bool, str]:
    """YES only when informed and every seen final answer equals the agent's own, with a reason."""
    if not informed:
        return False, "Not every answer seen yet."
    differing = [s for s in seen if s.grade.extracted != own_answer]
    if differing:
        first = differing[0]
        said = first.grade.extracted if first.grade.extracted is not None else "no answer"
        return False, f"Agent {first.agent} says {said}."
    return True, f"All say {own_answer}."


def plausibly_wrong(lesson: Lesson, answer_flaws: AnswerFlaws, rng: random.Random) -> FlawedSolution | None:
    """A plausibly wrong solution of the lesson's problem: the dataset's own slip where it has
    one (a dropped carry, a digit slip, an off-by-one), else the reference solution with a wrong
    final answer of the same form; None when neither can be made."""
    flawed = lesson.flaws.flawed_solution(lesson.problem, rng) if lesson.flaws is not None else None
    return flawed or answer_flaws.flawed_solution(lesson.problem, rng, lesson.solution)


BARE_RIGHT = "bare_right"
"""The ``kind`` of a right first answer stated with no working (``warmstart.bare_right_share``)."""


def graded_as(lesson: Lesson, text: str | None, answer: str | None, kind: str, right: bool) -> FlawedSolution | None:
    """``text`` as a first answer of ``kind``, when the grader reads it as ``right`` says it must be."""
    if text is None or answer is None or lesson.grader.grade(text, lesson.answer).correct != right:
        return None
    return FlawedSolution(text, answer, kind)


def wrong_solution(
    kind: WarmstartFlaw, lesson: Lesson, answer_flaws: AnswerFlaws, rng: random.Random, template: str
) -> FlawedSolution | None:
    """A wrong solution of ``kind`` (``warmstart.flaw_kinds``; the judge benchmark's family of the
    same name), or None when none can be made for this problem (``far`` on a non-integer answer)."""
    if kind == "slip":
        return plausibly_wrong(lesson, answer_flaws, rng)
    if kind == "far":
        wrong = far_answer(lesson.answer, rng)
        text = None if wrong is None else replace_final_answer(lesson.solution, lesson.answer, wrong)
    else:
        wrong = wrong_answer(lesson.answer, rng, answer_flaws.answers)
        text = None if wrong is None else template.replace("{answer}", wrong)
    return graded_as(lesson, text, wrong, kind, right=False)


def bare_right(lesson: Lesson, template: str) -> FlawedSolution | None:
    """The right answer stated with no working (``template`` filled with it), if the grader takes it."""
    return graded_as(lesson, template.replace("{answer}", lesson.answer), lesson.answer, BARE_RIGHT, right=True)


def lessons_of(
    problems: Sequence[Problem], dataset: NamedDataset, grader: Grader, template: str
) -> tuple[list[Lesson], int]:
    """The lessons of the problems that have an answer and a reference solution the grader
    accepts, and how many reference solutions the grader rejected."""
    flaws = dataset.dataset if isinstance(dataset.dataset, SolutionFlaws) else None
    checks = dataset.dataset if isinstance(dataset.dataset, AnswerChecks) else None
    lessons: list[Lesson] = []
    rejected = 0
    for problem in problems:
        if problem.answer is None:
            continue
        solution = reference_solution(problem, template, grader)
        if solution is None or not grader.grade(solution, problem.answer).correct:
            rejected += 1
            continue
        lessons.append(Lesson(problem, solution, problem.answer, grader, flaws, checks))
    return lessons, rejected


def written_action(text: str, tokenizer: Tokenizer, stop: StopCondition, max_tokens: int) -> SampledAction:
    """``text`` as a sampler would return it: its tokens ended by the first token-id stop, cut to
    ``max_tokens`` (stop reason ``length``), every logprob 0 (a scripted seat, not sampled)."""
    tokens = list(tokenizer.encode(text, add_special_tokens=False))
    if stop.token_ids:
        tokens.append(stop.token_ids[0])
    stop_reason = "stop"
    if len(tokens) > max_tokens:
        tokens = tokens[:max_tokens]
        stop_reason = "length"
    return SampledAction(tuple(tokens), tuple(0.0 for _ in tokens), text, stop_reason)


@attrs.define
class ReferenceAgent:
    """A ``ViewingPolicy`` that writes the reference response of its turn instead of sampling."""

    agent: int
    lesson: Lesson
    first_answer: FlawedSolution | None
    """This agent's first turn when it is not the worked reference solution: a wrong solution, or
    the right answer stated bare (kind :data:`BARE_RIGHT`, never trained on); None for the worked one."""
    tokenizer: Tokenizer
    contract: OutputContract
    train_on_flawed: bool = False
    evaluation_form: EvaluationForm = "verdict"
    revised_solution: str | None = None
    """The solution of every later turn (None: the lesson's worked solution)."""
    solve_trained: bool = True
    """Whether a right first answer of this agent is trained on (``warmstart.solve_share``)."""
    weights: list[float] = attrs.field(factory=list)
    """The training weight of each of this agent's turns, in order."""
    truncated: int = 0

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        raise TypeError("a reference agent answers from the turn view (sample_with_view)")

    async def sample_with_view(
        self,
        prompt: Sequence[int],
        view: TurnView,
        *,
        stop: StopCondition,
        temperature: float,
        max_tokens: int,
        seed: int | None,
    ) -> SampledAction:
        await asyncio.sleep(0)
        action = written_action(self.contract.render(self.respond(view)).text, self.tokenizer, stop, max_tokens)
        self.truncated += int(action.stop_reason == "length")
        return action

    def respond(self, view: TurnView) -> ResponseContent:
        """The reference response for this view (and the turn's training weight, recorded)."""
        lesson = self.lesson
        first_turn = not self.weights
        flawed = self.first_answer if first_turn else None
        solution, own_answer = (flawed.text, flawed.answer) if flawed else (lesson.solution, lesson.answer)
        if not first_turn and self.revised_solution is not None:
            solution = self.revised_solution
        if not first_turn:
            trained = True
        elif flawed is None:
            trained = self.solve_trained
        else:
            trained = self.train_on_flawed and flawed.kind != BARE_RIGHT
        self.weights.append(1.0 if trained else 0.0)
        if view.num_agents == 1:
            return ResponseContent(solution=solution, consensus=True, consensus_reason="I am the only agent.")
        others = view.latest_of_others()
        seen = [lesson.judge(others[a]) for a in sorted(others)]
        consensus, reason = consensus_of(seen, own_answer, view.informed)
        return ResponseContent(
            solution=solution,
            evaluation=evaluation_text(seen, lesson.answer, self.evaluation_form),
            comparisons=reference_comparisons(seen),
            consensus=consensus,
            consensus_reason=reason,
        )
