"""The library does what the CLI does: ``tflite_flops.analyze(..., latency=, per_op=, roofline=)`` returns the
Report that ``python -m tflite_flops analyze --latency --per-op --roofline`` prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops.errors import InputSpecError, RuntimeMissingError
from tflite_flops.measure.bench import BenchSettings
from tflite_flops.reader.load import load_model

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "sample_models" / "cnn_float.tflite"
DECODER = ROOT / "sample_models" / "tiny_decoder.tflite"
VOLATILE = {"latency", "throughput", "roofline"}  # measured: differ at every run
PER_OP_VOLATILE = {"latency_ms"}


def _static(d: dict) -> dict:
    """A report's JSON without what a measurement run changes, and with the path as the CLI writes it."""
    out = {k: v for k, v in d.items() if k not in VOLATILE and k != "warnings"}
    out["ops"] = [{k: v for k, v in o.items() if k not in PER_OP_VOLATILE} for o in d["ops"]]
    out["model"] = {k: v for k, v in d["model"].items() if k != "path"}
    return out


@pytest.mark.runtime
@pytest.mark.slow
def test_library_measures_what_the_cli_measures():
    lib = tflite_flops.analyze(CNN, latency=True, per_op=True, roofline=True, bench=BenchSettings(runs=3, warmup=1))
    cli = subprocess.run([sys.executable, "-m", "tflite_flops", "analyze", str(CNN), "--latency", "--per-op",
                          "--roofline", "--runs", "3", "--warmup", "1", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert cli.returncode == 0, cli.stderr
    theirs, ours = json.loads(cli.stdout), lib.to_dict()
    assert _static(ours) == _static(theirs)
    for d in (ours, theirs):  # every measurement present, in the same shape
        assert d["latency"]["runs"] == 3 and d["latency"]["median_ms"] > 0
        assert d["throughput"]["flops_per_s"] > 0
        assert len(d["roofline"]["ops"]) == sum(1 for o in d["ops"] if o["flops"] and o["phase"] == "inference")
        assert all(o["latency_ms"] is not None for o in d["ops"])
    assert set(ours["latency"]) == set(theirs["latency"])
    assert set(ours["roofline"]) == set(theirs["roofline"])
    # the derived figures renderers read come from the records
    timed = [o for o in lib.ops if o.flops]
    assert timed and all(o.achieved_flops_per_s == pytest.approx(o.flops / (o.latency_ms / 1e3)) for o in timed)


@pytest.mark.runtime
@pytest.mark.slow
def test_library_times_every_signature_like_the_cli():
    report = tflite_flops.analyze(DECODER, all_signatures=True, latency=True, runtime="litert",
                                  bench=BenchSettings(runs=2, warmup=1))
    assert report.signatures and all(s.latency is not None and s.latency.median_ms > 0
                                      for s in report.signatures.values())
    assert any(s.tokens is not None and s.tokens.tokens_per_s for s in report.signatures.values())


def test_a_missing_runtime_keeps_the_static_report(monkeypatch):
    """No runtime installed: the error carries the static report, which the CLI prints before its error line."""
    from tflite_flops.measure import pipeline

    def missing(*args, **kwargs):
        raise RuntimeMissingError("the litert runtime is not installed")

    monkeypatch.setattr(pipeline, "add_latency", missing)
    with pytest.raises(RuntimeMissingError) as info:
        tflite_flops.analyze(CNN, latency=True)
    assert info.value.report is not None and info.value.report.totals.macs == 397_392


def test_a_parsed_model_without_a_file_cannot_be_timed():
    model = load_model(CNN.read_bytes())
    with pytest.raises(InputSpecError, match="needs its file"):
        tflite_flops.analyze(model, latency=True)
    assert tflite_flops.analyze(model).totals.macs == 397_392  # static analysis needs no file


def test_sweep_module_and_function_are_apart():
    """``tflite_flops.sweep`` is the function; the module is ``tflite_flops.studies.sweep``."""
    import importlib

    module = importlib.import_module("tflite_flops.studies.sweep")
    assert callable(tflite_flops.sweep) and tflite_flops.sweep is module.sweep
    assert module.__name__ == "tflite_flops.studies.sweep"
