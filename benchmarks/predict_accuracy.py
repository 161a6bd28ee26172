"""Latency prediction against measurement on models never used in calibration (issue 22).

    python benchmarks/predict_accuracy.py                       # calibrate (full suite, ~1 min) then predict and measure
    python benchmarks/predict_accuracy.py --quick               # the --quick calibration suite
    python benchmarks/predict_accuracy.py --profile p.json      # an existing profile
    python benchmarks/predict_accuracy.py --rounds 5 --threads 2

Held-out models: every bundled sample (.tflite) and generated families kept out of the suite, converted
from Keras when TensorFlow is installed (MobileNetV2-like inverted residual stacks, a small ResNet, a
transformer encoder block, an MLP, a CNN in full int8 and in dynamic range int8, MobileNetV2 in fp16).
Every model is predicted with ``tflite_flops.analyze(path, predict=PROFILE)`` and measured with the
harness (``measure_model``: warm-up, timed runs, median); the models are interleaved and measured in
``--rounds`` rounds (the machine is noisy) and the median of the rounds' medians is the measured time.
Prints per model and per family the predicted and measured ms and the error, then the share within
±10% and the median |error|.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import tflite_flops  # noqa: E402
from tflite_flops.measure.bench import BenchSettings, measure_model  # noqa: E402
from tflite_flops.measure.runtime import RuntimeSettings  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def keras_models() -> list[tuple[str, str, object, str]]:
    """(family, name, Keras model, quantization) of the generated held-out models (empty without TensorFlow)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError:
        print("TensorFlow is not installed: only the samples are held out", file=sys.stderr)
        return []
    L = tf.keras.layers

    def inverted_residual(x, expand, out, stride):
        cin = x.shape[-1]
        y = L.Conv2D(cin * expand, 1, use_bias=False)(x)
        y = L.ReLU(6.0)(L.BatchNormalization()(y))
        y = L.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(y)
        y = L.ReLU(6.0)(L.BatchNormalization()(y))
        y = L.BatchNormalization()(L.Conv2D(out, 1, use_bias=False)(y))
        return L.Add()([x, y]) if stride == 1 and cin == out else y

    def mobilenet_like(size, width):
        inp = tf.keras.Input((size, size, 3))
        x = L.ReLU(6.0)(L.Conv2D(width, 3, strides=2, padding="same")(inp))
        for out, stride in ((width, 1), (width * 2, 2), (width * 2, 1), (width * 4, 2), (width * 4, 1)):
            x = inverted_residual(x, 6, out, stride)
        x = L.GlobalAveragePooling2D()(x)
        return tf.keras.Model(inp, L.Dense(100, activation="softmax")(x))

    def resnet_small(size):
        inp = tf.keras.Input((size, size, 3))
        x = L.MaxPool2D(3, 2, padding="same")(L.ReLU()(L.Conv2D(32, 7, strides=2, padding="same")(inp)))
        for filters, stride in ((32, 1), (64, 2), (128, 2)):
            y = L.ReLU()(L.BatchNormalization()(L.Conv2D(filters, 3, strides=stride, padding="same")(x)))
            y = L.BatchNormalization()(L.Conv2D(filters, 3, padding="same")(y))
            short = x if stride == 1 and x.shape[-1] == filters else L.Conv2D(filters, 1, strides=stride)(x)
            x = L.ReLU()(L.Add()([short, y]))
        return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))

    def transformer(tokens, dim, heads):
        inp = tf.keras.Input((tokens, dim))
        a = L.MultiHeadAttention(heads, dim // heads)(inp, inp)
        x = L.LayerNormalization()(L.Add()([inp, a]))
        f = L.Dense(dim)(L.Dense(dim * 4, activation="gelu")(x))
        return tf.keras.Model(inp, L.LayerNormalization()(L.Add()([x, f])))

    def mlp(width, depth):
        inp = tf.keras.Input((784,))
        x = inp
        for _ in range(depth):
            x = L.Dense(width, activation="relu")(x)
        return tf.keras.Model(inp, L.Dense(10)(x))

    def cnn(size):
        inp = tf.keras.Input((size, size, 3))
        x = inp
        for filters in (16, 32, 64):
            x = L.MaxPool2D()(L.Conv2D(filters, 3, padding="same", activation="relu")(x))
        return tf.keras.Model(inp, L.Dense(10)(L.Flatten()(x)))

    tf.keras.utils.set_random_seed(0)
    return [("mobilenet-like", "mbv2like_96_w16", mobilenet_like(96, 16), "float"),
            ("mobilenet-like", "mbv2like_160_w24", mobilenet_like(160, 24), "float"),
            ("mobilenet-like", "mbv2like_128_w16_int8", mobilenet_like(128, 16), "int8"),
            ("resnet", "resnet_small_112", resnet_small(112), "float"),
            ("resnet", "resnet_small_64_dynamic", resnet_small(64), "dynamic_range"),
            ("transformer", "encoder_64x128", transformer(64, 128, 4), "float"),
            ("transformer", "encoder_128x256", transformer(128, 256, 8), "float"),
            ("mlp", "mlp_512x3", mlp(512, 3), "float"),
            ("mlp", "mlp_1024x2_dynamic", mlp(1024, 2), "dynamic_range"),
            ("cnn", "cnn_64_int8", cnn(64), "int8"),
            ("cnn", "cnn_96_fp16", cnn(96), "fp16"),
            ("mobilenet", "mobilenet_v2_035_96", tf.keras.applications.MobileNetV2(
                input_shape=(96, 96, 3), alpha=0.35, weights=None), "float")]


def held_out(folder: str) -> list[tuple[str, str, str]]:
    """(family, name, path) of every held-out model."""
    samples = os.path.join(ROOT, "sample_models")
    models = [("sample", name[:-len(".tflite")], os.path.join(samples, name))
              for name in sorted(os.listdir(samples)) if name.endswith(".tflite")]
    from tflite_flops.convert import to_tflite

    for family, name, model, quant in keras_models():
        path = os.path.join(folder, name + ".tflite")
        with open(path, "wb") as f:
            f.write(to_tflite(model, quant))
        models.append((family, name, path))
    return models


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", help="an existing device profile (default: calibrate first)")
    parser.add_argument("--quick", action="store_true", help="calibrate with the --quick suite (default: the full one)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measurement rounds (default 5)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per model and round (default 30)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    runtime = RuntimeSettings(threads=args.threads)
    work = tempfile.mkdtemp(prefix="predict-accuracy-")
    t0 = time.time()
    profile = args.profile
    if profile is None:
        from tflite_flops.latency.calibrate import calibrate

        profile = os.path.join(work, "profile.json")
        _, timed = calibrate(profile, runtime, quick=args.quick, progress=True)
        print(f"calibrated ({'quick' if args.quick else 'full'} suite, {timed} points) in {time.time() - t0:.0f} s")
    models = held_out(work)
    rows = []
    for family, name, path in models:
        try:
            report = tflite_flops.analyze(path, predict=profile, threads=args.threads)
        except tflite_flops.TfliteFlopsError as exc:
            print(f"{name}: not predicted ({exc})", file=sys.stderr)
            continue
        if report.prediction is None:
            continue
        shapes = {i: tuple(t.shape) for i, t in enumerate(report.inputs)}
        rows.append([family, name, path, shapes, report.prediction.latency_ms, []])
    bench = BenchSettings(runs=args.runs, warmup=5)
    for _ in range(args.rounds):  # interleaved: a slow spell of the machine hits every model alike
        for row in rows:
            try:
                row[5].append(measure_model(row[2], row[3], runtime, bench).median_ms)
            except tflite_flops.TfliteFlopsError as exc:
                print(f"{row[1]}: not measured ({exc})", file=sys.stderr)
    table = [(f, n, p, statistics.median(m), p / statistics.median(m) - 1) for f, n, _, _, p, m in rows if m]
    print(f"\n{'family':<16} {'model':<28} {'predicted ms':>12} {'measured ms':>12} {'error':>8}")
    for f, n, p, m, e in table:
        print(f"{f:<16} {n:<28} {p:12.3f} {m:12.3f} {e:+8.1%}{'' if abs(e) <= 0.10 else '  miss'}")
    print(f"\n{'family':<16} {'models':>6} {'within ±10%':>12} {'median |error|':>15}")
    for fam in dict.fromkeys(f for f, *_ in table):
        errs = [abs(e) for f, *_, e in table if f == fam]
        print(f"{fam:<16} {len(errs):>6} {sum(e <= 0.10 for e in errs):>12} {statistics.median(errs):>15.1%}")
    errs = [abs(e) for *_, e in table]
    if errs:
        print(f"\nall: {sum(e <= 0.10 for e in errs)}/{len(errs)} within ±10% "
              f"({sum(e <= 0.10 for e in errs) / len(errs):.0%}), median |error| {statistics.median(errs):.1%}; "
              f"{time.time() - t0:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
