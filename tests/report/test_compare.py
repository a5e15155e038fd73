"""``debate compare``: config differences, evaluations side by side with paired changes where the
runs share problems, curves overlaid one colour per run, and a Markdown table that can express
the addition/peer-only table of docs/results.md (docs/training.md#comparing-runs)."""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.report.charts import PALETTE
from debate_core.report.compare import column_change, compare_runs, same_problems
from debate_core.report.compare_page import compare_html, compare_markdown

PROBLEMS = 30


def synthetic_run(
    root: Path, reward: str, evaluations: list[tuple[str, int, list[float]]], num_problems: int = PROBLEMS
) -> Path:
    """A run directory holding a config and evaluations of ``debate/cons@3`` per problem (and a
    parse-error rate), as the trainer writes them."""
    (root / "eval").mkdir(parents=True)
    (root / "config.toml").write_text(
        f'[run]\nname = "{root.name}"\n[dataset]\nname = "sums"\n[reward]\nname = "{reward}"\n'
        f'[evaluation]\nsplit = "test"\nnum_problems = {num_problems}\n'
    )
    for index, (label, step, values) in enumerate(evaluations):
        mean = sum(values) / len(values)
        metrics = {
            "eval_sums/num_problems": float(len(values)),
            "eval_sums/debate/cons@3": mean,
            "eval_sums/debate/cons@3_se": statistics.stdev(values) / math.sqrt(len(values)),
            "eval_sums/debate/parse_error": 0.1 if index == 0 else 0.2,
        }
        record = {"label": label, "step": step, "metrics": metrics, "per_problem": {"eval_sums/debate/cons@3": values}}
        (root / "eval" / f"step_{step:06d}_{label}.json").write_text(json.dumps(record))
    (root / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": s, "reward/configured": 0.1 * s}) + "\n" for s in range(1, 4))
    )
    return root


START = [1.0] * 12 + [0.0] * 18
MAIN_FINAL = [1.0] * 20 + [0.0] * 10
PEER_FINAL = [1.0] * 3 + [0.0] * 27


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    main_run = synthetic_run(tmp_path / "main", "gt_mix", [("warmstart", 10, START), ("final", 20, MAIN_FINAL)])
    peer_run = synthetic_run(tmp_path / "peer", "v2", [("warmstart", 10, START), ("final", 20, PEER_FINAL)])
    return main_run, peer_run


def paired(before: list[float], after: list[float]) -> tuple[float, float]:
    """The mean per-problem change and its standard error, computed here from the definition."""
    differences = [b - a for a, b in zip(before, after, strict=True)]
    return statistics.mean(differences), statistics.stdev(differences) / math.sqrt(len(differences))


def test_the_markdown_table_expresses_the_readme_table_with_paired_changes(two_runs: tuple[Path, Path]) -> None:
    """After warm-start, main job after RL, peer only after RL: a run's first and last evaluation,
    each later value with its change since the first column and the paired SE."""
    runs, columns = compare_runs(
        list(two_runs),
        ["after warm-start=1:first", "main job after RL=1:last", "peer only after RL=2:last"],
    )
    table = compare_markdown(runs, columns, ["debate/cons@k", "debate/parse_error"])
    lines = table.splitlines()
    assert lines[0] == "| eval_sums | after warm-start | main job after RL | peer only after RL |"
    assert lines[1] == "|---|---|---|---|"
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[0] == "majority of the agents' final answers (cons@k) `debate/cons@3`"
    assert cells[1] == "0.400 [0.246, 0.577] (n=30)"  # 12 of 30, Wilson
    main_change, main_se = paired(START, MAIN_FINAL)
    peer_change, peer_se = paired(START, PEER_FINAL)
    assert cells[2] == (
        f"0.667 [0.488, 0.808] (n=30); {main_change:+.3f} ± {main_se:.3f} "
        f"({main_change / main_se:+.1f} SE, paired), better"
    )
    assert cells[3] == (
        f"0.100 [0.035, 0.256] (n=30); {peer_change:+.3f} ± {peer_se:.3f} "
        f"({peer_change / peer_se:+.1f} SE, paired), worse"
    )
    # parse errors have no per-problem values: an independent change, worse as it goes up
    assert (
        lines[3]
        == "| parse errors, debate `debate/parse_error` | 0.100 | 0.200; +0.100, worse | 0.200; +0.100, worse |"
    )
    assert len(lines) == 4


def test_the_default_columns_are_the_first_runs_first_evaluation_then_each_runs_last(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *map(str, two_runs), "--markdown", "--rows", "debate/cons@k"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "| eval_sums | main warmstart | main final | peer final |"
    assert "paired" in out


def test_runs_that_evaluate_other_problems_get_independent_changes(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a", "v2", [("final", 5, START)])
    b = synthetic_run(tmp_path / "b", "v2", [("final", 5, MAIN_FINAL)], num_problems=31)
    runs, columns = compare_runs([a, b])
    assert not same_problems(runs[0], runs[1])
    table = compare_markdown(runs, columns, ["debate/cons@k"])
    se_a, se_b = statistics.stdev(START) / math.sqrt(30), statistics.stdev(MAIN_FINAL) / math.sqrt(30)
    assert f"± {math.hypot(se_a, se_b):.3f}" in table and "independent" in table and "paired" not in table


def test_an_option_added_after_a_run_was_made_does_not_unpair_it(tmp_path: Path) -> None:
    old = synthetic_run(tmp_path / "old", "v2", [("final", 5, START)])
    new = synthetic_run(tmp_path / "new", "v2", [("final", 5, MAIN_FINAL)])
    added = 'name = "sums"\n[dataset.options]\nslips = ["a"]\n'
    (new / "config.toml").write_text((new / "config.toml").read_text().replace('name = "sums"\n', added))
    runs, columns = compare_runs([old, new])
    assert same_problems(runs[0], runs[1])
    assert "paired" in compare_markdown(runs, columns, ["debate/cons@k"])
    other = (new / "config.toml").read_text().replace("num_problems = 30", "num_problems = 29")
    (new / "config.toml").write_text(other)
    assert not same_problems(*compare_runs([old, new])[0])


def test_the_page_shows_config_differences_side_by_side_tables_and_curves_one_colour_per_run(
    finished_run: Path, peer_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "compare.html"
    assert main(["compare", str(finished_run), str(peer_run), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    page = out.read_text(encoding="utf-8")
    # self-contained, as the report
    assert "<script" not in page and "<link" not in page and "<img" not in page and "url(" not in page
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", page)
    # what differs in the resolved configs, and only that
    diff = re.search(r'<table class="config-diff">.*?</table>', page, re.S)
    assert diff is not None
    rows = dict(re.findall(r"<tr><td><code>([^<]+)</code></td>(.*?)</tr>", diff.group(0)))
    assert (
        "reward.name" in rows
        and "&quot;win_rate&quot;" in rows["reward.name"]
        and "&quot;flat&quot;" in rows["reward.name"]
    )
    assert "training.num_iterations" not in rows  # the same in both
    # the evaluation table: the first run's start, then each run's final, changes paired (same problems)
    heads = re.findall(r'<th class="run"[^>]*>([^<]+)<br>', page)
    assert heads[-3:] == ["run start", "run final", "peer final"]
    assert "(n=2: too few for an SE)" in page  # two problems: no SE verdict
    # curves: each chart has a line per run, in the run's colour
    charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    assert len(charts) >= 5
    for chart in charts:
        colours = set(re.findall(r'<polyline[^>]*stroke="(#[0-9a-f]{6})"', chart))
        assert colours == {PALETTE[0], PALETTE[1]}, chart[:120]


def test_the_page_goes_beside_the_first_run_and_the_first_line_says_where(
    two_runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --out the page is written beside the first run directory, not into the folder the
    command runs from (a repository's root, say)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    first, second = two_runs
    assert main(["compare", str(first), str(second)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == str(first.parent / "compare.html")
    assert (first.parent / "compare.html").is_file()
    assert list(elsewhere.iterdir()) == []


def test_one_run_alone_compares_its_first_and_last_evaluation(finished_run: Path) -> None:
    runs, columns = compare_runs([finished_run])
    assert [c.title for c in columns] == ["run start", "run final"]
    assert "too few for an SE" in compare_html(runs, columns)


def test_bad_runs_and_columns_are_one_line_errors(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = two_runs
    cases = [
        (["compare", str(tmp_path / "nothing")], "no such run directory"),
        (["compare", str(a), "--markdown", "--column", "x"], "expected TITLE=RUN:WHICH"),
        (["compare", str(a), "--markdown", "--column", "x=2:last"], "run 2 is not one of the 1 runs named"),
        (["compare", str(a), "--markdown", "--column", "x=1:iteration_7"], "no evaluation labelled 'iteration_7'"),
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.toml").write_text('[run]\nname = "e"\n')
    cases.append((["compare", str(empty), "--markdown"], "no run named holds an evaluation yet"))
    cases.append((["compare", str(empty), "--markdown", "--column", "x=1:last"], "holds no evaluation yet"))
    for argv, message in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_a_run_without_an_evaluation_yet_has_no_column_but_its_curves_and_config(
    two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """Mid-run (still in its warm-start) a run is compared by its config and curves; the table
    holds the runs that have evaluations."""
    a, _ = two_runs
    young = tmp_path / "young"
    young.mkdir()
    (young / "config.toml").write_text('[run]\nname = "young"\n[reward]\nname = "v2"\n')
    (young / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward/configured": 0.5}) + "\n")
    runs, columns = compare_runs([young, a])
    assert [c.title for c in columns] == ["main warmstart", "main final"]
    page = compare_html(runs, columns)
    reward = re.search(r'aria-label="Configured reward \(training\)".*?</svg>', page, re.S)
    assert reward is not None and reward.group(0).count("<polyline") == 2
    assert "(absent)" in page  # keys the young run's config does not hold


def test_percent_shows_rates_in_percent_and_their_changes_in_points(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", *map(str, two_runs), "--markdown", "--percent", "--rows", "debate/cons@k"]
    assert main([*argv, "--column", "after warm-start=1:warmstart", "--column", "main job after RL=1:final"]) == 0
    cells = [c.strip() for c in capsys.readouterr().out.splitlines()[2].strip("|").split("|")]
    change, error = paired(START, MAIN_FINAL)
    assert cells[1] == "40.0% [24.6, 57.7] (n=30)"
    assert cells[2] == (
        f"66.7% [48.8, 80.8] (n=30); {change * 100:+.1f} ± {error * 100:.1f} ({change / error:+.1f} SE, paired), better"
    )


def test_the_judge_benchmark_families_are_headline_rows_with_their_paired_changes(tmp_path: Path) -> None:
    """Each family's accuracy is a labelled row of ``debate compare`` (and of the report's table),
    paired per problem where the family keeps per-problem values; a tie on two right answers is
    better, on a wrong one worse."""
    run = synthetic_run(tmp_path / "run", "majority", [("warmstart", 10, START), ("final", 20, MAIN_FINAL)])
    far = {"warmstart": [1.0] * 20 + [0.0] * 10, "final": [1.0] * 25 + [0.5] * 5}
    for path in sorted((run / "eval").glob("*.json")):
        record = json.loads(path.read_text())
        label = record["label"]
        values = far[label]
        record["metrics"].update(
            {
                "eval_sums/judge/accuracy": 0.9,
                "eval_sums/judge/far/accuracy": sum(values) / len(values),
                "eval_sums/judge/far/num_pairs": float(len(values)),
                "eval_sums/judge/far/tie_rate": 0.1 if label == "warmstart" else 0.2,
                "eval_sums/judge/both_right/tie_rate": 0.5 if label == "warmstart" else 0.7,
                "eval_sums/judge/own/accuracy": 0.6,
                "eval_sums/judge/own/num_pairs": 12.0,
            }
        )
        record["per_problem"]["eval_sums/judge/far/accuracy"] = values
        path.write_text(json.dumps(record))
    runs, columns = compare_runs([run])
    table = compare_markdown(runs, columns)
    rows = {line.split("`")[1]: line for line in table.splitlines() if line.count("`") >= 2}
    names = list(rows)
    assert names.index("judge/accuracy") < names.index("judge/own/accuracy") < names.index("judge/far/accuracy")
    assert "the right working, a final answer 11–39 away: accuracy" in rows["judge/far/accuracy"]
    change, error = paired([1.0] * 20 + [0.0] * 10, far["final"])
    assert f"{change:+.3f} ± {error:.3f}" in rows["judge/far/accuracy"] and "paired" in rows["judge/far/accuracy"]
    assert rows["judge/far/tie_rate"].endswith(", worse |")
    assert rows["judge/both_right/tie_rate"].endswith(", better |")


def test_an_evaluation_file_of_debate_eval_is_compared_paired_with_the_run_it_evaluates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``debate eval --out`` keeps each problem's values and the resolved run file, so a later
    evaluation of a run's checkpoint is a column of ``debate compare`` with its change paired per
    problem against the run's own evaluation of the base model; on other problems the change is
    independent."""
    from tests.training.trainer_harness import BASE_OVERRIDES, harness_registry

    run_file, run = tmp_path / "run.toml", tmp_path / "run"
    run_file.write_text("", encoding="utf-8")
    overrides = [*BASE_OVERRIDES, "evaluation.num_problems=4", "evaluation.num_samples=3", "evaluation.at_end=false"]
    trained, fewer = tmp_path / "trained.json", tmp_path / "fewer.json"
    with harness_registry():
        assert main(["train", str(run_file), *overrides, "evaluation.at_start=true", "--run-dir", str(run)]) == 0
        later = [*overrides, "--checkpoint", str(run)]
        assert main(["eval", str(run_file), *later, "--out", str(trained), "--label", "trained"]) == 0
        assert main(["eval", str(run_file), *later, "evaluation.num_problems=3", "--out", str(fewer)]) == 0
    capsys.readouterr()
    start = json.loads(next((run / "eval").glob("step_*_start.json")).read_text())
    written = json.loads(trained.read_text())
    assert written["label"] == "trained" and "[evaluation]" in written["config"]
    name = "eval_tiny_sums/direct/correct"
    before, after = start["per_problem"][name], written["per_problem"][name]
    assert len(after) == 4 and before != after  # every problem of tiny_sums' test split; training moved them

    runs, columns = compare_runs([run, trained, fewer], ["base=1:start", "trained=2:trained", "fewer=3:eval"])
    assert runs[1].data.status() == "an evaluation file (debate eval --out)"
    assert same_problems(runs[0], runs[1]) and not same_problems(runs[0], runs[2])
    change, error = paired(before, after)
    against_base = column_change(runs, columns[0], columns[1], name)
    assert against_base is not None and against_base.paired
    assert against_base.value == pytest.approx(change) and against_base.error == pytest.approx(error)
    other_problems = column_change(runs, columns[0], columns[2], name)
    assert other_problems is not None and not other_problems.paired


def test_a_file_that_is_not_an_evaluation_file_is_a_one_line_error(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = two_runs
    for name, text, message in (
        ("notes.txt", "hello", "is a file, not a run directory nor an evaluation file of debate eval --out: not valid"),
        ("list.json", "[1, 2]", "nor an evaluation file of debate eval --out: no 'metrics' object"),
        ("config.json", '{"metrics": {}, "config": 3}', "its 'config' is not the text of a run file"),
    ):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert main(["compare", str(a), str(path), "--markdown"]) == 1
        err = capsys.readouterr().err
        assert message in err and str(path) in err and len(err.strip().splitlines()) == 1, err


def test_where_the_runs_computed_is_compared_beside_their_config(two_runs: tuple[Path, Path]) -> None:
    """Runs of one run file can differ because sums round by the machine's instruction set:
    ``environment.*`` rows show where their ``environment.json`` differ, and only there."""
    from debate_core.report.compare import config_differences, read_runs
    from debate_core.rundir.environment import record_environment

    for run, capability in zip(two_runs, ("AVX2", "AVX512"), strict=True):
        record_environment(run / "environment.json", 0, {"torch": "2.13.0+cpu", "cpu_capability": capability})
    differences = dict(config_differences(read_runs(list(two_runs))))
    assert differences["environment.backend.cpu_capability"] == ["AVX2", "AVX512"]
    environment = [key for key in differences if key.startswith("environment.")]
    assert environment == ["environment.backend.cpu_capability"]
