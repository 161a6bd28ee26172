"""The what-if (``analyze --predict P --what-if``) against real conversions: is the predicted int8 model the int8 model?

    python benchmarks/what_if.py --profile P.json            # convert (first run, ~10 min on 2 cores), then compare
    python benchmarks/what_if.py --profile P.json --cache DIR

Each model is a Keras model built with random weights (``weights=None``: nothing is downloaded), converted
with ``tflite_flops.convert.to_tflite`` in a child process that imports TensorFlow, in the four precisions
it offers: ``float``, ``fp16``, ``dynamic_range`` and ``int8`` (full integer, calibrated on random data by
``to_tflite``'s default representative data). The files are cached in ``--cache`` (default: a folder under
the system temp dir) and reused.

For each model and precision, the float model's what-if row of that precision (the float graph re-costed
with the precision's laws and placement rules, nothing converted) is printed beside the converted model's
own prediction, with the same profile: the predicted time of each and their ratio, the ops each has, and the
XNNPACK placement (ops delegated, kept, partitions) and the GPU delegate's (ops delegated, partitions) of
each. The goal (issue 45): the what-if's int8 time within ±15% of the int8 model's own prediction, and the
placement equal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRECISIONS = ("float", "fp16", "dynamic_range", "int8")
MODELS = ("mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "resnet50", "densenet121", "lstm_text",
          "text_cnn", "transformer_encoder")

CONVERT = r'''
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf
from tflite_flops.convert import to_tflite

def build(name):
    keras = tf.keras
    if name == "mobilenet_v2":
        return keras.applications.MobileNetV2(input_shape=(160, 160, 3), weights=None)
    if name == "mobilenet_v3_small":
        return keras.applications.MobileNetV3Small(input_shape=(160, 160, 3), weights=None)
    if name == "efficientnet_b0":
        return keras.applications.EfficientNetB0(input_shape=(160, 160, 3), weights=None)
    if name == "resnet50":
        return keras.applications.ResNet50(input_shape=(128, 128, 3), weights=None)
    if name == "densenet121":
        return keras.applications.DenseNet121(input_shape=(96, 96, 3), weights=None)
    L = keras.layers
    if name == "lstm_text":  # token ids -> embedding -> LSTM -> dense: a small text classifier
        inp = keras.Input((32,), batch_size=1, dtype="float32")
        x = L.Embedding(2000, 64)(inp)
        x = L.LSTM(96)(x)
        out = L.Dense(4, activation="softmax")(L.Dense(64, activation="relu")(x))
        return keras.Model(inp, out, name=name)
    if name == "text_cnn":  # token ids -> embedding -> two 1-D convolutions -> max over time -> dense
        inp = keras.Input((64,), batch_size=1, dtype="float32")
        x = L.Embedding(2000, 64)(inp)
        x = L.Conv1D(128, 5, activation="relu")(x)
        x = L.MaxPooling1D(2)(x)
        x = L.Conv1D(128, 3, activation="relu")(x)
        out = L.Dense(4, activation="softmax")(L.GlobalMaxPooling1D()(x))
        return keras.Model(inp, out, name=name)
    if name == "transformer_encoder":  # two encoder layers: self-attention, layer norm, a GELU feed-forward
        inp = keras.Input((64, 128), batch_size=1)
        x = inp
        for _ in range(2):
            a = L.MultiHeadAttention(num_heads=4, key_dim=32)(x, x)
            x = L.LayerNormalization()(x + a)
            f = L.Dense(128)(L.Dense(512, activation="gelu")(x))
            x = L.LayerNormalization()(x + f)
        out = L.Dense(8)(L.GlobalAveragePooling1D()(x))
        return keras.Model(inp, out, name=name)
    raise SystemExit(f"unknown model {name}")

def representative(name):
    """Calibration data: random images (to_tflite's default), but token ids within the vocabulary for the
    text model (random floats as ids would read outside the embedding table while calibrating)."""
    if name not in ("lstm_text", "text_cnn"):
        return None
    import numpy as np

    rng = np.random.default_rng(0)
    length = 32 if name == "lstm_text" else 64
    return lambda: ([rng.integers(0, 2000, (1, length)).astype("float32")] for _ in range(8))

name, folder = sys.argv[1], sys.argv[2]
tf.keras.utils.set_random_seed(0)
model = build(name)
for quant in ("float", "fp16", "dynamic_range", "int8"):
    path = os.path.join(folder, f"{name}_{quant}.tflite")
    if not os.path.exists(path):
        data = to_tflite(model, quant, representative(name) if quant == "int8" else None)
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)
        print("converted", path, flush=True)
'''


def convert(cache: Path) -> None:
    """Convert every model not in ``cache`` yet (a child process per model: TensorFlow stays out of this one)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for name in MODELS:
        if all((cache / f"{name}_{q}.tflite").exists() for q in PRECISIONS):
            continue
        done = subprocess.run([sys.executable, "-c", CONVERT, name, str(cache)], env=env)
        if done.returncode:  # the converter crashed (TensorFlow 2.21 on lstm_text's full int8): the row says so
            print(f"{name}: the converter exited with {done.returncode}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=False, help="device profile (calibrate --quick -o P.json)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "tflite_flops_what_if")
    parser.add_argument("--convert-only", action="store_true")
    parser.add_argument("--detail", action="store_true", help="list the ops where a what-if and its model differ")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    convert(args.cache)
    if args.convert_only:
        return
    if not args.profile:
        parser.error("--profile is needed to compare (calibrate --quick -o P.json makes one)")
    compare(args.cache, args.profile, args.detail)


def _placement(report) -> str:
    """``delegated/kept/partitions`` of XNNPACK, then ``delegated/partitions`` of the GPU delegate."""
    x, g = report.delegation.get("xnnpack"), report.delegation.get("gpu")
    return f"{x.delegated_ops}/{x.kept_ops}/{x.partitions}", f"{g.delegated_ops}/{g.partitions}"


def compare(cache: Path, profile: str, detail: bool) -> None:
    """Print the what-if beside each real conversion's own prediction, and the time the what-if took."""
    from tflite_flops.analysis import analyze_model
    from tflite_flops.api import load_profile
    from tflite_flops.reader.load import load_model
    from tflite_flops.settings import Settings
    from tflite_flops.studies.what_if import rewrite

    settings = Settings()
    settings = settings.with_profile(load_profile(profile, settings=settings))
    head = ("model", "precision", "what-if ms", "converted ms", "ratio", "ops (w/c)", "XNNPACK what-if",
            "XNNPACK converted", "GPU what-if", "GPU converted")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|")
    timings = []
    for name in MODELS:
        if not (cache / f"{name}_float.tflite").exists():
            continue
        model = load_model(cache / f"{name}_float.tflite")
        start = time.perf_counter()
        analyze_model(model, settings)
        plain = time.perf_counter() - start
        spent = 0.0
        for quant in PRECISIONS:
            if not (cache / f"{name}_{quant}.tflite").exists():
                print(f"| {name} | {quant} | - | - | - | - | - | - | - | - |  (the converter crashed)")
                continue
            real = analyze_model(cache / f"{name}_{quant}.tflite", settings)
            start = time.perf_counter()
            what = analyze_model(model if quant == "float" else rewrite(model, quant, settings), settings)
            spent += time.perf_counter() - start if quant != "float" else 0.0
            w, r = what.prediction.latency_ms, real.prediction.latency_ms
            xw, gw = _placement(what)
            xr, gr = _placement(real)
            print(f"| {name} | {quant} | {w:.3f} | {r:.3f} | {w / r:.3f} | {len(what.ops)}/{len(real.ops)} | "
                  f"{xw} | {xr} | {gw} | {gr} |")
            if detail and ([o.op_type for o in what.ops] != [o.op_type for o in real.ops] or xw != xr or gw != gr):
                _differences(what, real)
        timings.append((name, plain, spent))
    print()
    print("| model | analyze --predict s | the 3 precisions' what-if s |")
    print("|---|---:|---:|")
    for name, plain, spent in timings:
        print(f"| {name} | {plain:.2f} | {spent:.2f} |")


def _differences(what, real) -> None:
    """The op types and placements that differ, by op type (``--detail``)."""
    from collections import Counter

    def kinds(report):
        return Counter((o.op_type, o.precision, o.xnnpack, o.figures.get("gpu") if hasattr(o, "figures") else None)
                       for o in report.ops)

    a, b = kinds(what), kinds(real)
    for key in sorted(set(a) | set(b), key=str):
        if a[key] != b[key]:
            print(f"    {key}: what-if {a[key]}, converted {b[key]}")


if __name__ == "__main__":
    main()
