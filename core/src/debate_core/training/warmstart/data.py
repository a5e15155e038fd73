"""The warm-start's data: the lessons usable for it, the reference debates of each step
(``training.kernel.reference_debates``) and their cross-entropy Datums
(docs/training.md#warm-start).

The training data are the agents' trajectories assembled as for RL (prefix extension,
observations weight 0), with ``weights`` 1 on trained responses and 0 elsewhere.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import attrs

from debate_core.config.sections import WarmstartSettings
from debate_core.errors import DebateError
from debate_core.records import AgentTrajectory, DebateEpisode, Grader, OutputContract, Tokenizer, Transition
from debate_core.tasks.flaws import AnswerFlaws, FlawedSolution
from debate_core.training.kernel.datum import AssembledDatum, supervised_datums
from debate_core.training.kernel.reference_debates import (
    BARE_RIGHT,
    Lesson,
    ReferenceAgent,
    bare_right,
    lessons_of,
    plausibly_wrong,
    wrong_solution,
)
from debate_core.training.kernel.rollouts import DebateJob
from debate_core.training.run_components import NamedDataset
from debate_core.training.seeding import batch_indices, derive_seed


class WarmstartError(DebateError):
    """The warm-start cannot run on this dataset."""


@attrs.define
class WarmstartData:
    """The lessons usable for the warm-start and the reference debates of each step."""

    lessons: list[Lesson]
    seed: int
    num_agents: int
    settings: WarmstartSettings
    tokenizer: Tokenizer
    contract: OutputContract
    answer_flaws: AnswerFlaws

    @classmethod
    def prepare(
        cls,
        dataset: NamedDataset,
        grader: Grader | None,
        settings: WarmstartSettings,
        seed: int,
        num_agents: int,
        tokenizer: Tokenizer,
        contract: OutputContract,
    ) -> WarmstartData:
        """Collect training problems with an answer whose reference solution the grader accepts.

        Raises:
            WarmstartError: no problem qualifies (no answers, no grader, or every reference
                solution rejected by the grader).
        """
        if grader is None:
            raise WarmstartError(
                f"warm-start on dataset '{dataset.name}' needs a grader to judge solutions; set [grader]"
            )
        problems = dataset.problems("train")
        lessons, rejected = lessons_of(problems, dataset, grader, settings.solution_template)
        if not lessons:
            why = (
                f"the grader rejected all {rejected} reference solutions; check warmstart.solution_template"
                if rejected
                else "no training problem has an answer"
            )
            raise WarmstartError(f"warm-start on dataset '{dataset.name}' is impossible: {why}")
        if settings.evaluation_form == "verify" and lessons[0].checks is None:
            raise WarmstartError(
                f"warmstart.evaluation_form: 'verify' needs a dataset that checks a stated answer by itself "
                f"(the arithmetic dataset does); dataset '{dataset.name}' does not: use 'check'"
            )
        answers = tuple(sorted({p.answer for p in problems if p.answer is not None}))
        return cls(lessons, seed, num_agents, settings, tokenizer, contract, AnswerFlaws(answers))

    def _first_answer(self, lesson: Lesson, rng: random.Random) -> FlawedSolution | None:
        # With the default settings this draws exactly what it drew before flaw_kinds and
        # bare_right_share existed, so earlier runs' reference debates stay the same.
        settings = self.settings
        if self.num_agents < 2:
            return None
        if rng.random() >= settings.flawed_share:
            if settings.bare_right_share > 0 and rng.random() < settings.bare_right_share:
                return bare_right(lesson, settings.solution_template)
            return None
        kinds = settings.flaw_kinds
        kind = kinds[0] if len(kinds) == 1 else rng.choice(kinds)
        flawed = wrong_solution(kind, lesson, self.answer_flaws, rng, settings.solution_template)
        return flawed if flawed is not None or kind == "slip" else plausibly_wrong(lesson, self.answer_flaws, rng)

    def _revised_solution(self, lesson: Lesson) -> str | None:
        if self.settings.revision == "worked":
            return None
        return self.settings.solution_template.replace("{answer}", lesson.answer)

    def _solve_trained(self, debate_seed: int, agent: int) -> bool:
        share = self.settings.solve_share
        # its own stream, so that the flaws drawn for a seed do not depend on solve_share
        return share >= 1.0 or random.Random(f"solve|{debate_seed}|{agent}").random() < share

    def jobs(self, step: int) -> list[DebateJob]:
        """The reference debates of warm-start step ``step`` (each job's policies are its agents)."""
        indices = batch_indices(self.seed, "warmstart", step, self.settings.batch_size, len(self.lessons))
        jobs: list[DebateJob] = []
        for slot, index in enumerate(indices):
            lesson = self.lessons[index]
            debate_seed = derive_seed(self.seed, "warmstart", step, slot)
            rng = random.Random(debate_seed)
            agents = tuple(
                ReferenceAgent(
                    a,
                    lesson,
                    self._first_answer(lesson, rng),
                    self.tokenizer,
                    self.contract,
                    self.settings.train_on_flawed,
                    self.settings.evaluation_form,
                    self._revised_solution(lesson),
                    self._solve_trained(debate_seed, a),
                )
                for a in range(self.num_agents)
            )
            jobs.append(DebateJob(lesson.problem, agents, debate_seed, f"warm-{step}-{slot}"))
        return jobs


def _weight_function(job: DebateJob, trajectory: AgentTrajectory) -> Callable[[Transition], float]:
    agent = job.policies[trajectory.agent]
    assert isinstance(agent, ReferenceAgent)
    weights = agent.weights
    return lambda transition: weights[transition.step]


def warmstart_datums(episodes: Sequence[DebateEpisode], jobs: Sequence[DebateJob]) -> list[AssembledDatum]:
    """Cross-entropy Datums of every agent of every reference debate, flawed answers weighted by
    ``train_on_flawed``."""
    out: list[AssembledDatum] = []
    for index, (episode, job) in enumerate(zip(episodes, jobs, strict=True)):
        for trajectory in episode.trajectories:
            out.extend(supervised_datums(trajectory, debate_index=index, weight_of=_weight_function(job, trajectory)))
    return out


def truncated_responses(jobs: Sequence[DebateJob]) -> int:
    """Reference responses cut at ``max_tokens`` (the run's ``debate.max_tokens`` is too small)."""
    return sum(p.truncated for job in jobs for p in job.policies if isinstance(p, ReferenceAgent))


def trained_first_answers(jobs: Sequence[DebateJob]) -> int:
    """How many right first answers of these reference debates are trained on (``solve_share``)."""
    return sum(
        1
        for job in jobs
        for p in job.policies
        if isinstance(p, ReferenceAgent) and p.first_answer is None and p.solve_trained
    )


def flawed_first_answers(jobs: Sequence[DebateJob]) -> int:
    """How many agents of these reference debates gave a wrong first answer."""
    return sum(
        1
        for job in jobs
        for p in job.policies
        if isinstance(p, ReferenceAgent) and p.first_answer is not None and p.first_answer.kind != BARE_RIGHT
    )
