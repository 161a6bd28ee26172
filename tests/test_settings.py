"""One settings object, passed whole: every command gives analyze's figures at the same settings.

``analyze``, ``batch``, ``sweep`` (one point; and ``--kv-length``), ``compare`` (a model with itself) run at
``--threads 2``, with and without ``--predict``, and their LiteRT memory figures (builtin kernels and with
XNNPACK), MACs and predicted time must be analyze's. On cnn_float the thread count changes both memory figures (kernel
temporaries, XNNPACK's threadpool), which the test checks first: a command that drops ``--threads`` fails.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
from pathlib import Path

import pytest

import cli_process
import tflite_flops
from tflite_flops.report.headline import runtime_total
from profile_helpers import installed_version
from tflite_flops.analysis import analyze_model
from tflite_flops.latency.profile import DeviceProfile, Law, Machine
from tflite_flops.errors import InputSpecError
from tflite_flops.settings import CORTEX_M, DelegateConfig, RuntimeSettings, Settings, Target
from tflite_flops.studies.batch import BatchOptions, analyze_one
from tflite_flops.studies.sweep import PointSpec, sweep

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "sample_models" / "cnn_float.tflite"
KV_MODEL = ROOT / "sample_models" / "tiny_decoder_kv.tflite"  # a decode signature per KV length
FIGURES = ("macs", "runtime", "memory", "predicted")


def _profile(threads: int) -> DeviceProfile:
    """A profile made at ``threads`` threads: 1 ns per MAC, 10 µs per invoke, 3 µs per partition."""
    laws = tuple(Law("*", "float32", place, {"macs": 0.001}, log_low=math.log(0.9), log_high=math.log(1.25), points=10)
                 for place in ("xnnpack", "builtin"))
    machine = Machine("test cpu", 2, "ai_edge_litert", installed_version(), threads, True)
    return DeviceProfile(machine, laws, invoke_overhead_us=10.0, partition_overhead_us=3.0,
                         created="2026-11-27T00:00:00+00:00", source="calibrate")


def _cli(*args: str) -> dict:
    r = cli_process.run([*args, "-f", "json"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _analyze(extra: tuple[str, ...], *where: str) -> dict:
    r = _cli("analyze", *(where or (str(MODEL), "--batch", "1")), *extra)
    m = r["memory"]
    return {"macs": r["totals"]["macs"], "runtime": m["runtime"]["total_bytes"], "memory": m["runtime_total_bytes"],
            "predicted": r["prediction"]["latency_ms"] if r.get("prediction") else None}


def _batch(extra: tuple[str, ...]) -> dict:
    row = _cli("batch", str(MODEL), "--batch", "1", "-j", "1", *extra)["models"][0]
    return {"macs": row["macs"], "runtime": row["builtin_total_bytes"], "memory": row["runtime_total_bytes"],
            "predicted": row.get("predicted_ms")}


def _sweep(extra: tuple[str, ...], *points: str) -> dict:
    point = _cli("sweep", *(points or (str(MODEL), "--batch", "1")), *extra)["points"][0]
    t = point["totals"]
    return {"macs": t["macs"], "runtime": t["builtin_total_bytes"], "memory": t["runtime_total_bytes"],
            "predicted": point["prediction"]["latency_ms"] if point.get("prediction") else None}


def _compare(extra: tuple[str, ...]) -> dict:
    t = _cli("compare", str(MODEL), str(MODEL), "--batch", "1", *extra)["totals"]
    out = {}
    for figure, key in (("macs", "macs"), ("runtime", "memory.runtime.total_bytes"),
                        ("memory", "memory.runtime_total_bytes"), ("predicted", "prediction.latency_ms")):
        delta = t.get(key)
        assert delta is None or delta["a"] == delta["b"], (key, delta)
        out[figure] = None if delta is None else delta["a"]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("predict", [False, True], ids=["static", "predict"])
def test_every_command_gives_analyzes_figures_at_two_threads(tmp_path, predict):
    profile = tmp_path / "profile.json"
    _profile(2).save(str(profile))
    extra = ("--threads", "2") + (("--predict", str(profile)) if predict else ())
    want = _analyze(extra)
    one = _analyze(("--threads", "1") + (("--predict", str(profile), "--force") if predict else ()))
    # the thread count changes both LiteRT figures here: a command that dropped --threads would differ
    assert one["runtime"] != want["runtime"] and one["memory"] != want["memory"]
    assert (want["predicted"] is not None) == predict
    for name, figures in (("batch", _batch(extra)), ("sweep", _sweep(extra)), ("compare", _compare(extra))):
        assert figures == want, name
    # sweep --kv-length: the decode step at 32 cache slots is the signature decode_kv32 of this model
    kv = _analyze(extra, str(KV_MODEL), "--signature", "decode_kv32")
    assert kv["memory"] != _analyze((), str(KV_MODEL), "--signature", "decode_kv32")["memory"]
    assert _sweep(extra, str(KV_MODEL), "--kv-length", "32") == kv


def test_the_library_gives_the_same_figures_from_settings_and_keywords():
    """analyze(threads=2) and analyze(settings=...) build the same settings; the studies read them whole."""
    settings = Settings(batch=1, runtime=RuntimeSettings(threads=2), predict=_profile(2))
    a = tflite_flops.analyze(MODEL, batch=1, threads=2, predict=_profile(2))
    b = tflite_flops.analyze(MODEL, settings=dataclasses.replace(settings, predict=None), predict=_profile(2))
    c = analyze_model(MODEL, settings)
    for r in (b, c):
        assert r.memory.runtime.total_bytes == a.memory.runtime.total_bytes
        assert r.memory.runtime_xnnpack.total_bytes == a.memory.runtime_xnnpack.total_bytes
        assert r.prediction.latency_ms == a.prediction.latency_ms
    row = analyze_one(str(MODEL), BatchOptions(settings))
    point = sweep(MODEL, [PointSpec({}, 1)], settings=settings, fit=False).points[0]
    assert row["builtin_total_bytes"] == point.totals.builtin_total_bytes == a.memory.runtime.total_bytes
    assert row["runtime_total_bytes"] == point.totals.runtime_total_bytes == runtime_total(a.memory).total_bytes
    assert row["predicted_ms"] == point.prediction.latency_ms == a.prediction.latency_ms
    assert a.memory.runtime_xnnpack.total_bytes != tflite_flops.analyze(MODEL, batch=1).memory.runtime_xnnpack.total_bytes


def test_settings_are_frozen_whole_and_picklable():
    s = Settings(input_shapes=["1x8x8x3"], runtime=RuntimeSettings(threads=3))
    assert s.input_shapes == ("1x8x8x3",)  # a list is kept as a tuple
    assert s.threads == 3 and s.delegate.threads == 3  # the delegates' threads are the runtime's
    assert s.with_threads(2).delegate.threads == 2 and s.target.tflm == CORTEX_M
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.batch = 2  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(s)) == s  # batch hands it to worker processes
    with pytest.raises(InputSpecError, match="not both"):
        tflite_flops.analyze(MODEL, threads=2, settings=s)


def test_the_delegate_flags_reach_the_placement():
    """A DelegateConfig flag set in the settings changes the placement: without the dynamically quantized
    kernels, XNNPACK keeps nothing of the dynamic range model's hybrid ops."""
    model = ROOT / "sample_models" / "cnn_dynamic_range.tflite"
    on = analyze_model(model).delegation["xnnpack"]
    off = analyze_model(model, Settings(delegate=DelegateConfig(dynamically_quantized=False))).delegation["xnnpack"]
    assert off.kept_ops > on.kept_ops


def test_sweep_keeps_the_refusal_force_overrode_in_every_point(tmp_path):
    """``sweep --force``: each point's prediction says what was forced, as ``analyze --force``'s report does."""
    profile = tmp_path / "profile.json"
    _profile(2).save(str(profile))
    points = _cli("sweep", str(MODEL), "--batch", "1,2", "--predict", str(profile), "--force")["points"]
    assert len(points) == 2
    for point in points:
        assert any(w.startswith("prediction forced (--force): device profile made at 2 thread(s)")
                   for w in point["warnings"])
    forced = tflite_flops.analyze(MODEL, predict=_profile(2), force=True).prediction.forced
    result = sweep(MODEL, [PointSpec({}, 1)], settings=Settings(predict=_profile(2), predict_forced=forced), fit=False)
    assert result.points[0].report.prediction.forced == forced


def test_the_target_reaches_the_tflm_arena():
    """``Settings.target.tflm``: the TFLite Micro build the arena is sized for (a 64-bit host's pointers)."""
    from tflite_flops.settings import HOST_64, Target

    mcu = analyze_model(MODEL).memory
    host = analyze_model(MODEL, Settings(target=Target(tflm=HOST_64))).memory
    assert (mcu.tflm_pointer_bytes, host.tflm_pointer_bytes) == (4, 8)
    assert host.tflm_arena_size_bytes > mcu.tflm_arena_size_bytes
    assert host.runtime == mcu.runtime  # LiteRT's figures are not TFLM's

