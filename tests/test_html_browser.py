"""The HTML report in a real headless browser: it renders, its charts are there, and sorting works.

Skipped when no Chromium is installed (Debian: ``apt-get install chromium``). The page runs a
small self-test when opened with ``#selftest``: it clicks the FLOPs header, records the first
row and the sort order in ``data-selftest-*`` attributes of ``<body>``, filters the table, and
sets ``data-selftest="pass"``. ``--dump-dom`` returns the DOM after the scripts ran.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from render_helpers import hostile_report, measured_report, sample_report, sweep_data
from tflite_flops.compare import compare_reports, render_compare_html
from tflite_flops.render.html import render_html

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
    assert int(attrs["data-selftest-charts"]) == 2


def test_measured_report_with_sweep_renders_all_charts(tmp_path):
    attrs = _selftest(tmp_path, render_html(measured_report(), sweep=sweep_data()))
    assert attrs.get("data-selftest") == "pass", attrs
    assert int(attrs["data-selftest-charts"]) == 7


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
