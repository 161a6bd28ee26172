"""End-to-end latency with the real LiteRT interpreter (small runs; no timing assertions)."""

from __future__ import annotations

import json
from pathlib import Path

import cli_process
import pytest

ROOT = Path(__file__).resolve().parent.parent
CNN = str(ROOT / "sample_models" / "cnn_float.tflite")
KEYS = {"runtime", "runtime_version", "threads", "xnnpack", "runs", "init_ms", "first_ms", "mean_ms", "std_ms",
        "min_ms", "median_ms", "p90_ms", "p99_ms", "max_ms", "cv"}


def run(*args):
    return cli_process.run(args, cwd=ROOT, timeout=300)


@pytest.mark.runtime
@pytest.mark.slow
def test_analyze_latency_json():
    r = run("analyze", CNN, "--latency", "--runs", "20", "--warmup", "2", "-f", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    lat, tp = d["latency"], d["throughput"]
    assert KEYS <= set(lat)
    assert lat["runtime"] == "litert" and lat["runs"] == 20 and lat["threads"] == 1 and lat["xnnpack"] is True
    assert lat["min_ms"] <= lat["median_ms"] <= lat["p90_ms"] <= lat["p99_ms"] <= lat["max_ms"]
    assert tp["inferences_per_s"] == pytest.approx(1e3 / lat["median_ms"])
    assert tp["flops_per_s"] == pytest.approx(d["totals"]["flops"] / (lat["median_ms"] / 1e3))
    assert tp["macs_per_s"] == pytest.approx(d["totals"]["macs"] / (lat["median_ms"] / 1e3))
    # the resident memory the run added (Linux: /proc/self/statm), next to the XNNPACK prediction
    assert all(isinstance(lat[k], int) for k in ("rss_load_bytes", "rss_first_invoke_bytes", "rss_peak_bytes"))
    assert lat["rss_peak_bytes"] >= max(lat["rss_load_bytes"], lat["rss_first_invoke_bytes"])
    table = run("analyze", CNN, "--latency", "--runs", "5", "--warmup", "1")
    assert "RSS added: load " in table.stdout and "(LiteRT, XNNPACK on)" in table.stdout, table.stdout


@pytest.mark.runtime
@pytest.mark.slow
def test_no_xnnpack_and_shapes_follow_input(tmp_path):
    fcn = str(ROOT / "sample_models" / "fcn_dynamic.tflite")
    r = run("analyze", fcn, "--input-shape", "2x48x40x3", "--latency", "--no-xnnpack", "--runs", "5", "-f", "json")
    assert r.returncode == 0, r.stderr
    lat = json.loads(r.stdout)["latency"]
    assert lat["xnnpack"] is False and lat["input_shapes"] == [[2, 48, 40, 3]]


@pytest.mark.runtime
@pytest.mark.slow
def test_per_op_latency_sums_and_explains():
    r = run("analyze", CNN, "--per-op", "--runs", "5", "--warmup", "1", "-f", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    timed = [o for o in d["ops"] if o["latency_ms"] is not None]
    assert len(timed) == len(d["ops"]) == 12  # every op of this model can be isolated
    assert d["latency"]["per_op_sum_ms"] == pytest.approx(sum(o["latency_ms"] for o in timed))
    assert "XNNPACK" in d["latency"]["per_op_note"]
    table = run("analyze", CNN, "--per-op", "--runs", "3", "--warmup", "1").stdout
    assert "Per-op latency" in table and "least efficient" in table


@pytest.mark.runtime
@pytest.mark.slow
def test_inputs_npz(tmp_path):
    import numpy as np

    path = tmp_path / "in.npz"
    np.savez(path, image=np.zeros((1, 32, 32, 3), np.float32))
    r = run("analyze", CNN, "--latency", "--runs", "3", "--inputs", str(path), "-f", "json")
    assert r.returncode == 0, r.stderr
    bad = tmp_path / "bad.npz"
    np.savez(bad, other=np.zeros((1,), np.float32))
    r = run("analyze", CNN, "--latency", "--runs", "3", "--inputs", str(bad), "-f", "json")
    assert json.loads(r.stdout)["latency"]["skipped"].count("no array for input") == 1


def test_missing_runtime_still_prints_the_static_report():
    try:
        import tflite_runtime  # noqa: F401
        pytest.skip("tflite_runtime is installed here")
    except ImportError:
        pass
    r = run("analyze", CNN, "--latency", "--runtime", "tflite_runtime", "-f", "json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["totals"]["macs"] == 397_392
    assert "pip install" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.runtime
@pytest.mark.slow
def test_sweep_latency_per_point():
    fcn = str(ROOT / "sample_models" / "fcn_dynamic.tflite")
    r = run("sweep", fcn, "--input-shape", "1x32x32x3", "--input-shape", "1x64x64x3", "--latency", "--runs", "5",
            "--warmup", "1", "-f", "json")
    assert r.returncode == 0, r.stderr
    points = json.loads(r.stdout)["points"]
    assert [p["latency"]["input_shapes"] for p in points] == [[[1, 32, 32, 3]], [[1, 64, 64, 3]]]
    for p in points:
        assert KEYS <= set(p["latency"])
        assert p["throughput"]["flops_per_s"] == pytest.approx(p["totals"]["flops"] / (p["latency"]["median_ms"] / 1e3))
    table = run("sweep", fcn, "--batch", "1,2", "--input-shape", "1x32x32x3", "--latency", "--runs", "3").stdout
    assert "median ms" in table and "FLOP/s" in table


@pytest.mark.runtime
@pytest.mark.slow
def test_model_the_runtime_cannot_load_keeps_its_static_report(tmp_path):
    """The first op of the float CNN becomes an unregistered custom op: LiteRT refuses the model."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as fb

    data = (ROOT / "sample_models" / "cnn_float.tflite").read_bytes()
    model = fb.ModelT.InitFromObj(fb.Model.GetRootAs(data, 0))
    code = fb.OperatorCodeT()
    code.builtinCode, code.deprecatedBuiltinCode, code.customCode, code.version = 32, 32, "NoSuchOp", 1
    model.operatorCodes.append(code)
    model.subgraphs[0].operators[0].opcodeIndex = len(model.operatorCodes) - 1
    model.subgraphs[0].operators[0].builtinOptionsType = 0
    model.subgraphs[0].operators[0].builtinOptions = None
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    path = tmp_path / "custom.tflite"
    path.write_bytes(bytes(builder.Output()))

    r = run("analyze", str(path), "--latency", "--runs", "3", "-f", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["unsupported"] == {"CUSTOM:NoSuchOp": 1}
    assert d["totals"]["macs"] == 397_392 - 110_592  # everything but the replaced stem conv
    # named as a missing kernel, not as a shape problem
    assert "unresolved custom op 'NoSuchOp'" in d["latency"]["skipped"] and "Traceback" not in r.stderr
    assert "shapes" not in d["latency"]["skipped"]
    assert "latency skipped" in r.stderr
