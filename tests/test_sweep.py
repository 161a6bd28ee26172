"""Sweeps: totals per point, the fitted scaling law (exact rationals, checked on every point),
the three output formats, the measure hook for latency, and the ``sweep`` subcommand.

Expected laws are derived by hand: fcn_dynamic costs 176·H·W MACs (see test_shapes.py for the
per-layer sum); mlp_dynamic_batch costs 64·128 + 128·64 + 64·10 = 17,024 MACs per sample.
"""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import cli_process
import pytest

import tflite_flops
from tflite_flops.report.headline import runtime_total

from tflite_flops.errors import InputSpecError, ShapeError
from tflite_flops.report import LatencyStats, Throughput
from tflite_flops.render.sweep import render_sweep
from tflite_flops.studies.scaling_law import Variable, fit_law
from tflite_flops.studies.sweep import PointSpec, SweepPoint, make_points, parse_batches, sweep

ROOT = Path(__file__).resolve().parent.parent
FCN = str(ROOT / "sample_models" / "fcn_dynamic.tflite")
MLP = str(ROOT / "sample_models" / "mlp_dynamic_batch.tflite")


def var(name, values, labels=None):
    return Variable(name, ((f"x{name}", 1),), tuple(values), tuple(labels or (name,)))


# --------------------------------------------------------------------------------------------
# The fit on its own


def test_fit_recovers_an_exact_law_with_rational_check():
    h, w = [64, 128, 96, 224, 33], [64, 96, 160, 224, 47]
    ys = [1204 * a * b + 35_840 for a, b in zip(h, w)]
    law = fit_law("macs", [var("H", h), var("W", w)], ys)
    assert law.formula == "MACs = 1,204·H·W + 35,840"
    assert law.exact and law.verified and law.max_residual == 0


def test_fit_in_batch_prints_human_units():
    b = [1, 2, 4, 8]
    law = fit_law("macs", [var("B", b)], [300_800_000 * x for x in b])
    assert law.formula == "MACs = 300,800,000·B"
    assert law.formula_human == "MACs = 300.8 M·B"
    assert law.verified


def test_fit_keeps_rational_coefficients_exact():
    # y = (5/2)·H² + 3: 2.5 is a terminating decimal and printed exactly
    h = [2, 4, 6, 10]
    law = fit_law("flops", [var("H", h)], [Fraction(5, 2) * x * x + 3 for x in h])
    assert law.formula == "FLOPs = 2.5·H² + 3" and law.exact
    # y = H/3 + 1 at multiples of 3: 1/3 is kept as a fraction
    h = [3, 6, 9]
    law = fit_law("flops", [var("H", h)], [x // 3 + 1 for x in h])
    assert law.formula == "FLOPs = 1/3·H + 1" and law.exact


def test_fit_reports_residual_when_no_polynomial_fits():
    h = [31, 32, 33, 64, 65, 97]
    ys = [((x + 1) // 2) ** 2 for x in h]  # ceil(H/2)²: not a polynomial at odd sizes
    law = fit_law("macs", [var("H", h)], ys)
    assert not law.exact and not law.verified and law.max_residual > 0
    assert law.formula.startswith("MACs ≈ ")


def test_fit_with_as_many_points_as_coefficients_is_not_verified():
    law = fit_law("macs", [var("H", [64, 128])], [397 * 64 * 64 + 2, 397 * 128 * 128 + 2])
    assert law.exact and not law.verified
    assert law.formula == "MACs = 397·H² + 2"  # the simplest coefficients among the 2-term laws


def test_constant_and_zero_metrics():
    assert fit_law("params", [var("B", [1, 2, 4])], [1596] * 3).formula == "params = 1,596 (constant)"
    assert fit_law("macs", [var("B", [1, 2, 4])], [0, 0, 0]).formula == "MACs = 0"


# --------------------------------------------------------------------------------------------
# Points and the library


def test_make_points_cross_product_and_batches():
    pts = make_points(["image=1x64x64x3", "1x128x128x3"], [1, 2])
    assert [p.label for p in pts] == ["image=1x64x64x3 batch=1", "image=2x64x64x3 batch=2",
                                      "1x128x128x3 batch=1", "2x128x128x3 batch=2"]
    assert make_points(["a=1x64,b=1x32"])[0].input_shapes == {"a": (1, 64), "b": (1, 32)}
    assert parse_batches("1,2, 4,8") == [1, 2, 4, 8]
    with pytest.raises(InputSpecError):
        parse_batches("1,x")
    with pytest.raises(InputSpecError):
        make_points(None, [0])
    with pytest.raises(InputSpecError, match="needs points"):
        make_points(None, None)


def test_sweep_fcn_over_h_and_w():
    shapes = ["1x64x64x3", "1x128x96x3", "image=1x224x224x3", "0=1x32x48x3"]
    result = sweep(FCN, make_points(shapes))
    macs = [p.totals.macs for p in result.points]
    assert macs == [176 * 64 * 64, 176 * 128 * 96, 176 * 224 * 224, 176 * 32 * 48]  # 720,896 ... 270,336
    assert [p.input_shapes["image"] for p in result.points] == [(1, 64, 64, 3), (1, 128, 96, 3),
                                                                (1, 224, 224, 3), (1, 32, 48, 3)]
    fit = result.fit
    assert [v.name for v in fit.variables] == ["H", "W"]
    assert fit.laws["macs"].formula == "MACs = 176·H·W" and fit.laws["macs"].verified
    assert fit.laws["params"].formula == "params = 1,596 (constant)"
    for p in result.points:  # the law reproduces every point
        values = [p.input_shapes["image"][1], p.input_shapes["image"][2]]
        assert fit.laws["flops"].predict(values) == p.totals.flops
        assert sum(p.totals.flops_by_precision.values()) == p.totals.flops


def test_sweep_memory_follows_the_input_as_analyze_does():
    # each point's LiteRT figures (builtin kernels; XNNPACK, its own bytes included) are the report's at
    # that shape, and follow it: fcn_dynamic is fully convolutional, its arenas grow with H·W
    shapes = ["1x32x32x3", "1x64x48x3", "1x96x96x3"]
    result = sweep(FCN, make_points(shapes))
    for spec, p in zip(shapes, result.points):
        memory = tflite_flops.analyze(FCN, input_shapes=spec).memory
        assert p.totals.builtin_total_bytes == memory.runtime.total_bytes
        assert p.totals.runtime_total_bytes == runtime_total(memory).total_bytes  # the memory headline
    runtime = [p.totals.builtin_total_bytes for p in result.points]
    assert runtime == sorted(runtime) and runtime[0] < runtime[-1]
    # builtin kernels: tensors and temporaries alone, 47 bytes per input pixel (exact at every point)
    assert result.fit.laws["builtin_total_bytes"].formula == "LiteRT bytes (builtin kernels) = 47·H·W"
    assert result.fit.laws["runtime_total_bytes"].predict([96, 96]) == result.points[-1].totals.runtime_total_bytes


def test_sweep_square_sizes_merge_h_and_w():
    result = sweep(FCN, make_points(["1x64x64x3", "1x128x128x3", "1x224x224x3"]))
    (v,) = result.fit.variables
    assert v.labels == ("H", "W") and v.values == (64, 128, 224)
    assert result.fit.laws["macs"].formula == "MACs = 176·H·W"
    assert any("H and W are equal" in n for n in result.fit.notes)


@pytest.mark.slow
def test_sweep_batch_and_size_together():
    result = sweep(FCN, make_points(["1x64x64x3", "1x128x96x3", "1x32x48x3"], [1, 2]))
    assert result.fit.laws["macs"].formula == "MACs = 176·B·H·W"
    assert result.fit.laws["macs"].verified


def test_sweep_batch_is_linear_on_a_batch_agnostic_model():
    result = sweep(MLP, make_points(None, [1, 2, 4, 8]))
    assert [p.totals.macs for p in result.points] == [17_024 * b for b in (1, 2, 4, 8)]
    law = result.fit.laws["macs"]
    assert law.formula == "MACs = 17,024·B" and law.verified
    assert result.fit.laws["params"].formula == "params = 17,024 (constant)"


def test_sweep_unresolved_point_is_flagged():
    # no shape at all for the dynamic FCN: placeholders, warned and flagged on the point
    result = sweep(FCN, [PointSpec({}), PointSpec({None: (1, 64, 64, 3)})])
    assert not result.points[0].shapes_resolved and result.points[1].shapes_resolved
    assert any("dynamic dims" in w for w in result.warnings)
    assert any("unresolved" in n for n in result.fit.notes)


def test_sweep_bad_point_names_the_point():
    with pytest.raises(ShapeError, match="point 1x64x64x4"):
        sweep(FCN, make_points(["1x64x64x3", "1x64x64x4"]))


def test_measure_hook_is_called_once_per_point():
    seen = []

    def measure(point: SweepPoint):
        seen.append(point.input_shapes["features"])
        return LatencyStats(median_ms=float(point.input_shapes["features"][0])), Throughput(inferences_per_s=1.0)

    result = sweep(MLP, make_points(None, [1, 3]), measure=measure)
    assert seen == [(1, 64), (3, 64)]
    assert [p.latency for p in result.points] == [LatencyStats(median_ms=1.0), LatencyStats(median_ms=3.0)]
    assert result.to_dict()["points"][1]["throughput"] == {"inferences_per_s": 1.0}


# --------------------------------------------------------------------------------------------
# Formats


@pytest.fixture(scope="module")
def fcn_sweep():
    return sweep(FCN, make_points(["1x64x64x3", "1x128x96x3", "1x224x224x3"]))


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_every_format_renders(fcn_sweep, fmt):
    text = render_sweep(fcn_sweep, fmt)
    assert text.endswith("\n") and "720896" in text.replace(",", "")


def test_json_contract(fcn_sweep):
    data = json.loads(render_sweep(fcn_sweep, "json"))
    assert set(data) >= {"points", "fit"}
    p0 = data["points"][0]
    assert p0["input_shapes"] == {"image": [1, 64, 64, 3]}
    assert p0["latency"] is None and p0["throughput"] is None
    assert {"macs", "flops", "flops_by_precision", "params", "activation_bytes"} <= set(p0["totals"])
    assert isinstance(p0["totals"]["macs"], int)
    law = data["fit"]["laws"]["macs"]
    assert law["formula"] == "MACs = 176·H·W" and law["exact"] and law["verified"]
    assert law["terms"] == [{"monomial": "H·W", "powers": [1, 1], "coefficient": 176}]
    assert data["fit"]["variables"]["H"] == {"dims": [{"input": "image", "axis": 1}], "values": [64, 128, 224]}


def test_csv_one_row_per_point(fcn_sweep):
    rows = list(csv.DictReader(io.StringIO(render_sweep(fcn_sweep, "csv"))))
    assert [int(r["macs"]) for r in rows] == [720_896, 2_162_688, 8_830_976]  # 176·H·W
    assert rows[1]["shape:image"] == "1x128x96x3"


def test_table_states_the_check(fcn_sweep):
    text = render_sweep(fcn_sweep, "table")
    assert "MACs = 176·H·W   [exact on all 3 points]" in text
    assert "scaling law over H, W (H = image[1], W = image[2])" in text


# --------------------------------------------------------------------------------------------
# CLI


def run(*args):
    return cli_process.run(["sweep", *args], cwd=ROOT, timeout=120)


def test_cli_sweep_table_and_files(tmp_path):
    out_json, out_csv = tmp_path / "s.json", tmp_path / "s.csv"
    r = run(FCN, "--input-shape", "1x64x64x3", "--input-shape", "image=1x128x96x3", "--input-shape",
            "0=1x224x224x3", "-o", str(out_json), "-o", str(out_csv))
    assert r.returncode == 0, r.stderr
    assert "MACs = 176·H·W" in r.stdout and r.stderr == ""
    assert json.loads(out_json.read_text())["fit"]["laws"]["macs"]["verified"] is True
    assert len(list(csv.DictReader(io.StringIO(out_csv.read_text())))) == 3


def test_cli_sweep_batch_json():
    r = run(MLP, "--batch", "1,2,4,8", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [p["totals"]["macs"] for p in data["points"]] == [17_024, 34_048, 68_096, 136_192]
    assert data["fit"]["laws"]["macs"]["formula_human"] == "MACs = 17.02 K·B"


@pytest.mark.parametrize("args, code, message", [
    ([], 2, "error: a sweep needs points"),
    (["--batch", "1,x"], 2, "error: argument --batch: cannot read '1,x'"),  # with sweep's usage
    (["--input-shape", "1x64x64x4"], 2, "error: point 1x64x64x4: input 'image': dim 3 is 4"),  # as analyze's
    (["--input-shape", "1x64x64x3", "-o", "x.pdf"], 2, "unknown output extension"),
])
def test_cli_sweep_errors(args, code, message):
    r = run(FCN, *args)
    assert r.returncode == code, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_strict_sweep_refuses_skipped_latency_after_printing(capsys):
    # the rule is completeness.strict_problems, applied to every point with its latency, for
    # input-shape and KV-length sweeps alike
    import argparse

    from tflite_flops.commands.sweep import _finish

    def measure(point):
        if point.spec.label.endswith("64x64x3"):
            return LatencyStats(skipped="the runtime failed in invoke()", runtime="litert"), None
        return LatencyStats(median_ms=1.0, runtime="litert"), Throughput(inferences_per_s=1000.0)

    result = sweep(FCN, make_points(["1x32x32x3", "1x64x64x3"], None), measure)
    args = argparse.Namespace(strict=True, format="json")
    assert _finish(result, args, []) == 1
    out, err = capsys.readouterr()
    assert len(json.loads(out)["points"]) == 2  # printed first
    assert err.strip().splitlines()[-1] == ("error: --strict: point 1x64x64x3: latency skipped: "
                                             "the runtime failed in invoke()")
    assert _finish(result, argparse.Namespace(strict=False, format="json"), []) == 0
