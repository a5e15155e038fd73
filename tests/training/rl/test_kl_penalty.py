"""The KL penalty towards the weights RL started from (docs/training.md#kl-penalty): its per-token
arithmetic, the reference's alignment with the Datum's targets, and a run that uses it, resumes
with it and refuses it where no reference was saved."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.errors import ConfigError
from debate_core.plugin import Registry
from debate_core.report import read_run, report_html
from debate_core.rundir.directory import RunDirectory, RunDirectoryError
from debate_core.runtime.retries import BackendError
from debate_core.training.kernel.datum import AssembledDatum, TokenSequence, shift_to_datum
from debate_core.training.rl.kl_penalty import apply_penalty, token_divergences
from tests.training.trainer_harness import final_weights, make_config, read_metrics, train_quietly, without_timings


def datum(mask: list[float], logprobs: list[float], advantages: list[float]) -> AssembledDatum:
    """A Datum whose targets carry ``mask``, sampler ``logprobs`` and ``advantages`` (the first token
    of the sequence is an observation, dropped by the shift)."""
    n = len(mask) + 1
    made = shift_to_datum(TokenSequence(tuple(range(1, n + 1)), (0.0, *logprobs), (0.0, *advantages), (0.0, *mask)))
    assert made is not None
    return made


def advantages_of(made: AssembledDatum) -> list[float]:
    return list(made.datum.loss_fn_inputs["advantages"].data)


def test_a_token_the_policy_made_likelier_than_the_reference_loses_advantage() -> None:
    # action tokens with d = +1 and -1: d̄ = 0; the observation token keeps advantage 0
    made = datum([0.0, 1.0, 1.0], [0.0, -1.0, -3.0], [0.0, 0.5, 0.5])
    divergences = token_divergences(made, [None, 0.0, -2.0, -2.0])
    assert divergences == [0.0, 1.0, -1.0]
    penalised = apply_penalty([made], [divergences], 0.1)
    assert penalised.mean_divergence == 0.0 and penalised.tokens == 2
    assert advantages_of(penalised.datums[0]) == pytest.approx([0.0, 0.4, 0.6])
    assert penalised.datums[0].mask == made.mask


def test_the_reference_logprob_of_a_target_is_read_one_place_later() -> None:
    # compute_logprobs gives one logprob per token of the full sequence (None for the first);
    # target i of the Datum is token i + 1 of that sequence
    made = datum([1.0, 1.0], [-0.5, -0.25], [1.0, 1.0])
    assert token_divergences(made, [None, -1.5, -0.75]) == [1.0, 0.5]


def test_a_reference_that_answers_for_another_sequence_is_refused() -> None:
    made = datum([1.0, 1.0], [-0.5, -0.25], [1.0, 1.0])
    with pytest.raises(BackendError, match="gave 2 logprobs for a sequence of 3 tokens"):
        token_divergences(made, [None, -1.0])
    with pytest.raises(BackendError, match="no finite logprob for action token 2"):
        token_divergences(made, [None, -1.0, None])


sequences = st.integers(min_value=1, max_value=6).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n),
        st.lists(st.floats(-5, 0), min_size=n, max_size=n),
        st.lists(st.floats(-2, 2), min_size=n, max_size=n),
        st.lists(st.floats(-3, 3), min_size=n, max_size=n),
    )
)


@given(st.lists(sequences, min_size=1, max_size=4), st.floats(0, 2))
def test_the_penalty_moves_only_action_tokens_and_leaves_their_mean_advantage_unchanged(
    batch: list[tuple[list[float], list[float], list[float], list[float]]], coefficient: float
) -> None:
    datums = [datum(mask, logprobs, advantages) for mask, logprobs, advantages, _ in batch]
    divergences = [[d if m else 0.0 for m, d in zip(mask, ds, strict=True)] for mask, _, _, ds in batch]
    penalised = apply_penalty(datums, divergences, coefficient)
    action = [d for mask, _, _, ds in batch for m, d in zip(mask, ds, strict=True) if m]
    mean = math.fsum(action) / len(action) if action else 0.0
    assert penalised.tokens == len(action)
    assert penalised.mean_divergence == pytest.approx(mean)
    added = []
    for before, after, ds in zip(datums, penalised.datums, divergences, strict=True):
        for m, a, b, d in zip(before.mask, advantages_of(before), advantages_of(after), ds, strict=True):
            if m:  # advantages travel as float32
                assert b == pytest.approx(a + coefficient * (mean - d), rel=1e-6, abs=1e-6)
                added.append(b - a)
            else:
                assert b == a
        assert after.datum.loss_fn_inputs["logprobs"].data == before.datum.loss_fn_inputs["logprobs"].data
        assert after.datum.model_input == before.datum.model_input
    assert math.fsum(added) == pytest.approx(0.0, abs=1e-6)


PENALTY = "training.kl_penalty_coef=0.5"


def test_a_run_with_the_penalty_saves_its_reference_and_measures_the_divergence(
    registry: Registry, tmp_path: Path, straight_run: Path
) -> None:
    run = tmp_path / "run"
    train_quietly(make_config(PENALTY), registry, run, handle_signals=False)
    record = json.loads((run / "checkpoints" / "rl_reference.json").read_text())
    assert RunDirectory(run).read_rl_reference() == record["sampler_path"]
    assert record["step"] == 0 and Path(record["sampler_path"]).exists()
    divergence = [r["optim/kl_policy_reference"] for r in read_metrics(run / "metrics.jsonl") if r.get("phase") == "rl"]
    assert len(divergence) == 4
    assert abs(divergence[0]) < 1e-6  # the first batch is sampled from the reference itself (float32 logprobs)
    assert any(abs(d) > 1e-6 for d in divergence[1:])
    # the penalty changes what is trained: not the weights of the same run without it
    assert not np.array_equal(final_weights(run), final_weights(straight_run))
    # the report charts it for this run only
    title = "KL penalty: policy against its reference"
    assert title in report_html(read_run(run)) and title not in report_html(read_run(straight_run))


def test_a_penalised_run_resumed_after_two_steps_equals_the_uninterrupted_one(
    registry: Registry, tmp_path: Path
) -> None:
    straight = tmp_path / "straight"
    train_quietly(make_config(PENALTY), registry, straight, handle_signals=False)
    stopper = make_config(PENALTY, "logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=2}}]")
    first = train_quietly(stopper, registry, tmp_path / "resumed")
    assert first.stopped_by == "SIGTERM" and first.iterations == 2
    train_quietly(make_config(PENALTY), registry, tmp_path / "resumed", resume=True, handle_signals=False)
    assert without_timings(read_metrics(tmp_path / "resumed" / "metrics.jsonl")) == without_timings(
        read_metrics(straight / "metrics.jsonl")
    )
    np.testing.assert_array_equal(final_weights(straight), final_weights(tmp_path / "resumed"))


def test_a_damaged_reference_record_stops_the_resume_with_one_line_naming_it(
    registry: Registry, tmp_path: Path
) -> None:
    stopper = make_config(PENALTY, "logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=2}}]")
    train_quietly(stopper, registry, tmp_path / "run")
    record = RunDirectory(tmp_path / "run").rl_reference_path
    record.write_text('{"sampler_path": ', encoding="utf-8")
    with pytest.raises(RunDirectoryError, match=f"^{record}: not JSON"):
        train_quietly(make_config(PENALTY), registry, tmp_path / "run", resume=True, handle_signals=False)
    record.write_text('{"step": 0}', encoding="utf-8")
    with pytest.raises(RunDirectoryError, match=f"^{record}: holds no 'sampler_path'"):
        train_quietly(make_config(PENALTY), registry, tmp_path / "run", resume=True, handle_signals=False)


def test_a_run_that_started_rl_without_the_penalty_cannot_resume_with_it(registry: Registry, tmp_path: Path) -> None:
    stopper = make_config("logging.sinks=[{name='jsonl'}, {name='signal_after', options={step=2}}]")
    train_quietly(stopper, registry, tmp_path / "run")
    with pytest.raises(ConfigError, match="kl_penalty_coef needs the weights RL started from"):
        train_quietly(make_config(PENALTY), registry, tmp_path / "run", resume=True, handle_signals=False)
