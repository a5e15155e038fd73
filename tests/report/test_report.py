"""``debate report``: the page holds what a researcher needs, from finished, running and damaged runs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.report import read_run, report_html, write_report
from debate_core.report.charts import Series, line_chart, nice_ticks
from debate_core.report.debate_view import marked_text, vote_matrix
from debate_core.report.run_data import read_metrics_log, spread
from debate_core.testing import TurnSpec, build_debate


def test_the_page_is_self_contained(finished_run: Path, tmp_path: Path) -> None:
    path, _ = write_report(finished_run, tmp_path / "r.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # nothing loaded from anywhere: no script, no link, no remote or local resource
    assert "<script" not in page and "<link" not in page and "<img" not in page
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", page)
    assert "url(" not in page and "@import" not in page


def test_the_page_shows_config_evaluations_curves_and_debates(finished_run: Path) -> None:
    run = read_run(finished_run, max_debates=4)
    page = report_html(run)
    config = (finished_run / "config.toml").read_text()
    assert "[training]" in config and "num_iterations = 3" in config
    assert "num_iterations = 3" in page  # the resolved config
    # the evaluation table: one column per evaluation (start, iteration_1, iteration_2, final) with SEs
    heads = re.findall(r"<th>(\w+)<br><small>step", page)
    assert heads[:4] == ["start", "iteration_1", "iteration_2", "final"]  # in the order they were made
    final = json.loads(next((finished_run / "eval").glob("*_final.json")).read_text())["metrics"]
    # two evaluation problems: too few for a standard error, so the value shows its count instead
    assert final["eval_tiny_sums/num_problems"] == 2
    value = final["eval_tiny_sums/direct/correct"]
    assert f'{value:.3f} <span class="se">(n=2)</span>' in page
    assert "too few for an SE" in page and " SE, paired)" not in page
    assert "change since start" in page
    # curves: SVG charts with lines for the metrics the run wrote
    assert page.count('<svg class="chart"') >= 7
    assert 'aria-label="Reward per stream (training)"' in page and "<polyline" in page
    # debates: spread over the run, newest open, sections marked, rewards and votes shown
    assert [(d.step, d.index) for d in run.debates] == [(1, 0), (2, 0), (2, 1), (3, 1)]
    assert run.debates_logged == 6
    assert page.count('<details class="debate"') == 4 and page.count('<details class="debate" open>') == 1
    assert 'data-section="solution"' in page and 'class="votes-matrix"' in page
    assert "reward <code>win_rate</code>" in page


def legends(page: str, title: str) -> list[str]:
    """The legend of the chart ``title`` (a series appears there only when it has points)."""
    chart = re.search(f'aria-label="{re.escape(title)}".*?</svg>', page, re.S)
    assert chart is not None, title
    assert "<polyline" in chart.group(0), title
    return re.findall(r'class="legend">([^<]*)<', chart.group(0))


def test_every_curve_the_issue_names_is_drawn_from_the_run(finished_run: Path, tmp_path: Path) -> None:
    """Reward per stream, held-out accuracy (direct and debate), judge accuracy, comparison rate, format
    and parse errors, KL and entropy: each a chart with a line from what the run wrote."""
    page = report_html(read_run(finished_run))
    assert legends(page, "Held-out accuracy (± SE)") == [
        "direct",
        "debate (its answer)",
        "direct, majority of k",
        "debate (agents)",
    ]
    assert legends(page, "Judge accuracy") == ["training", "held-out"]
    assert legends(page, "Comparison rate") == ["training", "held-out"]
    assert legends(page, "Format and parse errors (training)") == ["format training", "parse errors"]
    assert legends(page, "KL(sampler ‖ trainer)") == ["kl v1"]
    assert legends(page, "Entropy of sampled tokens") == ["entropy"]
    # this run's reward (win_rate) has one stream; a reward with generator and judge streams shows both
    assert legends(page, "Reward per stream (training)") == ["configured reward", "total return"]
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    with (run / "metrics.jsonl").open("a", encoding="utf-8") as log:
        for step in (4, 5):
            log.write(json.dumps({"step": step, "reward/gen/mean": 0.1 * step, "reward/judge/mean": 0.3}) + "\n")
    streams = legends(report_html(read_run(run)), "Reward per stream (training)")
    assert streams == ["configured reward", "generator", "judge", "total return"]


def test_debates_are_spread_over_the_run() -> None:
    assert spread(list(range(10)), 4) == [0, 3, 6, 9]
    assert spread(list(range(3)), 8) == [0, 1, 2]
    assert spread(list(range(5)), 1) == [4]
    assert spread(list(range(5)), 0) == []


def test_sections_are_marked_from_the_parser_spans() -> None:
    text = (
        "Sure.<solution>6*7 is \\boxed{42}</solution><evaluation>N/A</evaluation><comparison>N/A</comparison>"
        "<consensus>YES</consensus><consensus_reason>x < y & z</consensus_reason>"
    )
    record = build_debate([text], num_agents=1)
    html = marked_text(record.turns[0])
    assert '<span class="outside">Sure.&lt;solution&gt;</span>' in html
    assert '<span class="sec sec-solution" data-section="solution">6*7 is \\boxed{42}</span>' in html
    assert '<span class="sec sec-consensus_reason" data-section="consensus_reason">x &lt; y &amp; z</span>' in html


def test_the_vote_matrix_shows_who_preferred_whom_per_round_beside_the_grades() -> None:
    record = build_debate(
        [
            TurnSpec(comparisons=((1, ">", 2),)),
            TurnSpec(comparisons=((0, ">", 2),)),
            TurnSpec(comparisons=((0, "=", 1),)),
            TurnSpec(comparisons=((2, ">", 1),)),
            TurnSpec(),
            TurnSpec(),
        ],
        num_agents=3,
        protocol="parallel",
        grades=[1.0, 1.0, 0.0, 1.0, 0.0, 0.0],
    )
    first = vote_matrix(record, 1)
    rows = re.findall(r"<tr><th>Agent (\d)</th>(.*?)</tr>", first)
    cells = {int(a): re.findall(r"<td[^>]*>(.*?)</td>", body) for a, body in rows}
    # agent 0 voted 1 > 2; agent 1 voted 0 > 2; agent 2 voted 0 = 1 (shown both ways)
    assert cells[0][:3] == ["·", "=2", "1"]
    assert cells[1][:3] == ["=2", "·", "0"]
    assert cells[2][:3] == ["", "", "·"]
    assert "✓ right" in cells[0][3] and "✗ wrong" in cells[2][3]
    second = vote_matrix(record, 2)
    assert re.search(r"<tr><th>Agent 2</th><td[^>]*></td><td[^>]*>0</td>", second)


def test_damaged_metrics_lines_are_reported_and_skipped(finished_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "damaged"
    shutil.copytree(finished_run, run)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    lines.insert(1, "{not json")
    lines.insert(3, '["a list"]')
    lines.append('{"step": 4, "phase": "rl", "optim/l')  # torn by a crash
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    log = read_metrics_log(run / "metrics.jsonl")
    assert [r["step"] for r in log.records] == [1, 2, 3]
    assert [n.split(":")[0] for n in log.damaged] == [
        "metrics.jsonl line 2",
        "metrics.jsonl line 4",
        "metrics.jsonl line 6",
    ]
    path, data = write_report(run)
    page = path.read_text()
    assert "metrics.jsonl line 2: not valid JSON" in page and "Notes while reading the run" in page
    assert data.notes == log.damaged


def test_the_damage_resuming_repairs_does_not_stop_a_report(finished_run: Path, tmp_path: Path) -> None:
    # bytes that are not UTF-8, a step that is not an integer, a repeated step: each a note, none fatal
    run = tmp_path / "damaged"
    shutil.copytree(finished_run, run)
    lines = (run / "metrics.jsonl").read_bytes().splitlines(keepends=True)
    lines.insert(1, b'{"step": 2, "x": "\xff\xfe"}\n')
    lines.insert(2, b'{"step": "x", "loss": 1}\n')
    lines.insert(3, b'{"step": true}\n')
    lines.append(lines[0])  # step 1 again
    (run / "metrics.jsonl").write_bytes(b"".join(lines))
    log = read_metrics_log(run / "metrics.jsonl")
    assert [r["step"] for r in log.records] == [1, 2, 3]
    assert log.damaged == (
        "metrics.jsonl line 2: not UTF-8 (byte 19); skipped",
        "metrics.jsonl line 3: 'step' is \"x\", not an integer; skipped",
        "metrics.jsonl line 4: 'step' is true, not an integer; skipped",
        "metrics.jsonl line 7: step 1 again; skipped",
    )
    assert main(["report", str(run), "--out", str(tmp_path / "r.html")]) == 0
    assert "metrics.jsonl line 7: step 1 again" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_running_run_and_a_stopped_one_give_a_report(finished_run: Path, tmp_path: Path) -> None:
    running = tmp_path / "running"
    shutil.copytree(finished_run, running)
    (running / "summary.json").unlink()
    shutil.rmtree(running / "eval")
    page = report_html(read_run(running))
    assert "running or interrupted (last recorded step 3" in page
    assert "No evaluation yet." in page
    started = tmp_path / "started"
    started.mkdir()
    (started / "config.toml").write_text((finished_run / "config.toml").read_text())
    page = report_html(read_run(started))
    assert "no step recorded yet" in page and "No transcript logged yet." in page and "no data yet" in page
    stopped = tmp_path / "stopped"
    shutil.copytree(finished_run, stopped)
    summary = json.loads((stopped / "summary.json").read_text())
    (stopped / "summary.json").write_text(json.dumps({**summary, "stopped_by": "SIGINT"}))
    assert "stopped by SIGINT after step 3" in report_html(read_run(stopped))


def test_an_unreadable_transcript_is_a_note(finished_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "broken"
    shutil.copytree(finished_run, run)
    (run / "transcripts" / "step_000003" / "debate_01.json").write_text("{")
    data = read_run(run)
    assert any("debate_01.json" in n and "not valid JSON" in n for n in data.notes)
    assert ": unreadable</summary>" in report_html(data)


def test_the_command_prints_the_path_and_fails_cleanly_on_a_non_run(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "page.html"
    assert main(["report", str(finished_run), "--out", str(out), "--debates", "2"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert out.read_text().count('<details class="debate"') == 2
    assert main(["report", str(tmp_path / "nothing")]) == 1
    assert "no such run directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 1
    assert "holds no run" in capsys.readouterr().err


def test_ticks_cover_the_range_and_charts_escape_labels() -> None:
    ticks = nice_ticks(0.013, 0.87)
    assert ticks[0] <= 0.013 and ticks[-1] >= 0.87 and len(ticks) <= 8
    assert nice_ticks(5, 5)[0] <= 5 <= nice_ticks(5, 5)[-1] and nice_ticks(5, 5)[-1] <= 6  # around a lone value
    assert nice_ticks(0, 0)[0] == 0 and nice_ticks(0, 0)[-1] == 1
    svg = line_chart("a <b>", [Series("x & y", ((1, 0.5), (2, float("nan")), (3, 0.7)))])
    assert "a &lt;b&gt;" in svg and "x &amp; y" in svg and svg.count("<circle") == 2
    assert "no data yet" in line_chart("empty", [Series("s", ())])


def test_step_axes_tick_at_whole_steps_and_long_titles_wrap_whole() -> None:
    """Issue 44: a two-step run's axis ticked at 1.2, 1.4, ... (no such steps), and a long title was
    clipped at the chart's edges ("ard and label accuracy (training, ground truth, monitoring o")."""
    import re

    svg = line_chart("steps", [Series("s", ((1, 0.5), (2, 0.7)))])
    step_ticks = re.findall(r'text-anchor="middle" class="tick">([^<]+)<', svg)
    assert step_ticks == ["1", "2"]
    assert all(
        float(t).is_integer() for t in map(float, [*nice_ticks(1, 7, whole=True), *nice_ticks(3, 3, whole=True)])
    )
    assert nice_ticks(1, 2) != nice_ticks(1, 2, whole=True)  # values other than steps keep their fine ticks
    title = "Reward and label accuracy (training, ground truth, monitoring only)"
    svg = line_chart(title, [Series("s", ((1, 0.5), (2, 0.7)))])
    lines = re.findall(r'class="chart-title">([^<]+)<', svg)
    assert " ".join(lines) == title and all(len(line) <= 58 for line in lines)
    assert 'viewBox="0 -15 ' in svg  # the second line is drawn above the plot, not over it


def test_evaluations_without_metrics_and_odd_values_do_not_break_the_page(finished_run: Path, tmp_path: Path) -> None:
    from debate_core.report.evaluation_table import evaluation_table

    assert "hold no" in evaluation_table([{"label": "x", "step": 0, "metrics": {"time/eval": 1.0}}])
    odd = [
        {"label": "a", "step": 0, "metrics": {"eval_d/direct/correct": "n/a", "eval_d/debate/correct": 0.5}},
        {"label": "b", "step": 5, "metrics": {"eval_d/direct/correct": 0.25, "eval_d/debate/correct_change": 0.1}},
    ]
    table = evaluation_table(odd)
    assert "direct accuracy" in table and "+0.100" in table  # the paired change is shown as given


def test_the_evaluation_table_shows_the_debate_measurements_with_their_errors_and_changes() -> None:
    """Debate accuracy, debate minus direct with its SE, judge accuracy and comparison rate are headline
    rows; a recorded paired change is shown as paired, else the change's SE treats the two as independent;
    counts are whole numbers whose change is not coloured."""
    from debate_core.report.evaluation_table import evaluation_table

    first = {
        "eval_d/direct/correct": 0.5,
        "eval_d/direct/correct_se": 0.1,
        "eval_d/debate/cons@3": 0.6,
        "eval_d/debate/cons@3_se": 0.1,
        "eval_d/debate_minus_direct": 0.1,
        "eval_d/debate_minus_direct_se": 0.05,
        "eval_d/debate/judge_accuracy": 0.4,
        "eval_d/debate/judge_accuracy_se": 0.1,
        "eval_d/debate/judge_decidable_votes": 30.0,
        "eval_d/debate/comparison_rate": 0.9,
    }
    last = {
        **first,
        "eval_d/direct/correct": 0.7,
        "eval_d/direct/correct_change": 0.2,
        "eval_d/direct/correct_change_se": 0.05,
        "eval_d/debate_minus_direct": 0.2,
        "eval_d/debate_minus_direct_change": 0.1,
        "eval_d/debate_minus_direct_change_se": 0.04,
        "eval_d/debate/judge_accuracy": 0.7,
        "eval_d/debate/judge_decidable_votes": 40.0,
        "eval_d/debate/comparison_rate": 0.95,
    }
    table = evaluation_table(
        [{"label": "start", "step": 0, "metrics": first}, {"label": "final", "step": 9, "metrics": last}]
    )
    rows = {
        m.group(1): re.findall(r"<td>(.*?)</td>", m.group(2))
        for m in re.finditer(r'<tr><td class="label">[^<]*<code>([^<]+)</code></td>(.*?)</tr>', table)
    }
    order = list(rows)
    # a record from before answer rules: cons@k (the majority rule) after debate - direct
    assert order[:4] == ["direct/correct", "debate_minus_direct", "debate/cons@3", "debate/judge_accuracy"]
    assert rows["debate_minus_direct"][:2] == [
        '0.100 <span class="se">± 0.050</span>',
        '0.200 <span class="se">± 0.050</span>',
    ]
    assert (
        rows["debate_minus_direct"][2]
        == '<span class="better">+0.100</span> <span class="se">± 0.040 (+2.5 SE, paired)</span>'
    )
    assert rows["direct/correct"][2].endswith("± 0.050 (+4.0 SE, paired)</span>")
    # judge accuracy, a proportion of decidable votes: its Wilson interval (12 of 30: [0.246, 0.577]) and count
    assert rows["debate/judge_accuracy"][0] == '0.400 <span class="se">[0.246, 0.577] (n=30)</span>'
    # it has no paired change (its votes differ): sqrt(0.1² + 0.1²) = 0.141
    assert rows["debate/judge_accuracy"][2].endswith("± 0.141 (+2.1 SE, independent)</span>")
    assert rows["debate/judge_decidable_votes"] == ["30", "40", "+10"]  # a count: whole, not coloured
    assert rows["debate/comparison_rate"][2] == '<span class="better">+0.050</span>'
    assert "<th>change since start</th>" in table and "paired per problem" in table


def test_too_few_observations_give_a_count_and_no_verdict_and_colours_follow_the_direction() -> None:
    """Judge accuracy from 4 decidable votes is not '1 ± 0.000' with a '+13.3 SE' change in green: it shows
    its Wilson interval and count, and its change has no SE and no colour. Parse errors going up is worse,
    right → wrong going down is better, and a metric without a declared direction is not coloured."""
    from debate_core.report.evaluation_table import evaluation_table

    first = {
        "eval_d/num_problems": 200.0,
        "eval_d/debate/judge_accuracy": 0.36,
        "eval_d/debate/judge_accuracy_se": 0.048,
        "eval_d/debate/judge_decidable_votes": 100.0,
        "eval_d/debate/parse_error": 0.010,
        "eval_d/debate/right_to_wrong": 0.305,
        "eval_d/debate/agents_answering_twice": 600.0,
        "eval_d/debate/rounds_played": 1.5,
        "eval_d/debate/mystery": 0.1,
    }
    last = {
        **first,
        "eval_d/debate/judge_accuracy": 1.0,
        "eval_d/debate/judge_accuracy_se": 0.0,
        "eval_d/debate/judge_decidable_votes": 4.0,
        "eval_d/debate/parse_error": 0.012,
        "eval_d/debate/right_to_wrong": 0.137,
        "eval_d/debate/rounds_played": 1.9,
        "eval_d/debate/mystery": 0.3,
    }
    table = evaluation_table([{"label": "a", "step": 0, "metrics": first}, {"label": "b", "step": 9, "metrics": last}])
    rows = {
        m.group(1): re.findall(r"<td>(.*?)</td>", m.group(2))
        for m in re.finditer(r'<tr><td class="label">[^<]*<code>([^<]+)</code></td>(.*?)</tr>', table)
    }
    assert rows["debate/judge_accuracy"][1] == '1.000 <span class="se">[0.510, 1.000] (n=4)</span>'
    assert rows["debate/judge_accuracy"][2] == '+0.640 <span class="se">(n=4: too few for an SE)</span>'
    assert "± 0.000" not in table and "13.3 SE" not in table
    assert rows["debate/parse_error"][2] == '<span class="worse">+0.002</span>'
    assert rows["debate/right_to_wrong"][1] == '0.137 <span class="se">[0.112, 0.167] (n=600)</span>'
    assert rows["debate/right_to_wrong"][2] == '<span class="better">-0.168</span>'
    assert rows["debate/rounds_played"][2] == "+0.400"  # no declared direction: no colour
    assert rows["debate/mystery"][2] == "+0.200"


def test_a_record_without_its_paired_changes_gets_them_from_its_per_problem_values() -> None:
    """A run made before a metric's change was recorded (debate minus direct, kept per problem later)
    still shows paired changes, from both records' per-problem values; a recorded change wins."""
    from debate_core.report.evaluation_table import evaluation_table, with_paired_changes

    direct_before, debate_before = [1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]
    direct_after, debate_after = [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]

    def record(label: str, step: int, direct: list[float], debate: list[float]) -> dict[str, object]:
        metrics = {
            "eval_d/direct/correct": sum(direct) / 4,
            "eval_d/debate/cons@3": sum(debate) / 4,
            "eval_d/debate_minus_direct": (sum(debate) - sum(direct)) / 4,
        }
        per_problem = {"eval_d/direct/correct": direct, "eval_d/debate/cons@3": debate}
        return {"label": label, "step": step, "metrics": metrics, "per_problem": per_problem}

    first = record("start", 0, direct_before, debate_before)
    last = record("final", 9, direct_after, debate_after)
    last["metrics"]["eval_d/direct/correct_change"] = 0.125  # type: ignore[index]  # recorded: kept as is
    completed = with_paired_changes([first, last])[-1]["metrics"]
    # per problem, debate minus direct goes 0,1,-1,0 -> 0,0,0,1: changes 0,-1,1,1: mean 0.25, sample variance 2.75/3
    assert completed["eval_d/debate_minus_direct_change"] == pytest.approx(0.25)
    assert completed["eval_d/debate_minus_direct_change_se"] == pytest.approx((2.75 / 3 / 4) ** 0.5)
    assert completed["eval_d/debate/cons@3_change"] == pytest.approx(0.5)
    assert completed["eval_d/direct/correct_change"] == 0.125
    assert "eval_d/debate_minus_direct_change" not in last["metrics"]  # the record itself is untouched
    table = evaluation_table([first, last])
    assert '<span class="better">+0.250</span> <span class="se">± 0.479 (+0.5 SE, paired)</span>' in table
    # without per-problem values the change stays an independent one
    bare = [{k: v for k, v in r.items() if k != "per_problem"} for r in (first, last)]
    assert "eval_d/debate_minus_direct_change" not in with_paired_changes(bare)[-1]["metrics"]


def test_evaluations_are_ordered_as_made_so_the_first_column_is_the_baseline(tmp_path: Path) -> None:
    """An evaluation at the start and one after the first iteration can share a step; the start comes
    first (it is the baseline of the paired changes), whatever the file names sort to."""
    from debate_core.rundir.evaluation_records import first_evaluation, read_evaluation_records

    for name, iteration in (("step_000000_start", 0), ("step_000000_iteration_1", 1), ("step_000004_final", 4)):
        record = {"label": name[12:], "step": int(name[5:11]), "iteration": iteration, "metrics": {}}
        (tmp_path / f"{name}.json").write_text(json.dumps(record))
    assert [r["label"] for r in read_evaluation_records(tmp_path)] == ["start", "iteration_1", "final"]
    assert first_evaluation(tmp_path)["label"] == "start"  # type: ignore[index]


def test_the_curves_show_debate_accuracy_and_debate_minus_direct_with_error_bars(finished_run: Path) -> None:
    page = report_html(read_run(finished_run))
    held_out = re.search(r'aria-label="Held-out accuracy \(± SE\)".*?</svg>', page, re.S)
    assert held_out is not None and "debate (its answer)" in held_out.group(0)
    assert held_out.group(0).count("<polyline") == 4
    gap = re.search(r'aria-label="Debate − direct, held-out \(± SE\)".*?</svg>', page, re.S)
    assert gap is not None and gap.group(0).count("<circle") == 4  # one point per evaluation
    # two evaluation problems: too few for a standard error, so no error bar is drawn
    assert 'class="whisker"' not in held_out.group(0) + gap.group(0)


def test_error_bars_widen_the_axis_and_zero_is_marked() -> None:
    svg = line_chart("gap", [Series("d", ((0, 0.1), (1, -0.05)), errors=(0.3, 0.02))])
    ticks = [float(t) for t in re.findall(r'class="tick">([-0-9.e]+)</text>', svg)]
    assert min(ticks) <= -0.2 and max(ticks) >= 0.4  # 0.1 ± 0.3 fits
    assert svg.count('class="whisker"') == 2 and 'class="zero"' in svg
    assert "± 0.3" in svg  # the point's tooltip


def test_each_turn_shows_its_steps_generator_and_judge_rewards_and_advantages(tmp_path: Path) -> None:
    """With v2's judge stream, a logged debate's turns show both streams' reward and advantage, from the
    rewards the trainer saved beside the transcript."""
    import asyncio

    from debate_core.rundir.directory import RunDirectory
    from debate_core.rundir.reward_sidecars import read_sidecar
    from debate_core.training.progress import Progress
    from debate_core.training.run import run_training
    from tests.training.trainer_harness import harness_registry, make_config

    root = tmp_path / "run"
    with harness_registry() as registry:
        config = make_config(
            "training.num_iterations=1",
            "logging.num_groups_to_log=1",
            "reward=v2",
            "reward.options.evaluation_stream=judge",
        )
        asyncio.run(run_training(config, registry, RunDirectory(root), progress=Progress("off"), handle_signals=False))
    run = read_run(root, max_debates=1)
    (debate,) = run.debates
    assert debate.record is not None and debate.rewards is not None
    assert debate.rewards == read_sidecar(debate.path)
    page = report_html(run)

    def shown(value: float) -> str:  # signed to 3 places, a zero as 0
        return f"{value:+.3f}" if value else "0"

    checked = 0
    for turn in debate.record.turns:
        if turn.step >= len(debate.rewards["streams"]["generator"][turn.agent]):
            continue  # a step the reward did not score (a failed turn)
        for stream in ("generator", "judge"):
            reward = debate.rewards["streams"][stream][turn.agent][turn.step]
            advantage = debate.rewards["stream_advantages"][stream][turn.agent][turn.step]
            assert f'<span class="stream">{stream}</span> r {shown(reward)} A {shown(advantage)}' in page, stream
            checked += 1
    assert checked >= 2


def test_the_page_names_where_every_evaluation_debate_is_saved(finished_run: Path) -> None:
    page = report_html(read_run(finished_run))
    folders = sorted(p for p in (finished_run / "eval").iterdir() if p.is_dir())
    assert folders
    for folder in folders:
        count = len([p for p in folder.glob("*.json") if not p.name.endswith(".rewards.json")])
        assert f"<code>eval/{folder.name}/</code> ({count} debates)" in page


def test_a_resume_with_another_config_names_each_segment_and_marks_the_change(
    resumed_run: Path, finished_run: Path
) -> None:
    """A resume that changed the reward: each evaluation column names its segment (the two 'final'
    columns are told apart), the segments are listed with the keys that changed, and every drawn
    chart has a dashed marker between the last step before the resume and the first after it."""
    run = read_run(resumed_run)
    assert [(s.number, s.after, s.config_file) for s in run.segments] == [
        (1, 0, "config.toml"),
        (2, 2, "config.resumed_step_000002.toml"),
    ]
    assert run.segments[1].changed == ("reward.name", "training.num_iterations")
    page = report_html(run)
    heads = re.findall(r"<th>(\w+)<br><small>step (\d+) · segment (\d)</small></th>", page)
    assert heads[:5] == [
        ("start", "0", "1"),
        ("iteration_1", "1", "1"),
        ("final", "2", "1"),
        ("iteration_3", "3", "2"),
        ("final", "4", "2"),
    ]
    assert "segment 2: resumed after step 2, config.resumed_step_000002.toml; changed: reward.name" in page
    drawn = [c for c in re.findall(r'<svg class="chart".*?</svg>', page, re.S) if "<polyline" in c]
    assert drawn and all('class="marker"' in c and "segment 2" in c for c in drawn)
    # the marker lies between step 2 and step 3 of the x axis: after the point of step 2, before that of 3
    svg = re.search(r'aria-label="Reward per stream \(training\)".*?</svg>', page, re.S)
    assert svg is not None
    marker_x = float(re.search(r'<g class="marker">.*?<line x1="([\d.]+)"', svg.group(0)).group(1))  # type: ignore[union-attr]
    xs = {
        step: float(x)
        for x, step in re.findall(r'<circle cx="([\d.]+)"[^>]*><title>configured reward: step (\d)', svg.group(0))
    }
    assert xs["2"] < marker_x < xs["3"]
    # a run never resumed with another config has one segment: no segment names, no markers
    plain = report_html(read_run(finished_run))
    assert "· segment" not in plain and 'class="marker"' not in plain


def test_mid_run_the_panels_without_data_go_below_the_live_curves(finished_run: Path, tmp_path: Path) -> None:
    running = tmp_path / "running"
    running.mkdir()
    (running / "config.toml").write_text((finished_run / "config.toml").read_text())
    first = (finished_run / "metrics.jsonl").read_text().splitlines()[0]
    record = {k: v for k, v in json.loads(first).items() if not k.startswith("eval_")}
    (running / "metrics.jsonl").write_text(json.dumps(record) + "\n")
    page = report_html(read_run(running))
    charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    live = ["<polyline" in c or "<circle" in c for c in charts]
    assert any(live) and not all(live)
    assert live == sorted(live, reverse=True)  # every live chart before every empty one


def test_the_collapse_figures_are_drawn_and_tripped_alarms_are_listed(finished_run: Path, tmp_path: Path) -> None:
    """Every RL record carries the collapse monitors (docs/training.md#collapse-alarms): they are
    charts; an alarm that tripped is a line above the evaluation table, one that did not is not."""
    page = report_html(read_run(finished_run))
    assert legends(page, "Collapse monitors (training, no labels)") == [
        "answer diversity",
        "agree from round 1",
        "no signal",
        "top-answer share",
        "unreadable answers",
    ]
    assert legends(page, "Reward and label accuracy (training, ground truth, monitoring only)")
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for record, tripped in zip(records, (0.0, 1.0, 1.0), strict=True):
        record["alarm/constant_answer"] = tripped
        record["alarm/no_signal"] = 0.0
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    page = report_html(read_run(run))
    assert "Collapse alarms" in page and "constant answer: tripped at 2 of 3 RL iterations, steps 2–3" in page
    assert "no signal: tripped" not in page


def test_the_page_says_where_the_run_computed_and_notes_a_resume_elsewhere(finished_run: Path, tmp_path: Path) -> None:
    """RUN_DIR/environment.json (docs/training.md#the-run-directory): a row per start and resume, and
    a note when a resume computed on another machine or backend set-up."""
    from debate_core.rundir.environment import machine_facts

    run = read_run(finished_run)
    assert len(run.environment) == 1 and run.environment[0]["step"] == 0
    page = report_html(run)
    assert '<h2 id="environment">Where it ran</h2>' in page
    assert machine_facts()["processor"] in page and "Python " + machine_facts()["python"] in page
    assert not any("another machine" in n for n in run.notes)
    moved = tmp_path / "moved"
    shutil.copytree(finished_run, moved)
    entries = json.loads((moved / "environment.json").read_text())
    backend = {**entries[0]["backend"], "threads": "7"}
    elsewhere = {**entries[0], "step": 2, "processor": "Another CPU", "backend": backend}
    (moved / "environment.json").write_text(json.dumps([entries[0], elsewhere]))
    notes = [n for n in read_run(moved).notes if "another machine" in n]
    assert notes == [
        "resumed at step 2 on another machine or backend set-up (backend, processor differ, see 'Where it ran'): "
        "floating-point rounding may differ from there on"
    ]
    (moved / "environment.json").unlink()
    assert "No environment.json" in report_html(read_run(moved))
