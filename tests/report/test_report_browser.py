"""The report in a real headless browser (Debian's Chromium): it loads with no console error and
no network request, and a screenshot shows the plots and a transcript.

Skipped, with the reason, where no Chromium is installed; ``.ci/run`` installs Debian's
``chromium`` package so CI always runs it (``DEBATE_REQUIRE_BROWSER=1`` turns the skip into a failure).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.report import write_report
from debate_core.report.browser import CHROMIUM_ENV, find_chromium, visit

CHROMIUM = find_chromium()
if CHROMIUM is None and os.environ.get("DEBATE_REQUIRE_BROWSER") == "1":
    raise RuntimeError(
        f"DEBATE_REQUIRE_BROWSER=1 but no Chromium is installed (apt-get install chromium, or {CHROMIUM_ENV})"
    )
pytestmark = [
    pytest.mark.slow,  # drives a headless Chromium: not in the quick loop
    pytest.mark.skipif(
        CHROMIUM is None,
        reason=f"no Chromium on this machine: apt-get install chromium (or set {CHROMIUM_ENV}) to run the browser test",
    ),
]

PROBE = """(() => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const charts = [...document.querySelectorAll('svg.chart')];
  const open = document.querySelector('details.debate[open]');
  const sections = open ? [...open.querySelectorAll('.sec')] : [];
  return {
    charts: charts.length,
    drawn: charts.filter(c => c.querySelector('polyline')).map(box),
    lines: document.querySelectorAll('svg.chart polyline').length,
    turns: open ? [...open.querySelectorAll('.turn')].map(box) : [],
    sections: sections.map(s => [s.dataset.section, getComputedStyle(s, '::before').content]),
    matrices: open ? open.querySelectorAll('table.votes-matrix').length : 0,
    title: document.title,
  };
})()"""


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def colours_in(png: bytes, region: tuple[int, int, int, int]) -> set[tuple[int, int, int]]:
    """The distinct colours of a region of a PNG (decoded with zlib; 8-bit RGB or RGBA, no interlace)."""
    import zlib

    width, height = png_size(png)
    bit_depth, colour_type = png[24], png[25]
    assert bit_depth == 8 and colour_type in (2, 6), (bit_depth, colour_type)
    channels = 3 if colour_type == 2 else 4
    position, idat = 8, b""
    while position < len(png):
        length = struct.unpack(">I", png[position : position + 4])[0]
        kind = png[position + 4 : position + 8]
        if kind == b"IDAT":
            idat += png[position + 8 : position + 8 + length]
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    offset = 0
    for _ in range(min(height, region[3])):  # rows below the region are not needed
        kind, line = raw[offset], bytearray(raw[offset + 1 : offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(line)
        previous = line
    x0, y0, x1, y1 = region
    return {
        tuple(rows[y][x * channels : x * channels + 3])  # type: ignore[misc]
        for y in range(max(y0, 0), min(y1, height))
        for x in range(max(x0, 0), min(x1, width))
    }


def test_the_report_loads_without_errors_or_network_and_renders_plots_and_a_transcript(
    finished_run: Path, tmp_path: Path
) -> None:
    path, _ = write_report(finished_run, tmp_path / "report.html")
    page = visit(path, script=PROBE, width=1400, height=900)
    assert page.console_errors == ()
    assert all(url.startswith("file://") for url in page.requests), page.requests
    probe = page.value
    assert probe["title"] == "debate report: run"
    assert probe["charts"] >= 7 and probe["lines"] >= 5
    assert all(w > 300 and h > 150 for w, h in probe["drawn"]), probe["drawn"]  # the plots have a size
    assert len(probe["turns"]) >= 3 and all(h > 40 for _, h in probe["turns"])  # the transcript is laid out
    assert probe["matrices"] >= 1
    names = {name for name, _ in probe["sections"]}
    assert {"solution", "evaluation", "comparison"} <= names
    assert all(label.strip('"') == name for name, label in probe["sections"])  # the section labels are drawn
    width, height = png_size(page.screenshot)
    assert width == 1400 and height > 1500  # the whole page


def test_the_screenshot_shows_the_plot_lines(finished_run: Path, tmp_path: Path) -> None:
    path, _ = write_report(finished_run, tmp_path / "report.html")
    locate = """(() => { const chart = document.querySelector('svg.chart'); chart.scrollIntoView();
      const r = chart.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom].map(Math.round); })()"""
    page = visit(path, script=locate, width=1400, height=900, full_page=False)
    left, top, right, bottom = page.value
    colours = colours_in(page.screenshot, (left, top, right, bottom))
    # the first series' colour (#1f77b4) is on screen inside the first chart, not only in the markup
    assert any(abs(r - 0x1F) < 24 and abs(g - 0x77) < 24 and abs(b - 0xB4) < 24 for r, g, b in colours)
    assert len(colours) > 20


def test_debate_report_saves_a_screenshot(finished_run: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    assert main(["report", str(finished_run), "--out", str(tmp_path / "r.html"), "--screenshot", str(shot)]) == 0
    assert png_size(shot.read_bytes())[0] == 1400


def test_console_errors_and_requests_are_caught(tmp_path: Path) -> None:
    """The checks above can fail: a page that logs an error, throws and fetches something is seen doing so."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><body><img src='missing.png'>"
        "<script>console.error('boom'); undefinedFunction();</script></body></html>"
    )
    visited = visit(page, full_page=False)
    assert any("console.error: boom" in e for e in visited.console_errors)
    assert any("undefinedFunction" in e for e in visited.console_errors)
    assert any(url.endswith("missing.png") for url in visited.requests)


SEGMENTS_PROBE = """(() => {
  const colour = sel => [...document.querySelectorAll(sel)].map(e => getComputedStyle(e).color);
  const markers = [...document.querySelectorAll('svg.chart g.marker line')].map(l => l.getBoundingClientRect().height);
  const charts = [...document.querySelectorAll('svg.chart')].map(c => !!c.querySelector('polyline, circle'));
  return {
    markers, charts,
    labels: [...document.querySelectorAll('svg.chart g.marker text')].map(t => t.textContent),
    segments: [...document.querySelectorAll('li.segment')].map(li => li.textContent),
    heads: [...document.querySelectorAll('table.evaluation th small')].map(s => s.textContent),
    better: colour('span.better'), worse: colour('span.worse'),
  };
})()"""


def test_a_resumed_run_shows_its_segments_markers_and_coloured_changes(resumed_run: Path, tmp_path: Path) -> None:
    """The resume marker is drawn on every live chart, the segments are listed and named in the
    column heads; a change is green when better and red when worse by the metric's direction."""
    run = tmp_path / "run"
    shutil.copytree(resumed_run, run)
    # two evaluations of 200 problems (the harness evaluates 2, too few for any verdict)
    first = {"eval_d/num_problems": 200.0, "eval_d/debate/parse_error": 0.010, "eval_d/debate/comparison_rate": 0.9}
    last = {**first, "eval_d/debate/parse_error": 0.012, "eval_d/debate/comparison_rate": 0.95}
    for name in ("step_000000_start.json", "step_000004_final.json"):
        record = json.loads((run / "eval" / name).read_text())
        record["metrics"].update(first if "start" in name else last)
        (run / "eval" / name).write_text(json.dumps(record))
    path, _ = write_report(run, tmp_path / "report.html")
    page = visit(path, script=SEGMENTS_PROBE, width=1400, height=900)
    assert page.console_errors == ()
    probe = page.value
    live = [drawn for drawn in probe["charts"] if drawn]
    assert len(probe["markers"]) == len(live) and all(h > 100 for h in probe["markers"])  # full-height lines
    assert set(probe["labels"]) == {"segment 2"}
    assert len(probe["segments"]) == 2 and "changed: reward.name" in probe["segments"][1]
    assert "step 4 · segment 2" in probe["heads"] and "step 2 · segment 1" in probe["heads"]
    assert probe["charts"] == sorted(probe["charts"], reverse=True)  # no empty panel above a live one
    assert probe["better"] and set(probe["better"]) == {"rgb(22, 128, 60)"}  # comparison rate up: green
    assert probe["worse"] and set(probe["worse"]) == {"rgb(179, 38, 30)"}  # parse errors up: red


COMPARE_PROBE = """(() => {
  const charts = [...document.querySelectorAll('svg.chart')];
  const box = el => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  return {
    title: document.title,
    strokes: charts.map(c => [...c.querySelectorAll('polyline')].map(p => getComputedStyle(p).stroke)),
    sizes: charts.map(box),
    swatches: [...document.querySelectorAll('.swatch')].map(s => [getComputedStyle(s).backgroundColor, ...box(s)]),
    diffRows: [...document.querySelectorAll('table.config-diff tr')].map(r => r.getBoundingClientRect().height),
    columns: [...document.querySelectorAll('table.compared th.run')].map(th => getComputedStyle(th).borderTopColor),
  };
})()"""


def test_the_comparison_loads_without_errors_or_network_and_overlays_one_colour_per_run(
    finished_run: Path, peer_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "compare.html"
    assert main(["compare", str(finished_run), str(peer_run), "--out", str(out)]) == 0
    page = visit(out, script=COMPARE_PROBE, width=1400, height=900)
    assert page.console_errors == ()
    assert all(url.startswith("file://") for url in page.requests), page.requests
    probe = page.value
    assert probe["title"] == "debate compare: run vs peer"
    blue, red = "rgb(31, 119, 180)", "rgb(214, 39, 40)"  # PALETTE[0], PALETTE[1]
    assert len(probe["strokes"]) >= 5 and all(set(s) == {blue, red} for s in probe["strokes"]), probe["strokes"]
    assert all(w > 300 and h > 150 for w, h in probe["sizes"])
    assert [s[0] for s in probe["swatches"]] == [blue, red] and all(w > 5 for _, w, _ in probe["swatches"])
    assert len(probe["diffRows"]) >= 2 and all(h > 10 for h in probe["diffRows"])  # laid out, not hidden
    assert probe["columns"][:3] == [blue, blue, red]  # start and final of the first run, then the second's
    # the second run's colour is on screen inside the first chart, not only in the markup
    locate = """(() => { const chart = document.querySelector('svg.chart'); chart.scrollIntoView();
      const r = chart.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom].map(Math.round); })()"""
    shot = visit(out, script=locate, width=1400, height=900, full_page=False)
    colours = colours_in(shot.screenshot, tuple(shot.value))
    assert any(abs(r - 0xD6) < 24 and abs(g - 0x27) < 24 and abs(b - 0x28) < 24 for r, g, b in colours)


FIRST_SCREEN_PROBE = """(() => {
  const rect = el => {
    const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom].map(Math.round);
  };
  const table = document.querySelector('table.headline-table');
  const chart = document.querySelector('.headline svg.chart');
  return {
    table: table ? rect(table) : null,
    rows: table ? [...table.querySelectorAll('tr')].slice(1).map(tr => tr.cells[0].textContent) : [],
    chart: chart ? rect(chart) : null,
    drawn: chart ? chart.querySelectorAll('polyline, circle').length : 0,
    full: rect(document.getElementById('evaluation')),
  };
})()"""


def test_the_first_screen_shows_the_headline_table_and_a_chart(finished_run: Path, tmp_path: Path) -> None:
    """What a person sees on opening the report, 1400 by 900 pixels unscrolled: the headline table
    (direct, the debate's answer, cons@k) and the held-out accuracy chart, drawn; the full metric
    table starts below them."""
    path, _ = write_report(finished_run, tmp_path / "report.html")
    page = visit(path, script=FIRST_SCREEN_PROBE, width=1400, height=900, full_page=False)
    assert page.console_errors == ()
    probe = page.value
    assert probe["rows"][:2] == ["one answer (direct accuracy)", "the debate's answer"], probe["rows"]
    assert any(row.startswith("majority of") for row in probe["rows"])
    for box in (probe["table"], probe["chart"]):
        left, top, right, bottom = box
        assert left >= 0 and top >= 0 and right <= 1400 and bottom <= 900, box  # whole, on the first screen
    assert probe["drawn"] > 0
    assert probe["full"][1] > max(probe["table"][3], probe["chart"][3])  # the full table comes after
    left, top, right, bottom = probe["chart"]
    colours = colours_in(page.screenshot, (left, top, right, bottom))
    # the direct series' colour (#1f77b4) is on the screenshot inside the chart, not only in the markup
    assert any(abs(r - 0x1F) < 24 and abs(g - 0x77) < 24 and abs(b - 0xB4) < 24 for r, g, b in colours)
