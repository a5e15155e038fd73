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
    for label in ("start", "iteration_1", "iteration_2", "final"):
        assert f"<th>{label}<br>" in page
    final = json.loads(next((finished_run / "eval").glob("*_final.json")).read_text())["metrics"]
    value, error = final["eval_tiny_sums/direct/correct"], final["eval_tiny_sums/direct/correct_se"]
    assert f'{value:.3f} <span class="se">± {error:.3f}</span>' in page
    assert "change since first" in page
    # curves: SVG charts with lines for the metrics the run wrote
    assert page.count('<svg class="chart"') >= 7
    assert 'aria-label="Reward per stream (training)"' in page and "<polyline" in page
    # debates: spread over the run, newest open, sections marked, rewards and votes shown
    assert [(d.step, d.index) for d in run.debates] == [(1, 0), (2, 0), (2, 1), (3, 1)]
    assert run.debates_logged == 6
    assert page.count('<details class="debate"') == 4 and page.count('<details class="debate" open>') == 1
    assert 'data-section="solution"' in page and 'class="votes-matrix"' in page
    assert "reward <code>win_rate</code>" in page


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
    assert nice_ticks(5, 5)[0] <= 5 <= nice_ticks(5, 5)[-1]
    svg = line_chart("a <b>", [Series("x & y", ((1, 0.5), (2, float("nan")), (3, 0.7)))])
    assert "a &lt;b&gt;" in svg and "x &amp; y" in svg and svg.count("<circle") == 2
    assert "no data yet" in line_chart("empty", [Series("s", ())])


def test_evaluations_without_metrics_and_odd_values_do_not_break_the_page(finished_run: Path, tmp_path: Path) -> None:
    from debate_core.report.page import evaluation_table

    assert "hold no" in evaluation_table([{"label": "x", "step": 0, "metrics": {"time/eval": 1.0}}])
    odd = [
        {"label": "a", "step": 0, "metrics": {"eval_d/direct/correct": "n/a", "eval_d/debate/correct": 0.5}},
        {"label": "b", "step": 5, "metrics": {"eval_d/direct/correct": 0.25, "eval_d/debate/correct_change": 0.1}},
    ]
    table = evaluation_table(odd)
    assert "accuracy, direct answers" in table and "+0.100" in table  # the paired change is shown as given
