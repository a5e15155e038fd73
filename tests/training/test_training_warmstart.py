"""Supervised warm-start through the debate's own prompts, and curriculum stages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from debate_core.config.sections import WarmstartSettings
from debate_core.debate.episode import run_debate
from debate_core.debate.xml_parser import XML_CONTRACT
from debate_core.plugins import Registry
from debate_core.tasks.graders import build_boxed
from debate_core.testing.scripted_debate import scripted_setup
from debate_core.testing.tokenizer import ByteTokenizer
from debate_core.training.loop import run_training
from debate_core.training.progress import Progress
from debate_core.training.run_components import NamedDataset
from debate_core.training.run_dir import RunDirectory
from debate_core.training.warmstart import WarmstartData, WarmstartError, render_response, warmstart_datums
from tests.training.trainer_harness import SERVICES, TinySums, TinySumsOptions, make_config, read_metrics


def prepare(batch_size: int = 2, template: str = WarmstartSettings().solution_template) -> WarmstartData:
    settings = WarmstartSettings(enabled=True, batch_size=batch_size, solution_template=template)
    dataset = NamedDataset("tiny_sums", TinySums(TinySumsOptions()))
    return WarmstartData.prepare(dataset, build_boxed(None), settings, 0, 3, ByteTokenizer(), XML_CONTRACT)


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_reference_debates_follow_the_contract_and_grade_correct(protocol: str) -> None:
    data = prepare()
    jobs, _ = data.jobs(0)
    setup = scripted_setup(3, 2, protocol=protocol)  # type: ignore[arg-type]

    async def go() -> list:
        return [
            await run_debate(
                j.problem, setup, list(j.policies), seed=j.seed, debate_id=j.debate_id, grader=build_boxed(None)
            )
            for j in jobs
        ]

    episodes = asyncio.run(go())
    for episode in episodes:
        record = episode.record
        assert record.consensus_reached and record.rounds_played == 1 and not record.aborted
        assert all(t.response.ok and t.grade == 1.0 for t in record.turns)
        last = record.turns[-1]
        if protocol == "sequential":  # agent 2 saw agents 0 and 1 and calls them equal
            assert [(c.a, c.op, c.b) for c in last.comparisons] == [(0, "=", 1)]
        else:  # parallel round 1: nobody was visible
            assert last.comparisons == ()
    datums = warmstart_datums(episodes)
    assert len(datums) == 3 * len(jobs)
    for d in datums:
        weights = d.datum.loss_fn_inputs["weights"].data
        assert set(d.datum.loss_fn_inputs) == {"target_tokens", "weights"}
        assert weights == list(d.mask) and sum(weights) > 0


def test_a_template_the_grader_rejects_is_an_error() -> None:
    with pytest.raises(WarmstartError, match="grader rejected all 10 reference solutions"):
        prepare(template="the answer is {answer}")


def test_render_response_lists_every_pair_of_other_agents() -> None:
    text = render_response(XML_CONTRACT, "\\boxed{4}", [0, 1, 3], 2, "ok")
    assert "<comparison>Agent 0 = Agent 1\nAgent 0 = Agent 3\nAgent 1 = Agent 3</comparison>" in text
    assert "<evaluation>N/A</evaluation>" in render_response(XML_CONTRACT, "s", [2], 2, "ok")


def test_warmstart_then_rl_in_one_run(registry: Registry, tmp_path: Path) -> None:
    config = make_config(
        "warmstart.enabled=true",
        "warmstart.steps=3",
        "warmstart.batch_size=2",
        "warmstart.learning_rate=0.1",
        "training.num_iterations=2",
        "evaluation.modes=['direct']",
    )
    outcome = asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["phase"] for r in records] == ["warmstart"] * 3 + ["rl"] * 2
    losses = [r["warmstart/loss_per_token"] for r in records[:3]]
    assert losses[-1] < losses[0]  # cross-entropy on the reference answers goes down
    assert "eval_tiny_sums/direct/correct" in records[2]
    assert set(outcome.evaluations) == {"warmstart", "final"}
    assert {loss for _, loss, _ in SERVICES[-1].sent_batches[:3]} == {"cross_entropy"}
    assert (tmp_path / "run" / "checkpoints" / "step_000003.json").exists()


def test_curriculum_stages_run_in_order(registry: Registry, tmp_path: Path) -> None:
    config = make_config(
        "curriculum=[{dataset={name='tiny_sums'}, iterations=1}, {dataset={name='tiny_sums'}, iterations=2}]",
        "evaluation.num_problems=0",
    )
    outcome = asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    assert outcome.iterations == 3
    assert [r["stage"] for r in read_metrics(tmp_path / "run" / "metrics.jsonl")] == [0, 1, 1]


def test_problem_order_is_seeded_and_covers_each_epoch() -> None:
    from debate_core.training.seeding import batch_indices

    first_epoch = [i for it in range(5) for i in batch_indices(7, 0, it, 2, 10)]
    assert sorted(first_epoch) == list(range(10))
    assert first_epoch == [i for it in range(5) for i in batch_indices(7, 0, it, 2, 10)]
    assert first_epoch != [i for it in range(5) for i in batch_indices(8, 0, it, 2, 10)]
