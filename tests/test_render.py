"""Renderers: every format in RENDERERS, escaping of hostile names, HTML sections, Model Explorer overlay."""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import json
import re

import cli_process
import pytest

from render_helpers import (HOSTILE, HOSTILE_ALT, SAMPLES, hostile_report, measured_report, predicted_report,
                            sample_report, sweep_data)
from tflite_flops.errors import OutputFormatError
from tflite_flops.report import LatencyStats, Report
from tflite_flops.render import RENDERERS, format_for_path, format_names, render
from tflite_flops.render.formats.html import render_html, render_sweep_html
from tflite_flops.render.page import script_json
from tflite_flops.render.formats.markdown import render_markdown
from tflite_flops.render.formats.model_explorer import node_data, render_model_explorer
from tflite_flops.render.memory import rss_line
from tflite_flops.studies.sweep import SweepResult, sweep
from tflite_flops.units import grouped, human_bytes

REPORTS = {"static": sample_report, "measured": measured_report, "hostile": hostile_report,
           "predicted": predicted_report}


@pytest.fixture(scope="module", params=list(REPORTS))
def report(request):
    return REPORTS[request.param]()


@pytest.mark.parametrize("fmt", list(RENDERERS))
def test_every_format_renders_deterministic_text(report, fmt):
    text = render(report, fmt)
    assert isinstance(text, str) and text.strip() and text.endswith("\n")
    assert render(report, fmt) == text


@pytest.mark.parametrize("fmt", list(RENDERERS))
def test_every_format_is_well_formed(report, fmt):
    text = render(report, fmt)
    if fmt == "json":
        data = json.loads(text)  # checked against the report itself, not against another serialisation
        assert data["schema_version"] == report.schema_version
        assert data["totals"]["macs"] == report.totals.macs and data["totals"]["flops"] == report.totals.flops
        assert [(o["subgraph"], o["index"], o["op_type"]) for o in data["ops"]] == \
            [(o.subgraph, o.index, o.op_type) for o in report.ops]
        assert Report.from_dict(data) == report
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        assert len(rows) == len(report.ops) + 1
    elif fmt == "model-explorer":
        data = json.loads(text)
        assert data and all("results" in g for g in data.values())
    elif fmt == "html":
        assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
        assert text.count('data-op="') == len(report.ops)  # one table row per op
    elif fmt == "md":
        assert "| MACs |" in text and grouped(report.totals.macs) in text
    elif fmt == "table":
        assert "Totals per inference" in text


@pytest.mark.parametrize("fmt", [f for f in RENDERERS if f != "model-explorer"])
def test_every_format_shows_the_prediction_against_the_measurement(fmt):
    r = predicted_report()
    text = render(r, fmt)
    p, conv = r.prediction, r.ops[0]  # op 0:0, CONV_2D: predicted 2 + 0.001·110,592 = 112.592 µs, measured made up
    if fmt == "json":
        d = json.loads(text)
        assert d["prediction"]["latency_ms"] == p.latency_ms and d["ops"][0]["predicted_ms"] == conv.predicted_ms
        return
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert float(rows[0]["predicted_ms"]) == conv.predicted_ms and rows[8]["predicted_ms"] == "0.0"  # RELU fused
        return
    error = 100 * (p.latency_ms - r.latency.median_ms) / r.latency.median_ms
    assert f"predicted {p.latency_ms:.3f} ms" in text and f"{error:+.1f}%" in text  # whole model against measured
    op_error = 100 * (conv.predicted_ms - conv.latency_ms) / conv.latency_ms
    assert f"{conv.predicted_ms:.4f}" in text and f"{op_error:+.1f}%" in text  # per op against measured
    assert "hand-written test CPU" in text


def test_reports_without_a_prediction_show_none():
    r = measured_report()
    for fmt in ("table", "csv", "md", "html", "json"):
        text = render(r, fmt)
        assert "predicted_ms" not in text and "predicted latency" not in text.lower() and "predicted ms" not in text


@pytest.mark.parametrize("fmt", list(RENDERERS))
def test_each_extension_selects_its_format(fmt):
    for ext in RENDERERS[fmt][1]:
        assert format_for_path(f"out/report{ext}") == fmt
        assert format_for_path(f"REPORT{ext.upper()}") == fmt


def test_model_explorer_extension_wins_over_json():
    assert format_for_path("model.me.json") == "model-explorer"
    assert format_for_path("model.json") == "json"
    assert set(format_names()) >= {"table", "json", "csv", "md", "html", "model-explorer"}
    with pytest.raises(OutputFormatError):
        format_for_path("report.pdf")


def test_cli_writes_every_format_by_extension(tmp_path):
    model = SAMPLES / "cnn_int8.tflite"
    outs = {fmt: tmp_path / f"r{RENDERERS[fmt][1][0]}" for fmt in RENDERERS}
    args = ["analyze", str(model), "-f", "json"]
    for path in outs.values():
        args += ["-o", str(path)]
    proc = cli_process.run(args, timeout=120)
    assert proc.returncode == 0, proc.stderr
    from tflite_flops.report import Report

    report = Report.from_json(proc.stdout)  # stdout stays clean JSON: the same run's report
    assert report.totals.macs > 0
    for fmt, path in outs.items():
        text = path.read_text(encoding="utf-8")
        assert text.strip(), fmt
        if fmt != "table":
            assert text == render(report, fmt), fmt
    assert not list(tmp_path.glob(".tflite_flops-*"))  # no temporary files left


# ---- escaping -----------------------------------------------------------------------------------


def test_html_escapes_hostile_names():
    text = render_html(hostile_report())
    assert "<script>alert" not in text and "<img" not in text and "<!--" not in text
    assert html.escape(HOSTILE) in text
    assert text.count("<script") == 2 and text.count("</script") == 2  # our data block and our JS only
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    assert m and "<" not in m.group(1) and ">" not in m.group(1) and "&" not in m.group(1)
    data = json.loads(m.group(1))  # the embedded JSON round-trips the hostile strings exactly
    assert data["model"]["description"] == HOSTILE
    assert data["ops"][0]["name"] == f"{HOSTILE}0{HOSTILE_ALT}"


def test_script_json_escapes_markup_and_line_separators():
    text = script_json({"a": "</script><b>&\u2028"})
    assert not set("<>&") & set(text) and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><b>&\u2028"}


def test_markdown_escapes_hostile_names():
    text = render_markdown(hostile_report())
    assert "<script>" not in text and "<img" not in text
    assert "&lt;script&gt;" in text
    r = sample_report()
    pipe = dataclasses.replace(r, ops=tuple(dataclasses.replace(o, name="a|b") for o in r.ops))
    lines = render_markdown(pipe).splitlines()
    row = next(line for line in lines if "a\\|b" in line)
    header = next(line for line in lines if line.startswith("| op | type | output"))
    assert row.count(" | ") == header.count(" | ") == 8  # the name did not add a column (9 columns, runs on last)


def test_model_explorer_keeps_hostile_names_as_data():
    data = json.loads(render_model_explorer(hostile_report()))
    (graph,) = data.values()
    assert all(k.startswith(HOSTILE) for k in graph["results"])


# ---- HTML contents ------------------------------------------------------------------------------


def test_html_is_self_contained():
    text = render_html(measured_report(), sweep=sweep_data())
    lower = text.lower()
    for needle in ("<link", " src=", "url(", "@import", "<iframe", "<object", "<embed"):
        assert needle not in lower, needle
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {"http://www.w3.org/2000/svg"}


def test_html_sections_follow_the_data():
    static = render_html(sample_report())
    for sec in ("summary", "precision", "charts", "memory", "ops"):
        assert f'id="{sec}"' in static
    for sec in ("latency", "sweep", "roofline"):
        assert f'id="{sec}"' not in static
    assert static.count("<svg") == 3  # cost by op type, per-op FLOPs, live bytes along the execution order
    rich = render_html(measured_report(), sweep=sweep_data())
    for sec in ("latency", "sweep", "roofline"):
        assert f'id="{sec}"' in rich
    assert "Per-op latency versus FLOPs" in rich and "Achieved GFLOP/s" in rich
    assert rich.count("<svg") == 3 + 1 + 3 + 1  # + latency scatter, 3 sweep charts, roofline
    skipped = dataclasses.replace(sample_report(), latency=LatencyStats(skipped="model needs Flex ops",
                                                                                     runtime="litert"))
    assert "model needs Flex ops" in render_html(skipped)


def test_rss_line_reads_the_run_s_configuration():
    report = sample_report()
    memory = report.memory
    on = LatencyStats(runtime="litert", xnnpack=True, rss_load_bytes=3 << 20, rss_first_invoke_bytes=4 << 20)
    line = rss_line(on, memory)
    assert line.startswith("RSS added: load 3.0 MiB, first invoke 4.0 MiB; predicted ")
    assert f"{human_bytes(memory.runtime_xnnpack.total_bytes)} (LiteRT, XNNPACK on)" in line
    off = rss_line(dataclasses.replace(on, xnnpack=False), memory)
    assert f"{human_bytes(memory.runtime.total_bytes)} (LiteRT, XNNPACK off)" in off
    assert rss_line(LatencyStats(runtime="litert"), memory) is None  # a run without RSS: no line
    assert LatencyStats.from_dict(on.to_dict()) == on  # JSON round trip


def test_sweep_page_alone():
    text = render_sweep_html(sweep_data())
    assert 'id="sweep"' in text and "1×64×64×3" in text and text.count("<svg") == 3
    assert "no points" in render_sweep_html(SweepResult("m.tflite", (), None))


# ---- Model Explorer overlay ---------------------------------------------------------------------


def test_model_explorer_overlay_structure():
    r = sample_report("lstm.tflite")
    data = node_data(r)
    # one graph per subgraph, named as in the file, one node per op (zero-cost ops too), valued by its FLOPs
    assert {g: len(d["results"]) for g, d in data.items()} == {
        "main": 5, "lstm_1/lstm1_1/while_cond": 3, "lstm_1/lstm1_1/while_body": 26,
        "lstm_1/lstm2_1/while_cond": 3, "lstm_1/lstm2_1/while_body": 19}
    assert {k: v["value"] for k, v in data["main"]["results"].items()} == {
        "lstm_1/lstm1_1/transpose;1": 0, "lstm_1/lstm1_1/while": 0, "lstm_1/lstm2_1/while": 0,
        "lstm_1/lstm2_1/strided_slice_23": 0, "StatefulPartitionedCall_1:0": 96}
    body = data["lstm_1/lstm1_1/while_body"]["results"]
    assert body["lstm_1/lstm1_1/while/lstm_cell_1/MatMul_11"]["value"] == 16384  # a FULLY_CONNECTED
    assert body["lstm_1/lstm1_1/while/lstm_cell_1/Tanh"]["value"] == 8192
    for graph in data.values():
        assert graph["gradient"][0]["stop"] == 0 and graph["gradient"][-1]["stop"] == 1
        assert all(isinstance(v["value"], int) for v in graph["results"].values())


def test_model_explorer_metrics_and_styles():
    r = measured_report()
    lat = node_data(r, "latency_ms")["main"]["results"]
    assert {k: v["value"] for k, v in lat.items()} == {o.name: o.latency_ms for o in r.ops if o.latency_ms}
    th = node_data(r, "macs", style="thresholds")["main"]["thresholds"]
    assert [t["value"] for t in th] == sorted(t["value"] for t in th) and len({t["value"] for t in th}) == len(th)
    with pytest.raises(OutputFormatError):
        node_data(sample_report(), "latency_ms")
    with pytest.raises(OutputFormatError):
        node_data(r, "watts")
    unsupported = dataclasses.replace(r, ops=(dataclasses.replace(r.ops[0], status="unsupported"),) + r.ops[1:])
    assert r.ops[0].name not in node_data(unsupported)["main"]["results"]  # unknown is not shown as 0


def test_model_explorer_file_loads_in_the_packages_dataclasses():
    nd = pytest.importorskip("model_explorer.node_data_builder", reason="ai-edge-model-explorer is not installed")
    ours = json.loads(render_model_explorer(sample_report("lstm.tflite")))
    graphs = {gid: nd.GraphNodeData(**{**g, "results": {k: nd.NodeDataResult(**v) for k, v in g["results"].items()},
                                       "gradient": [nd.GradientItem(**x) for x in g["gradient"]]})
              for gid, g in ours.items()}
    written = json.loads(nd.ModelNodeData(graphsData=graphs).to_json_string())
    assert set(written) == set(ours)
    for gid, g in ours.items():  # the package writes our fields unchanged (plus its own defaults)
        assert {k: written[gid][k] for k in g} == g
    dacite = pytest.importorskip("dacite", reason="dacite (a dependency of ai-edge-model-explorer) is not installed")
    strict = dacite.from_dict(nd.ModelNodeData, {"graphsData": ours}, config=dacite.Config(strict=True))
    assert json.loads(strict.to_json_string()) == written
    th = json.loads(render_model_explorer(sample_report(), style="thresholds"))
    for g in th.values():
        nd.GraphNodeData(**{**g, "results": {k: nd.NodeDataResult(**v) for k, v in g["results"].items()},
                            "thresholds": [nd.ThresholdItem(**x) for x in g["thresholds"]]})


@pytest.mark.parametrize("name", ["cnn_int8.tflite", "lstm.tflite", "transformer_block.tflite"])
def test_model_explorer_keys_match_the_adapters_graph(name):
    adapter = pytest.importorskip("ai_edge_model_explorer_adapter",
                                  reason="Model Explorer's TFLite adapter is not installed")
    graphs = json.loads(adapter.ConvertFlatbufferDirectlyToJson(adapter.VisualizeConfig(), str(SAMPLES / name)))
    tensor_names: dict[str, set[str]] = {}
    for collection in graphs:
        for g in collection["subgraphs"]:
            names = tensor_names.setdefault(g["id"], set())
            for node in g["nodes"]:
                for out in node.get("outputsMetadata") or []:
                    names.update(a["value"] for a in out["attrs"] if a["key"] == "tensor_name")
    ours = node_data(sample_report(name))
    assert set(ours) <= set(tensor_names)
    for gid, g in ours.items():
        missing = set(g["results"]) - tensor_names[gid]
        assert not missing, f"{gid}: keys not found in Model Explorer's graph: {sorted(missing)[:5]}"


def test_hostile_tensor_name_in_a_real_model(tmp_path):
    # Patch a 25-byte slice of a tensor name in the flatbuffer with the 25-byte hostile name:
    # string lengths and offsets stay the same, so the file stays valid.
    data = (SAMPLES / "cnn_float.tflite").read_bytes()
    old = b"cnn_1/stem_1/Relu;cnn_1/stem_1/convolution"
    assert len(HOSTILE) == 25 and data.count(old) == 1
    model = tmp_path / "hostile.tflite"
    model.write_bytes(data.replace(old, HOSTILE.encode() + old[25:]))
    out = tmp_path / "hostile.html"
    proc = cli_process.run(["analyze", str(model), "-o", str(out), "-f", "md"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    assert html.escape(HOSTILE) in page and "<script>alert" not in page
    assert page.count("<script") == 2
    assert "<script>" not in proc.stdout and "&lt;script&gt;alert(1)&lt;/script&gt;" in proc.stdout


def test_sweep_section_reads_the_sweep_commands_output():
    result = sweep(SAMPLES / "fcn_dynamic.tflite", ["1x32x32x3", "1x64x64x3", "1x96x96x3"])
    text = render_sweep_html(result)
    for shape in ("1×32×32×3", "1×64×64×3", "1×96×96×3"):
        assert shape in text
    assert "Scaling laws" in text and text.count("<svg") == 1  # FLOPs/MACs only: nothing was timed
    page = render_html(sample_report("fcn_dynamic.tflite"), sweep=result)
    assert 'id="sweep"' in page


def test_every_command_takes_its_extensions_from_the_one_formats_table():
    from tflite_flops.render.batch import BATCH_FORMATS, batch_format_for_path
    from tflite_flops.render.compare import COMPARE_RENDERERS, compare_format_for_path
    from tflite_flops.render.formats import FORMATS
    from tflite_flops.render.catalog import CATALOG_RENDERERS, catalog_format_for_path
    from tflite_flops.render.sweep import SWEEP_RENDERERS, sweep_format_for_path

    for table in (RENDERERS, COMPARE_RENDERERS, BATCH_FORMATS, SWEEP_RENDERERS, CATALOG_RENDERERS):
        assert {name: exts for name, (_, exts) in table.items()} == {name: FORMATS[name] for name in table}
    # and each command's --format choices are its table's formats, nothing hand-written
    import argparse

    from tflite_flops.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    expected = {"analyze": RENDERERS, "import-profile": RENDERERS, "compare": COMPARE_RENDERERS,
                "batch": BATCH_FORMATS, "sweep": SWEEP_RENDERERS, "ops": CATALOG_RENDERERS}
    for command, table in expected.items():
        fmt = next(a for a in commands[command]._actions if "--format" in a.option_strings)
        assert list(fmt.choices) == list(table), command
        out = next(a for a in commands[command]._actions if "--output" in a.option_strings)
        assert all(ext in out.help for _, exts in table.values() for ext in exts), command
    assert format_for_path("r.markdown") == compare_format_for_path("c.markdown") == batch_format_for_path("b.markdown")
    assert catalog_format_for_path("o.markdown") == "md" and sweep_format_for_path("s.htm") == "html"


def test_css_and_js_ship_as_package_data():
    from importlib import resources

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from tflite_flops.render import page as html_mod

    static = resources.files("tflite_flops.render") / "static"
    assert html_mod.CSS == (static / "report.css").read_text(encoding="utf-8") and "{" in html_mod.CSS
    assert html_mod.JS == (static / "report.js").read_text(encoding="utf-8") and "function" in html_mod.JS
    page = render_html(sample_report())
    assert f"<style>{html_mod.CSS}</style>" in page and f"<script>{html_mod.JS}</script>" in page
    with open(SAMPLES.parent / "pyproject.toml", "rb") as f:
        package_data = tomllib.load(f)["tool"]["setuptools"]["package-data"]["tflite_flops.render"]
    assert "static/*.css" in package_data and "static/*.js" in package_data


def test_a_format_is_one_module_in_render_formats():
    # Every module of render/formats/ registers one report format, found at import: nothing else
    # lists them, so --format, -o and render() offer exactly what the modules register.
    import pkgutil

    import tflite_flops.render.formats as pkg

    modules = {info.name for info in pkgutil.iter_modules(pkg.__path__)}
    owners = {fn.__module__.rsplit(".", 1)[-1] for fn in pkg.REPORT_RENDERERS.values()}
    assert owners == modules and len(pkg.REPORT_RENDERERS) == len(modules)
    assert list(RENDERERS) == format_names() == list(pkg.FORMATS) == list(pkg.REPORT_RENDERERS)
    assert format_names()[0] == "table"  # the default comes first in --format's choices
    with pytest.raises(ValueError, match="registered twice"):
        pkg.register_format("json", (".json5",), order=99)
    with pytest.raises(ValueError, match="extension"):
        pkg.register_format("json-lines", (".json",), order=99)  # .json already selects json
    assert "json-lines" not in pkg.FORMATS


def test_partitions_per_subgraph_fold_for_many_subgraphs():
    # an LLM bundle's subgraphs made a 1,700-character line: the first eight, then the rest as one count
    from tflite_flops.render.placement import _per_subgraph

    assert _per_subgraph({"0": 3, "1": 0}) == "subgraph 0: 3, subgraph 1: 0"
    line = _per_subgraph({str(i): 2 for i in range(40)})
    assert line.startswith("subgraph 0: 2, subgraph 1: 2,") and line.endswith("subgraph 7: 2 … and 32 more subgraphs: 64")


def test_the_markdown_memory_table_keeps_its_indent_and_says_every_reason_it_leaves_out():
    """Markdown dropped the memory rows' indent and showed 3 of 5 GPU reasons without a word (issue 45)."""
    from tflite_flops.render import render

    md = render(sample_report("fcn_dynamic.tflite"), "md")
    assert "| &nbsp;&nbsp;LiteRT arena (XNNPACK on) |" in md and "| &nbsp;&nbsp;&nbsp;&nbsp;workspace |" in md
    from pathlib import Path

    from tflite_flops import analyze

    md = render(analyze(str(Path(__file__).resolve().parent.parent / "sample_models" / "fcn_dynamic.tflite"),
                        gpu_delegate="classic"), "md")
    gpu = next(line for line in md.splitlines() if line.startswith("| The classic GPU delegate (TfLiteGpuDelegateV2) |"))
    assert "2 more reason(s) (" in gpu and "see the JSON or the HTML page" in gpu  # 5 reasons, 3 listed


def test_a_long_html_op_table_opens_on_its_top_ops():
    """Issue 45: a 150-op model's per-op table is marked to open on its top 20 ops (by FLOPs without a time) with a
    button for all; a 12-op model's is not (tests/test_html_browser.py checks it in Chromium)."""
    long, short = render_html(sample_report("tiny_decoder.tflite")), render_html(sample_report("cnn_float.tflite"))
    assert 'id="ops-table" class="sortable-table" data-rank-key="flops" data-limit=20>' in long
    assert '>show all 150 ops</button>' in long
    assert 'data-rank-key="flops"><thead>' in short and ">show all" not in short
