"""Per-op columns are declared once (``report/columns.py``) and every output draws its per-op columns from them.

Two holds: every declared column shows in every output its declaration names, and a column declared
here (with its pass) shows in each output end to end, which no renderer could do if it kept a
per-op column list of its own.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from render_helpers import SAMPLES, predicted_report

import tflite_flops
from tflite_flops.analysis.figures import PASSES, per_op_pass
from tflite_flops.render import render
from tflite_flops.render.batch import rows_csv, rows_json
from tflite_flops.render.compare import render_comparison
from tflite_flops.render.formats.model_explorer import node_data
from tflite_flops.render.sweep import render_sweep
from tflite_flops.report import Report
from tflite_flops.report.columns import (ALWAYS, DELEGATE_FIELDS, OP_COLUMNS, OUTPUTS, Column, DelegateFields,
                                         declare, declare_delegate, explorer_metrics, reason, taken, undeclare,
                                         undeclare_delegate)
from tflite_flops.report.compare import compare_reports
from tflite_flops.studies.sweep import PointSpec, SweepResult, point_of
from tflite_flops.units import human


def _top_header(text: str, title: str) -> str:
    """The header line of the table under the line that starts with ``title``."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith(title))
    return next(line for line in lines[at + 1:] if line.strip())


def shown(output: str, report: Report, c: Column) -> bool:
    """Whether ``output`` of ``report`` shows the per-op column ``c`` (its per-model total for batch / sweep)."""
    if output == "json":
        return c.name in report.to_dict()["ops"][0]
    if output == "csv":
        return c.name in next(csv.reader(io.StringIO(render(report, "csv"))))
    if output == "table":
        return f" {c.label} " in f" {_top_header(render(report, 'table'), 'Top ')} "
    if output == "md":
        return f"| {c.label} |" in _top_header(render(report, "md"), "**Top ")
    if output == "html":
        return f'data-key="{c.sort_key}">{c.label}</th>' in render(report, "html").split('id="ops-table"')[1]
    if output == "model-explorer":
        return any(node_data(report, c.explorer[0]).values())
    if output == "compare":
        data = compare_reports(report, report).to_dict()
        return c.name in data["ops"][0]["a"] and (c.total is None or c.total_name in data["totals"])
    if output == "batch":
        from tflite_flops.studies.batch import columns

        return c.total is None or c.total_name in columns([])
    if output == "sweep":
        point = point_of(PointSpec(), report)
        header = next(csv.reader(io.StringIO(render_sweep(SweepResult("m", (point,), None), "csv"))))
        return c.total is None or (c.total_name in header and c.total_name in point.totals.to_dict())
    raise AssertionError(output)


@pytest.fixture(scope="module")
def full():
    """A report where every condition holds: measured per-op latency, a prediction, an op that runs twice (a loop)."""
    import dataclasses

    r = predicted_report()
    top = r.top_ops(1)[0]
    return dataclasses.replace(r, ops=tuple(dataclasses.replace(o, executions=2) if o is top else o for o in r.ops))


@pytest.mark.parametrize("output", OUTPUTS)
def test_every_declared_column_shows_where_it_says(full, output):
    for c in OP_COLUMNS:
        if output in c.outputs:
            assert shown(output, full, c), f"per-op column {c.name!r} is declared for {output} but not shown there"


def test_columns_are_declared_once_and_for_known_outputs():
    names = [c.name for c in OP_COLUMNS]
    assert len(names) == len(set(names))
    assert all(set(c.outputs) <= set(OUTPUTS) for c in OP_COLUMNS)
    assert all(c.explorer is not None for c in OP_COLUMNS if "model-explorer" in c.outputs)
    with pytest.raises(ValueError, match="declared twice"):
        declare(Column("macs", "MACs", "count", {}))


def test_a_delegate_is_one_declaration():
    """Each delegate's three per-op fields and its columns come from its declaration, not from strings."""
    from tflite_flops.analysis.placement import placement_figures

    for d in DELEGATE_FIELDS.values():
        assert {d.taken, d.reason, d.partition} <= {c.name for c in OP_COLUMNS}
        assert d.taken in explorer_metrics()
        per_op, _ = placement_figures({}, [], d.key)
        assert list(per_op) == [d.taken, d.reason, d.partition]


def test_a_third_delegate_is_one_declaration():
    """A delegate declared once: its per-op figures live in the records' figures, and the CSV, Model
    Explorer, the placement helpers and the batch row's columns have it."""
    import dataclasses

    from tflite_flops.studies.batch import columns

    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    declare_delegate(DelegateFields("npu", "on the NPU (1) or kept off (0)", "npu", "npu_reason", "npu_partition"))
    try:
        ops = tuple(dataclasses.replace(o, figures={"npu": o.index % 2 == 0,
                                                    "npu_reason": None if o.index % 2 == 0 else "op type: no kernel",
                                                    "npu_partition": 0 if o.index % 2 == 0 else None})
                    for o in report.ops)
        placed = dataclasses.replace(report, ops=ops)
        header = next(csv.reader(io.StringIO(render(placed, "csv"))))
        assert header[header.index("gpu_partition") + 1:header.index("formula")] == ["npu", "npu_reason",
                                                                                     "npu_partition"]
        assert taken(ops[0], "npu") is True and reason(ops[1], "npu") == "op type: no kernel"
        overlay = node_data(placed, "npu")
        assert {r["value"] for g in overlay.values() for r in g["results"].values()} == {0, 1}
        assert "npu_kept_ops" in columns([])
        assert Report.from_json(placed.to_json()) == placed
    finally:
        undeclare_delegate("npu")
    assert "npu" not in DELEGATE_FIELDS and "npu" not in {c.name for c in OP_COLUMNS}


@pytest.fixture
def dummy():
    """A per-op figure added the way a contributor adds one: a column declaration and a pass."""
    column = declare(Column("dummy_elements", "dummy", "count", {o: ALWAYS for o in OUTPUTS}, text=human,
                            explorer=("dummy_elements", "dummy elements"), total="sum"))

    @per_op_pass("dummy_elements")
    def seven(entry, model):
        return 7

    yield column
    undeclare("dummy_elements")
    PASSES[:] = [p for p in PASSES if p.column != "dummy_elements"]


def test_a_new_column_and_its_pass_show_in_every_output(dummy):
    path = SAMPLES / "cnn_float.tflite"
    report = tflite_flops.analyze(path)
    inference = [o for o in report.ops if o.phase == "inference"]
    assert all(o.dummy_elements == 7 for o in report.ops)  # a figure without a field reads as an attribute
    assert all(o.figures["dummy_elements"] == 7 for o in report.ops)
    for output in OUTPUTS:
        assert shown(output, report, dummy), f"the new column is missing from {output}"
    assert all(op["dummy_elements"] == 7 for op in report.to_dict()["ops"])
    assert Report.from_json(report.to_json()) == report  # the JSON form keeps it
    assert {r["value"] for g in node_data(report, "dummy_elements").values() for r in g["results"].values()} == {7}
    data = compare_reports(report, report).to_dict()
    assert data["totals"]["dummy_elements"]["a"] == 7 * len(inference)
    assert "dummy_elements" in render_comparison(compare_reports(report, report), "csv")

    from tflite_flops.studies.batch import BatchOptions, analyze_one

    row = analyze_one(str(path), BatchOptions())
    assert row["dummy_elements"] == 7 * len(inference)
    assert "dummy_elements" in rows_csv([row]).splitlines()[0]
    assert json.loads(rows_json([row]))["models"][0]["dummy_elements"] == 7 * len(inference)


def test_a_pass_that_raises_leaves_the_figure_unknown_and_says_so():
    column = declare(Column("broken_figure", "broken", "count", {"json": ALWAYS, "csv": ALWAYS}))

    @per_op_pass("broken_figure")
    def broken(entry, model):
        raise ZeroDivisionError("a bug in the pass")

    try:
        report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    finally:
        undeclare(column.name)
        PASSES[:] = [p for p in PASSES if p.column != "broken_figure"]
    assert all(o.broken_figure is None for o in report.ops)  # unknown, not 0
    assert all(o.note.endswith("broken_figure not computed: ZeroDivisionError: a bug in the pass") for o in report.ops)
    assert sum("broken_figure not computed: ZeroDivisionError: a bug in the pass" in w
               for w in report.warnings) == len(report.ops)
    assert report.totals.macs and report.memory is not None  # the rest of the analysis is there
