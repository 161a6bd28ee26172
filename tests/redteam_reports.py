"""Red-team cases of saved JSON reports (issue 44, kind ``reports``): ``Report.from_json`` and ``compare A.json
B.json`` on a real saved report of the sample CNN with one field corrupted, on JSON that is not standard (NaN,
Infinity, 1e400), nested too deep, too large or not UTF-8, and on odd reports that must load and render (counts
past a float, a newer version's keys, hostile strings).

A corrupted report is refused with one line that names the field (``ops[3].macs``); an odd but valid one renders
everywhere: ``repr``, the notebook view, ``to_json``, and compare's table, JSON, CSV, Markdown and HTML. The
quick lane's direct tests of the same loader are in tests/test_hostile_reports.py.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from redteam import CNN, Case, cli, huge_dims_model, write

KIND = "reports"


@lru_cache(maxsize=None)
def saved() -> str:
    """The JSON text of the sample CNN's report (made once, when a case first runs)."""
    import tflite_flops

    return tflite_flops.analyze(CNN).to_json()


@lru_cache(maxsize=None)
def saved_huge() -> str:
    """The JSON text of a legitimate report whose counts no float holds (an ADD over 40 dims of 2**31-1)."""
    import tflite_flops
    from tflite_flops.reader.load import load_model

    return tflite_flops.analyze(load_model(huge_dims_model())).to_json()


def corrupted(path: tuple, literal: str, base: Callable[[], str] = saved) -> str:
    """The saved report with the JSON text ``literal`` at ``path`` (a key that is not there is added)."""
    d = json.loads(base())
    parent = d
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = "__X__"
    return json.dumps(d, indent=1).replace('"__X__"', literal)


def dotted(path: tuple) -> str:
    """How the error names the field: ``ops[3].macs``."""
    return "".join(f"[{p}]" if type(p) is int else f".{p}" for p in path).lstrip(".")


def slug(path: tuple) -> str:
    """A case's name for the field: ``ops.3.macs``."""
    return ".".join(map(str, path))


def lib(name: str, run: Callable[[Path], Callable[[], Any]], raises: type | None, needle: str | None = None,
        **kw: Any) -> Case:
    """A library case of this surface's kind."""
    return Case(name, KIND, run, frozenset(), needle, raises=raises, mode="library", **kw)


def _errors() -> Any:
    from tflite_flops import errors

    return errors


E = _errors()


def loads(text_of: Callable[[], str]) -> Callable[[Path], Callable[[], Any]]:
    """``Report.from_json(text)``, then every view of the report: repr, the notebook's HTML, to_json."""
    def make(tmp: Path) -> Callable[[], Any]:
        from tflite_flops import Report

        text = text_of()

        def call() -> None:
            report = Report.from_json(text)
            repr(report)
            report._repr_html_()
            Report.from_json(report.to_json())
        return call
    return make


def compares(text_of: Callable[[], str]) -> Callable[[Path], Callable[[], Any]]:
    """The report loaded, compared with the sample CNN's both ways, and the comparison in every format."""
    def make(tmp: Path) -> Callable[[], Any]:
        from tflite_flops import Report
        from tflite_flops.render.compare import render_compare_table, render_comparison
        from tflite_flops.report.compare import compare_reports

        text, base = text_of(), Report.from_json(saved())

        def call() -> None:
            report = Report.from_json(text)
            for c in (compare_reports(base, report), compare_reports(report, base)):
                render_compare_table(c)
                for fmt in ("json", "csv", "md", "html"):
                    out = render_comparison(c, fmt)
                    assert fmt != "json" or ("NaN" not in out and "Infinity" not in out), "NaN in compare's JSON"
        return call
    return make


def compare_files(a: Callable[[], str], b: Callable[[], str], *options: str) -> Callable[[Path], list]:
    """``compare A.json B.json OPTIONS`` on the two texts."""
    return lambda t: ["compare", write(t, "a.json", a().encode()), write(t, "b.json", b().encode()), *options]


def stdout_clean(proc: Any, tmp: Path) -> None:
    """Nothing on stdout a terminal would run (an escape sequence, a bidirectional override), and JSON on stdout
    is standard JSON (no NaN or infinity)."""
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    if proc.stdout.startswith("{"):
        json.loads(proc.stdout, parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(name)))


# ---- the corruptions: (field, JSON text put there) ----------------------------------------------------------

INTEGER = {"string": '"12"', "nan": "NaN", "infinity": "Infinity", "negative": "-1", "1e400": "1e400",
           "float": "1.5", "list": "[]", "object": "{}", "true": "true"}
NUMBER = {"string": '"0.5"', "nan": "NaN", "minus-infinity": "-Infinity", "negative": "-0.5", "1e400": "1e400",
          "list": "[0.5]", "huge-int": "1" + "0" * 400}
TEXT = {"int": "7", "list": '["x"]', "object": '{"x": 1}', "null-where-required": "null"}
INTEGER_FIELDS = [("ops", 3, "macs"), ("ops", 3, "flops"), ("ops", 3, "params"), ("ops", 3, "bytes_read"),
                  ("ops", 3, "executions"), ("ops", 3, "index"), ("ops", 3, "live_bytes"),
                  ("ops", 3, "xnnpack_partition"), ("totals", "macs"), ("totals", "flops"), ("totals", "params"),
                  ("totals", "by_precision", "float32", "flops"), ("init_totals", "param_bytes"),
                  ("by_op_type", "CONV_2D", "count"), ("by_op_type", "CONV_2D", "macs"), ("model", "size_bytes"),
                  ("model", "operators"), ("inputs", 0, "index"), ("memory", "arena_bytes"),
                  ("memory", "peak_live_bytes"), ("memory", "runtime", "total_bytes"),
                  ("memory", "runtime_xnnpack", "delegate_bytes"), ("memory", "subgraphs", 0, "buffers"),
                  ("delegation", "xnnpack", "partitions"), ("delegation", "gpu", "kept_ops"),
                  ("settings", "entry_subgraph"), ("settings", "while_trips")]
NUMBER_FIELDS = [("ops", 3, "latency_ms"), ("ops", 3, "weight_density"), ("ops", 3, "predicted_ms")]
TEXT_FIELDS = [("ops", 3, "op_type"), ("ops", 3, "name"), ("ops", 3, "formula"), ("ops", 3, "precision"),
               ("model", "sha256"), ("model", "description"), ("inputs", 0, "name"), ("inputs", 0, "dtype")]
OTHER = [  # (field, JSON text, what the message says)
    (("ops", 3, "status"), '"fine"', "ops[3].status: expected one of"),
    (("ops", 3, "phase"), '"later"', "ops[3].phase: expected one of"),
    (("ops", 3, "inputs"), '"1x8x8x16"', "ops[3].inputs: expected a list"),
    (("ops", 3, "inputs", 0), '[1, 8.5, 8]', "ops[3].inputs[0][1]: expected an integer"),
    (("ops", 3, "outputs", 0), '[1, "8"]', "ops[3].outputs[0][1]: expected an integer"),
    (("ops", 3, "shapes_resolved"), "1", "ops[3].shapes_resolved: expected true or false"),
    (("ops", 3, "xnnpack"), '"yes"', "ops[3].xnnpack: expected true or false or null"),
    (("ops", 3, "future_figure"), '{"a": 1}', "ops[3].future_figure: expected a string, a finite number"),
    (("ops", 3), "[]", "ops[3]: expected an object"),
    (("ops",), "{}", "ops: expected a list"),
    (("inputs", 0, "shape"), '"1x32x32x3"', "inputs[0].shape: expected a list"),
    (("totals",), "[]", "totals: expected an object"),
    (("totals", "by_precision"), '{"float32": 5}', "totals.by_precision.float32: expected an object"),
    (("totals", "complete"), '"yes"', "totals.complete: expected true or false"),
    (("totals", "by_precision", "float32"), '{"macs": 1, "ops": 1}', "by_precision.float32: expected the key 'flops'"),
    (("totals", "flops"), "10", "ops[0].flops: expected at most totals.flops (10)"),
    (("memory",), "[1]", "memory: expected an object, got a list"),
    (("memory", "subgraphs"), "{}", "memory.subgraphs: expected a list"),
    (("memory", "peak_op"), "3", "memory.peak_op: expected a string or null"),
    (("delegation", "xnnpack"), "[]", "delegation.xnnpack: expected an object"),
    (("delegation", "npu"), '{"delegated_ops": 1, "kept_ops": 0, "partitions": 1}', "delegation.npu: expected no such key"),
    (("delegation", "xnnpack", "kept_by_reason"), '{"dtype": -2}', "delegation.xnnpack.kept_by_reason.dtype"),
    (("unsupported",), '{"FOO": "many"}', "unsupported.FOO: expected an integer >= 0"),
    (("warnings",), '"one"', "warnings: expected a list"),
    (("warnings",), "[3]", "warnings[0]: expected a string"),
    (("settings",), "[]", "settings: expected an object"),
    (("settings", "input_shapes"), '{"image": "1x32x32x3"}', "settings.input_shapes.image: expected a list"),
    (("settings", "batch"), "0", "settings.batch: expected an integer >= 1 or null"),
    (("settings", "count_zeros"), '"no"', "settings.count_zeros: expected true or false or null"),
    (("latency",), '{"median_ms": NaN}', "NaN"),
    (("latency",), '{"median_ms": -3.0}', "latency.median_ms: expected a finite number >= 0"),
    (("latency",), '{"runs": 2.5}', "latency.runs: expected an integer >= 0"),
    (("roofline",), '{"peak_flops_per_s": -1.0, "peak_bytes_per_s": 1.0, "ridge_intensity": 1.0}',
     "roofline.peak_flops_per_s: expected a finite number >= 0"),
    (("throughput",), '{"flops_per_s": "fast"}', "throughput.flops_per_s: expected a finite number"),
    (("prediction",), '{"latency_ms": 1.0, "low_ms": 1.0, "high_ms": 1.0, "profile": 3}',
     "prediction.profile: expected an object"),
    (("signatures",), '{"s": {"key": "s", "subgraph": -1}}', "signatures.s.subgraph: expected an integer >= 0"),
    (("advice",), '[{"kind": "static_shape", "ops": [1], "saving_ms": null, "saving_source": null, "text": "t"}]',
     "advice[0].ops[0]: expected a string"),
    (("notes",), '[null]', "notes[0]: expected a string"),
    (("schema_version",), "2", "unsupported schema_version 2"),
    (("schema_version",), '"1"', "unsupported schema_version '1'"),
    (("settings", "deep"), "[" * 40 + "]" * 40, "expected at most 16 levels of nesting"),
    (("future_section",), "{}", "future_section: expected no such key"),
]


def _rejected() -> list[Case]:
    cases = []
    for table, fields in ((INTEGER, INTEGER_FIELDS), (NUMBER, NUMBER_FIELDS), (TEXT, TEXT_FIELDS)):
        for path in fields:
            for kind, literal in table.items():
                needle = ("NaN and infinities" if literal in ("NaN", "Infinity", "-Infinity") else
                          "past a float's range" if literal == "1e400" else dotted(path))
                cases.append(lib(f"report-{slug(path)}-{kind}", loads(lambda p=path, v=literal: corrupted(p, v)),
                                 E.ReportFormatError, needle))
    for i, (path, literal, needle) in enumerate(OTHER):
        cases.append(lib(f"report-{slug(path)}-odd-{i}", loads(lambda p=path, v=literal: corrupted(p, v)),
                         E.ReportFormatError, needle))
    return cases


def _bundle_text() -> str:
    import tflite_flops
    from redteam import SAMPLES

    d = json.loads(tflite_flops.analyze(SAMPLES / "tiny_decoder.litertlm").to_json())
    d["bundle"]["section"] = 99
    return json.dumps(d)


def _hostile() -> str:
    """The saved report with escape sequences, markup and a bidirectional override in every string it shows."""
    d = json.loads(saved())
    odd = "\x1b[2J\x1b]0;owned\x07\r\nerror: fake\u202e<script>alert(1)</script>|`*_"
    d["model"]["path"] = f"models/{odd}.tflite"
    d["model"]["description"] = odd
    for op in d["ops"]:
        op["name"], op["note"] = odd, odd
    d["inputs"][0]["name"] = odd
    d["warnings"], d["notes"] = [odd], [odd]
    return json.dumps(d)


CASES: list[Case] = [
    *_rejected(),
    lib("report-bundle-section-99", loads(_bundle_text), E.ReportFormatError, "bundle.section"),
    lib("report-from-json-nested-100k", loads(lambda: '{"settings": ' + "[" * 100_000), E.ReportFormatError,
        "not a tflite_flops JSON report"),
    lib("report-from-json-bytes-not-utf8", loads(lambda: b'{"schema_version": 1, "x": "\xff"}'), E.ReportFormatError,
        "not a tflite_flops JSON report"),
    # odd but valid: loaded, and rendered everywhere
    lib("report-shape-dim-minus-1", loads(lambda: corrupted(("ops", 3, "inputs", 0, 0), "-1")), None),
    lib("report-shape-dim-minus-1-compare", compares(lambda: corrupted(("ops", 3, "inputs", 0, 0), "-1")), None),
    lib("report-latency-fraction", compares(lambda: corrupted(("ops", 3, "latency_ms"), "0.25")), None),
    lib("report-future-op-figure", compares(lambda: corrupted(("ops", 3, "future_figure"), '"x"')), None),
    lib("report-future-setting", compares(lambda: corrupted(("settings", "future"), '{"a": [1, {"b": null}]}')), None),
    lib("report-hostile-strings", compares(_hostile), None),
    lib("report-counts-past-a-float", loads(saved_huge), None),
    lib("report-arena-4000-digits", compares(lambda: corrupted(("memory", "arena_bytes"), "9" * 4000)), None),
    lib("report-lone-surrogates", compares(lambda: corrupted(("ops", 3, "name"), '"\\udcff\\ud800x"')), None),
    lib("report-counts-past-a-float-compare", compares(saved_huge), None),
    # the CLI: compare A.json B.json
    *[cli(f"compare-report-ops-3-macs-{kind}", KIND, compare_files(saved, lambda v=literal: corrupted(
        ("ops", 3, "macs"), v)), {1}, "NaN and infinities" if "N" in literal or "I" in literal else
        "past a float's range" if literal == "1e400" else "b.json: not a tflite_flops JSON report: ops[3].macs")
      for kind, literal in INTEGER.items()],
    cli("compare-report-status-unknown", KIND, compare_files(lambda: corrupted(("ops", 0, "status"), '"fine"'), saved),
        {1}, "a.json: not a tflite_flops JSON report: ops[0].status: expected one of"),
    cli("compare-report-settings-shapes-string", KIND,
        compare_files(saved, lambda: corrupted(("settings", "input_shapes"), '"1x32x32x3"')), {1},
        "settings.input_shapes: expected an object"),
    cli("compare-report-latency-nan", KIND,
        compare_files(saved, lambda: corrupted(("latency",), '{"median_ms": NaN}')), {1}, "NaN"),
    cli("compare-report-nested-100k", KIND, compare_files(saved, lambda: "[" * 100_000), {1}, "nested too deeply"),
    cli("compare-report-settings-deep", KIND,
        compare_files(saved, lambda: corrupted(("settings", "x"), '{"a": ' * 200 + "1" + "}" * 200)), {1},
        "at most 16 levels"),
    cli("compare-report-not-utf8", KIND,
        lambda t: ["compare", write(t, "a.json", b'{"schema_version": 1, "\xff": 1}'), CNN], {1}, "not UTF-8"),
    cli("compare-report-sparse-2gib", KIND,
        lambda t: ["compare", CNN, (write(t, "big.json", b"") and _grow(t / "big.json", 2 << 30))], {1},
        "larger than 1024 MiB"),
    cli("compare-report-empty", KIND, lambda t: ["compare", write(t, "a.json", b""), CNN], {1},
        "not a tflite_flops JSON report"),
    cli("compare-report-bundle-section", KIND, compare_files(_bundle_text, saved), {1}, "bundle.section"),
    cli("compare-report-hostile-strings", KIND, compare_files(_hostile, saved), {0}, check=stdout_clean),
    cli("compare-report-lone-surrogates", KIND, lambda t: [*compare_files(
        lambda: corrupted(("model", "path"), '"m\\udcff.tflite"'), saved)(t), "-o", str(t / "c.html"),
        "-o", str(t / "c.md")], {0}, check=stdout_clean),
    cli("compare-report-hostile-strings-md", KIND, compare_files(_hostile, saved, "-f", "md"), {0},
        check=stdout_clean),
    *[cli(f"compare-report-counts-past-a-float-{fmt}", KIND, compare_files(saved, saved_huge, "-f", fmt), {0},
          check=stdout_clean) for fmt in ("table", "json", "csv", "md", "html")],
    cli("compare-report-counts-past-a-float-reversed", KIND, compare_files(saved_huge, saved), {0}, check=stdout_clean),
]


def _grow(path: Path, size: int) -> str:
    """``path`` made ``size`` bytes long with a hole (no disk used); its name."""
    with open(path, "r+b") as f:
        f.truncate(size)
    return str(path)
