"""The HTML report in a real headless browser: it renders, its charts are there, and sorting works.

Skipped when no Chromium is installed (Debian: ``apt-get install chromium``). The page runs a
small self-test when opened with ``#selftest``: it clicks the FLOPs header, records the first
row and the sort order in ``data-selftest-*`` attributes of ``<body>``, filters the table, and
sets ``data-selftest="pass"``. ``--dump-dom`` returns the DOM after the scripts ran.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess

import pytest

from render_helpers import hostile_report, measured_report, sample_report, sweep_data
from tflite_flops.report.compare import compare_reports
from tflite_flops.render.compare import render_compare_html
from tflite_flops.render.formats.html import render_html

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")
                 if shutil.which(n)), None)
pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH")]


def _chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=90)


def _body_attrs(dom: str) -> dict[str, str]:
    m = re.search(r"<body([^>]*)>", dom)
    assert m, dom[:500]
    return dict(re.findall(r'(data-selftest[\w-]*)="([^"]*)"', m.group(1)))


def _selftest(tmp_path, text: str, name: str = "report.html") -> dict[str, str]:
    page = tmp_path / name
    page.write_text(text, encoding="utf-8")
    proc = _chromium(tmp_path, "--dump-dom", page.as_uri() + "#selftest")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return _body_attrs(proc.stdout)


def test_report_renders_and_sorts_in_chromium(tmp_path):
    report = sample_report()
    attrs = _selftest(tmp_path, render_html(report))
    assert attrs.get("data-selftest") == "pass", attrs
    top = report.top_ops(1)[0]
    assert attrs["data-selftest-first"] == f"{top.subgraph}:{top.index}"
    assert attrs["data-selftest-sort"] == "descending"
    flops = [int(v) for v in attrs["data-selftest-flops"].split(",")]
    assert flops == sorted((o.flops for o in report.ops), reverse=True)[:len(flops)]
    conv = [o for o in report.ops if "conv" in f"{o.op_type} {o.name} {o.subgraph}:{o.index} {o.precision}".lower()]
    assert int(attrs["data-selftest-filtered"]) == len(conv)
    assert int(attrs["data-selftest-charts"]) == 3  # FLOPs by type, FLOPs per op, live bytes per op


def test_measured_report_with_sweep_renders_all_charts(tmp_path):
    attrs = _selftest(tmp_path, render_html(measured_report(), sweep=sweep_data()))
    assert attrs.get("data-selftest") == "pass", attrs
    assert int(attrs["data-selftest-charts"]) == 8


def test_hostile_names_do_not_run(tmp_path):
    page = tmp_path / "hostile.html"
    page.write_text(render_html(hostile_report()), encoding="utf-8")
    proc = _chromium(tmp_path, "--dump-dom", page.as_uri() + "#selftest")
    assert proc.returncode == 0
    assert "<img" not in proc.stdout  # the name stayed text: no element was created from it
    assert _body_attrs(proc.stdout).get("data-selftest") == "pass"


def test_compare_page_renders(tmp_path):
    import tflite_flops
    from render_helpers import SAMPLES

    c = compare_reports(tflite_flops.analyze(SAMPLES / "cnn_float.tflite"),
                        tflite_flops.analyze(SAMPLES / "cnn_int8.tflite"))
    page = tmp_path / "compare.html"
    page.write_text(render_compare_html(c), encoding="utf-8")
    proc = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert proc.returncode == 0 and "cnn_int8.tflite" in proc.stdout and "<svg" in proc.stdout


def test_screenshot(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(measured_report(), sweep=sweep_data()), encoding="utf-8")
    shot = tmp_path / "report.png"
    proc = _chromium(tmp_path, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real picture, not a blank page


# ---- issue 45: the page leads with the answers ---------------------------------------------------------------

FOLD = (1280, 800)  # the window: the cards must be on its first screen


def _console_errors(stderr: str) -> list[str]:
    """The page's console messages in Chromium's log (``--enable-logging=stderr``, every level at INFO): an uncaught
    exception, a resource the page's policy refused, a console call. The page writes none of its own."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_page_leads_with_the_answers_above_the_fold(tmp_path):
    """Issue 45: the header cards hold the declared figures (the memory headline, MACs, the time, XNNPACK's
    partitions and kept ops) and the top advice with its saving, all on the first screen at 1280×800; the per-op
    table of a 150-op model shows its top 20 ops by FLOPs with a button for the others; no console error; and a
    screenshot to look at."""
    from tflite_flops.render.advice import top_advice, saving_parts
    from tflite_flops.report import summary

    report = sample_report("tiny_decoder.tflite")  # 150 ops in two subgraphs, two delegates' kept ops, advice
    text = render_html(report)
    page = tmp_path / "report.html"
    page.write_text(text, encoding="utf-8")
    size = f"--window-size={FOLD[0]},{FOLD[1]}"
    proc = _chromium(tmp_path, size, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri() + "#selftest")
    assert proc.returncode == 0, proc.stderr[-2000:]
    attrs = _body_attrs(proc.stdout)
    assert attrs.get("data-selftest") == "pass", attrs
    assert attrs["data-selftest-errors"] == "0" and not _console_errors(proc.stderr), proc.stderr[-2000:]
    assert int(attrs["data-selftest-cards-bottom"]) <= FOLD[1], attrs  # every card above the fold
    # the cards: each declared figure's label and text, and the top change's saving
    cards = proc.stdout[proc.stdout.index('<section id="totals"'):proc.stdout.index("</section>",
                                                                                  proc.stdout.index('id="totals"'))]
    for key in ("runtime_total_bytes", "macs", "xnnpack_partitions"):
        f = summary.BY_KEY[key]
        assert f'<div class="k">{f.label}</div><div class="v">{f.text(summary.value(report, key))}</div>' in cards
    assert f"{summary.BY_KEY['xnnpack_kept_ops'].label}: {summary.value(report, 'xnnpack_kept_ops')}" in cards
    assert "not timed" in cards and "--latency" in cards  # no time: the card says how to get one
    top = top_advice(report.advice)
    value, what = saving_parts(top)
    assert "What to change first" in cards and f"{value} <span" in cards and what in cards  # (the DOM: plain quotes)
    assert f"[{top.kind}]" in cards
    # the per-op table: its top 20 ops first (by FLOPs, the ops run per inference first), a button for all 150
    assert attrs["data-selftest-rows"] == "150" and attrs["data-selftest-rows-shown"] == "20", attrs
    assert attrs["data-selftest-rows-all"] == "150" and attrs["data-selftest-rows-again"] == "20", attrs
    assert "show all 150 ops" in proc.stdout
    assert int(attrs["data-selftest-ops-height"]) <= FOLD[1], attrs  # 150 rows were a page of their own
    assert int(attrs["data-selftest-height"]) < 6000, attrs  # the whole page: 6,900 px with every kept op listed
    shot = tmp_path / "report.png"
    proc = _chromium(tmp_path, size, f"--screenshot={shot}", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real picture, not a blank page
    assert int.from_bytes(data[16:20], "big") == FOLD[0] and int.from_bytes(data[20:24], "big") == FOLD[1]


@pytest.mark.parametrize("name", ["cnn_int8.tflite", "cnn_float.tflite"])
def test_small_pages_keep_every_row_and_their_cards_above_the_fold(tmp_path, name):
    """A 12-op model's table shows every op in execution order (nothing to collapse); an MCU model's cards (TFLite
    Micro's arena first) still fit the first screen."""
    report = sample_report(name)
    page = tmp_path / "small.html"
    page.write_text(render_html(report), encoding="utf-8")
    proc = _chromium(tmp_path, f"--window-size={FOLD[0]},{FOLD[1]}", "--dump-dom", page.as_uri() + "#selftest")
    attrs = _body_attrs(proc.stdout)
    assert attrs.get("data-selftest") == "pass" and attrs["data-selftest-errors"] == "0", attrs
    assert int(attrs["data-selftest-cards-bottom"]) <= FOLD[1], attrs
    assert attrs["data-selftest-rows-shown"] == attrs["data-selftest-rows"] == str(len(report.ops))
    assert "show all" not in proc.stdout


# ---- issue 12: layout, legends, colours and sweep order, checked in the browser ---------------------------


def _dom(tmp_path, text: str, width: int = 1280, name: str = "page.html", selftest: bool = False) -> str:
    page = tmp_path / name
    page.write_text(text, encoding="utf-8")
    proc = _chromium(tmp_path, f"--window-size={width},900", "--dump-dom",
                     page.as_uri() + ("#selftest" if selftest else ""))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _section(dom: str, section_id: str) -> str:
    start = dom.index(f'<section id="{section_id}"')
    return dom[start:dom.index("</section>", start)]


@pytest.mark.parametrize("width", [1280, 1920])
def test_op_table_shows_every_column_and_wraps_names_between_parts(tmp_path, width):
    """The widest table (with latency columns) fits: nothing to scroll, the formula column is on screen,
    and names wrap at their separators, never between two letters."""
    attrs = _body_attrs(_dom(tmp_path, render_html(measured_report(), sweep=sweep_data()), width, selftest=True))
    assert attrs.get("data-selftest") == "pass", attrs
    assert int(attrs["data-selftest-overflow"]) <= 1, attrs
    assert attrs["data-selftest-last-column"] == "formula / note visible", attrs
    assert int(attrs["data-selftest-midword"]) == 0, attrs
    if width == 1280:
        assert int(attrs["data-selftest-name-breaks"]) > 0  # names do wrap here: the check above means something
    shot = tmp_path / f"ops_{width}.png"
    proc = _chromium(tmp_path, f"--window-size={width},900", f"--screenshot={shot}",
                     (tmp_path / "page.html").as_uri())
    assert proc.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_scatter_and_roofline_charts_have_their_own_legend(tmp_path):
    dom = _dom(tmp_path, render_html(measured_report()))
    for section_id in ("latency", "roofline"):
        part = _section(dom, section_id)
        chart = part[part.index("<svg"):part.index("</svg>")]
        dots = set(re.findall(r'<circle[^>]*fill="(#[0-9a-f]{6})"', chart))
        legend = part[part.index('class="legend"'):]
        swatches = set(re.findall(r"--c:\s*(#[0-9a-f]{6})", legend))
        assert dots and dots <= swatches, (section_id, dots - swatches)
    roof = _section(dom, "roofline")
    assert "roofline (measured peaks)" in roof[roof.index('class="legend"'):]


def _lab(color: str) -> tuple[float, float, float]:
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(int(color[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x, y, z = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
               (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_op_type_colours_are_easy_to_tell_apart(tmp_path):
    """Every pair of distinct op-type colours in the page's legend is at least 20 CIE76 ΔE apart
    (the old palette had two blues 9 apart and two pinks 19 apart)."""
    import itertools
    import math

    from tflite_flops.render.charts import OTHER_COLOR, PALETTE

    dom = _dom(tmp_path, render_html(sample_report("transformer_block.tflite")))
    legend = _section(dom, "charts")
    colours = sorted(set(re.findall(r"--c:\s*(#[0-9a-f]{6})", legend)))
    assert len(colours) >= 10
    for a, b in itertools.combinations(sorted(set(PALETTE) | {OTHER_COLOR} | set(colours)), 2):
        assert math.dist(_lab(a), _lab(b)) >= 20, (a, b)


def test_sweep_chart_runs_left_to_right_by_size(tmp_path):
    data = sweep_data()
    data = dataclasses.replace(data, points=tuple(data.points[i] for i in (2, 0, 1)))  # out of order: 64, 16, 32
    part = _section(_dom(tmp_path, render_html(measured_report(), sweep=data)), "sweep")
    first = part[part.index("<svg"):part.index("</svg>")]
    labels = re.findall(r'text-anchor="middle" fill="#666">([^<]+)<title>', first)
    assert labels == ["1×16×16×3", "1×32×32×3", "1×64×64×3"], labels
    for points in re.findall(r'<polyline points="([^"]+)"', first):
        xs = [float(p.split(",")[0]) for p in points.split()]
        ys = [float(p.split(",")[1]) for p in points.split()]
        assert xs == sorted(xs) and ys == sorted(ys, reverse=True)  # rising to the right, no zigzag
    rows = re.findall(r'<tr><td class="mono">([^<]+)</td>', part)
    assert rows == labels  # the table follows the same order


def test_partial_totals_and_skipped_latency_show_in_the_browser(tmp_path):
    """Issue 12: the page of a partial report says so at the top, and a skipped latency says why."""
    import dataclasses

    import tflite_flops
    from render_helpers import SAMPLES

    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite", batch=3)
    from tflite_flops.report import LatencyStats

    report = dataclasses.replace(report, latency=LatencyStats(
        skipped="the litert runtime failed in invoke(): Node number 7 (TRANSPOSE_CONV) failed to invoke.",
        runtime="litert"))
    dom = _dom(tmp_path, render_html(report), selftest=True)
    assert _body_attrs(dom).get("data-selftest") == "pass"
    notes = _section(dom, "notes")
    assert 'id="partial-totals"' in notes and "5 op(s) with unresolved shapes" in notes
    assert 'id="latency-skipped"' in notes and "Node number 7 (TRANSPOSE_CONV) failed to invoke." in notes
    assert dom.index('id="notes"') < dom.index('id="summary"')  # right under the cards, above everything else
    c = compare_reports(tflite_flops.analyze(SAMPLES / "cnn_float.tflite"), report)
    page = _dom(tmp_path, render_compare_html(c), name="compare.html")
    assert "<b>B:</b> partial totals: 5 op(s)" in page and "<b>B:</b> latency skipped:" in page
