"""Latency fidelity: our harness vs LiteRT's own benchmark tool vs a bare invoke() loop.

Same model, same thread count, same run counts, alternating A/B/C rounds so that drift in the
machine's speed hits all three alike. Prints each round and the ratios of the medians.

    python benchmarks/latency_fidelity.py                 # MobileNetV2 1.0/224 (needs the tf extra)
    python benchmarks/latency_fidelity.py model.tflite --rounds 5 --runs 100 --threads 1

Goals (issue 5): our median within ±5% of the official tool; harness overhead < 2% against the
bare loop.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tflite_flops.convert import to_tflite  # noqa: E402
from tflite_flops.measure.bench import BenchSettings, measure_model  # noqa: E402
from tflite_flops.measure.runtime import RuntimeSettings, fill_inputs, make_interpreter, resize_and_allocate  # noqa: E402


def mobilenet_v2(path: str) -> None:
    """Convert Keras MobileNetV2 (random weights, 224×224) to ``path``."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    with open(path, "wb") as f:
        f.write(to_tflite(model))


def bare_loop(path: str, threads: int, runs: int, warmup: int) -> float:
    """Median ms of a plain for loop around invoke() (the reference for harness overhead)."""
    interp = make_interpreter(path, RuntimeSettings("litert", threads, True))
    resize_and_allocate(interp, {})
    fill_inputs(interp)
    for _ in range(warmup):
        interp.invoke()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        interp.invoke()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1e6


def official(path: str, threads: int, runs: int, warmup: int) -> float | None:
    """Median ms reported by ai_edge_litert/tools/benchmark_litert_model.py (None when unavailable)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [sys.executable, "-m", "ai_edge_litert.tools.benchmark_litert_model", f"--model={path}",
               f"--num_runs={runs}", f"--warmup_runs={warmup}", f"--num_threads={threads}", f"--result_json={out}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            print(f"  official tool failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
            return None
        with open(out) as f:
            return float(json.load(f)["latency"]["median_ms"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", help=".tflite file (default: MobileNetV2 converted on the fly)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    tmp = None
    path = args.model
    if path is None:
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "mobilenet_v2.tflite")
        print("converting MobileNetV2 1.0/224 ...")
        mobilenet_v2(path)
    ours_all, official_all, bare_all = [], [], []
    for i in range(args.rounds):
        ours = measure_model(path, {}, RuntimeSettings("litert", args.threads, True),
                             BenchSettings(args.runs, args.warmup)).median_ms
        off = official(path, args.threads, args.runs, args.warmup)
        bare = bare_loop(path, args.threads, args.runs, args.warmup)
        ours_all.append(ours)
        bare_all.append(bare)
        if off is not None:
            official_all.append(off)
        print(f"round {i + 1}: tflite_flops {ours:.3f} ms · official {off if off is None else f'{off:.2f}'} ms · "
              f"bare loop {bare:.3f} ms")
    o, b = float(np.median(ours_all)), float(np.median(bare_all))
    print(f"\nmedian of medians: tflite_flops {o:.3f} ms, bare loop {b:.3f} ms")
    print(f"harness vs bare loop: {o / b:.4f}× ({100 * (o / b - 1):+.2f}%, goal within ±2%)")
    if official_all:
        f = float(np.median(official_all))
        print(f"official tool {f:.2f} ms (it rounds to 0.01 ms); tflite_flops / official = {o / f:.4f}× "
              f"({100 * (o / f - 1):+.2f}%, goal within ±5%)")


if __name__ == "__main__":
    main()
