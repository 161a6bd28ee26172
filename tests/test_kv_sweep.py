"""KV-length sweep of the decode step (tflite_flops/studies/kv_sweep.py) on sample_models/tiny_decoder_kv.tflite:
the tiny decoder (D = 64, 4 heads, 2 layers, FFN 128, vocab 256) with int8 weights (dynamic range),
decode signatures compiled at KV lengths 32, 64 and 128, and a ``decode`` whose cache length is a
dynamic dim ([1, -1, 4, 16])."""

from __future__ import annotations

import json
from pathlib import Path

import cli_process
import pytest

from tflite_flops.errors import InputSpecError
from tflite_flops.studies.kv_sweep import kv_sweep, parse_lengths
from tflite_flops.render.sweep import render_sweep

ROOT = Path(__file__).resolve().parent.parent
KV_MODEL = ROOT / "sample_models" / "tiny_decoder_kv.tflite"
DECODER = ROOT / "sample_models" / "tiny_decoder.tflite"


def decode_macs(s: int) -> int:
    # One token: projections, FFN and logits 2·(64·192 + 64·64 + 64·128 + 128·64) + 64·256 = 81,920
    # (see tests/test_generative.py), plus attention over the S cache slots: scores and weighted sum
    # 2·S·64 per layer, 2 layers -> 256·S.
    return 81_920 + 256 * s


@pytest.mark.slow
def test_one_signature_per_length():
    result = kv_sweep(KV_MODEL, [32, 64, 128])
    # 81,920 + 256·32 = 90,112; + 256·64 = 98,304; + 256·128 = 114,688
    assert [p.totals.macs for p in result.points] == [decode_macs(s) for s in (32, 64, 128)] == [
        90_112, 98_304, 114_688]
    law = result.fit.laws["macs"]
    assert law.formula == "MACs = 256·S + 81,920" and law.exact and law.verified
    assert result.fit.laws["params"].formula == "params = 98,306 (constant)"  # the weights do not depend on S
    assert "S=32: decode_kv32, S=64: decode_kv64, S=128: decode_kv128" in result.fit.notes[0]
    assert "256 MACs per cache slot per step" in result.fit.notes[1]
    # int8 weights with float activations: the projections run as hybrid kernels
    assert result.points[0].totals.flops_by_precision["hybrid"] > 0


@pytest.mark.slow
def test_dynamic_cache_dim():
    result = kv_sweep(KV_MODEL, [32, 256, 1024])  # 256 and 1024 have no signature of their own
    assert [p.totals.macs for p in result.points] == [decode_macs(s) for s in (32, 256, 1024)]
    assert result.points[2].input_shapes["kv_cache_k_0"] == (1, 1024, 4, 16)
    assert result.fit.laws["macs"].formula == "MACs = 256·S + 81,920"
    assert "dynamic cache dim of signature 'decode'" in result.fit.notes[0]
    # the dynamic graph and the one compiled for 32 slots do the same arithmetic at S = 32
    assert result.points[0].totals.macs == kv_sweep(KV_MODEL, [32, 64]).points[0].totals.macs
    assert all(p.shapes_resolved for p in result.points)


def test_model_without_a_kv_length_is_refused():
    with pytest.raises(InputSpecError, match="KV lengths 64 \\(decode\\) and no decode signature with a dynamic"):
        kv_sweep(DECODER, [32, 64])
    with pytest.raises(InputSpecError, match="positive"):
        parse_lengths("0,64")


def test_cli_json_and_errors():
    run = cli_process.run(["sweep", str(KV_MODEL), "--kv-length", "32,64,128", "-f", "json"], cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert [p["totals"]["macs"] for p in data["points"]] == [90_112, 98_304, 114_688]
    assert data["fit"]["laws"]["macs"]["terms"] == [{"monomial": "S", "powers": [1], "coefficient": 256},
                                                    {"monomial": "1", "powers": [0], "coefficient": 81_920}]
    bad = cli_process.run(["sweep", str(KV_MODEL), "--kv-length", "64", "--batch", "2"], cwd=ROOT, timeout=300)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --kv-length makes its own points")


@pytest.mark.runtime
def test_decode_tokens_per_second_per_length():
    from tflite_flops.measure.bench import BenchSettings
    from tflite_flops.studies.kv_sweep import decode_measurer
    from tflite_flops.measure.runtime import RuntimeSettings

    ticks = iter(range(0, 10**12, 2_000_000))  # every clock read 2 ms after the previous one
    measure = decode_measurer(str(KV_MODEL), RuntimeSettings(), BenchSettings(runs=3, warmup=1),
                              clock=lambda: next(ticks))
    result = kv_sweep(KV_MODEL, [32, 1024], measure=measure)  # a signature point and a dynamic-dim point
    for p in result.points:
        # each call spans one 2 ms step: 1 token / 2 ms = 500 tokens/s
        assert p.latency.median_ms == 2.0 and p.throughput.tokens_per_s == 500.0
    assert "tokens/s" in render_sweep(result) and "500.0" in render_sweep(result)


def test_given_arrays_replace_the_generated_inputs_of_a_signature_call():
    import numpy as np

    from tflite_flops.measure.tokens import signature_inputs

    details = {"tokens": {"dtype": np.int32, "shape": [1, 1]}, "input_pos": {"dtype": np.int32, "shape": [1]},
               "kv_cache_k_0": {"dtype": np.float32, "shape": [1, 32, 4, 16]}}
    feed = signature_inputs(details, {"kv_cache_k_0": (1, 64, 4, 16)}, given={"tokens": np.array([[7]])})
    assert feed["tokens"].tolist() == [[7]] and feed["tokens"].dtype == np.int32  # given, cast to the input's dtype
    assert feed["kv_cache_k_0"].shape == (1, 64, 4, 16)  # generated at the point's length
    with pytest.raises(InputSpecError, match="'token' is no input of this signature"):
        signature_inputs(details, given={"token": np.array([[7]])})
    with pytest.raises(InputSpecError, match=r"'tokens' has shape \[1, 2\], this call needs \[1, 1\]"):
        signature_inputs(details, given={"tokens": np.array([[7, 8]])})


def test_sweep_kv_length_passes_inputs_to_every_timed_point(monkeypatch, tmp_path):
    """``sweep --kv-length --inputs`` times each point with the user's arrays (issue 42: they were dropped)."""
    import numpy as np

    from tflite_flops.cli import main
    from tflite_flops.studies import kv_sweep as kv

    arrays = tmp_path / "in.npz"
    np.savez(arrays, tokens=np.array([[5]], np.int32))
    seen = []

    def measurer(model, runtime, bench, clock=None, inputs=None):
        seen.append({k: v.tolist() for k, v in inputs.items()})
        return lambda point, key: (None, None)

    monkeypatch.setattr(kv, "decode_measurer", measurer)
    assert main(["sweep", str(KV_MODEL), "--kv-length", "32", "--inputs", str(arrays), "-f", "json"]) == 0
    assert seen == [{"tokens": [[5]]}]
