"""Do the ops ``analyze --predict`` counts as fused really cost nothing? Timed on LiteRT with XNNPACK.

For each fusion rule of :func:`tflite_flops.latency.predict.fused_ops` (a clamp merged into the
convolution before it, a zero PAD folded into a VALID convolution, a RESHAPE run in place, an 8-bit
x·sigmoid(x) folded into one lookup table), three
generated models: the op with nothing to fuse it with (the baseline), the op where the rule applies,
and the same op made unfusable by a second reader of the tensor the rule needs read once. The rule
holds when the fusable model times like the baseline and the unfusable one costs more. The analysis'
own verdict is printed next to each model. Rounds are interleaved so that drift hits all models alike.

    python benchmarks/predict_fusions.py [--rounds 7] [--runs 300] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from fusion_models import swish_model  # noqa: E402
from tflite_builder import FLOAT32, build_model  # noqa: E402
from tflite_flops.analysis import analyze_model  # noqa: E402
from tflite_flops.latency.predict import fused_ops  # noqa: E402
from tflite_flops.measure.bench import BenchSettings, measure_model  # noqa: E402
from tflite_flops.measure.runtime import RuntimeSettings  # noqa: E402
from tflite_flops.reader.load import load_model  # noqa: E402

PAD, CONV_2D, RELU, RESHAPE, FULLY_CONNECTED, MAXIMUM, TRANSPOSE_CONV = 34, 3, 19, 22, 9, 55, 67
INT32 = 2
H, C, K = 56, 32, 32  # a 56x56x32 activation: a standalone element-wise pass over it costs ~10 µs here
SAME, VALID = 0, 1


def _conv(inp: int, out: int, padding: int) -> dict:
    return {"opcode": 1, "inputs": [inp, 1, 2], "outputs": [out],
            "options": ("Conv2DOptions", {"padding": padding, "stride_w": 1, "stride_h": 1})}


def make(kind: str, second_reader: bool = False) -> bytes:
    """x[1,56,56,32] -> a 3x3 convolution to 32 channels, and around it what ``kind`` names."""
    rng = np.random.default_rng(0)
    tensors = [{"name": "x", "shape": [1, H, H, C]}, {"name": "w", "shape": [K, 3, 3, C], "buffer": 1},
               {"name": "b", "shape": [K], "buffer": 2}]
    buffers = [None, (rng.random((K, 3, 3, C), np.float32) * 0.01).tobytes(), np.zeros(K, np.float32).tobytes()]
    fc_weights = [(rng.random((8, K), np.float32)).tobytes(), np.zeros(8, np.float32).tobytes()]
    if kind == "conv":  # the baseline of the clamp and the pad: the convolution alone (SAME)
        tensors += [{"name": "y", "shape": [1, H, H, K]}]
        ops, outputs = [_conv(0, 3, SAME)], [3]
    elif kind == "conv+relu":
        tensors += [{"name": "c", "shape": [1, H, H, K]}, {"name": "y", "shape": [1, H, H, K]}]
        ops, outputs = [_conv(0, 3, SAME), {"opcode": 2, "inputs": [3], "outputs": [4]}], [4] + ([3] if second_reader else [])
    elif kind in ("deconv", "deconv+relu"):  # TRANSPOSE_CONV 3x3, stride 1, SAME: inputs (output shape, w, x, b)
        tensors += [{"name": "out_shape", "shape": [4], "type": INT32, "buffer": 3}, {"name": "d", "shape": [1, H, H, K]},
                    {"name": "y", "shape": [1, H, H, K]}]
        buffers.append(np.array([1, H, H, K], np.int32).tobytes())
        ops = [{"opcode": 6, "inputs": [3, 1, 0, 2], "outputs": [4],
                "options": ("TransposeConvOptions", {"padding": SAME, "stride_w": 1, "stride_h": 1})}]
        outputs = [4]
        if kind == "deconv+relu":
            ops.append({"opcode": 2, "inputs": [4], "outputs": [5]})
            outputs = [5] + ([4] if second_reader else [])
    elif kind == "conv+max0":  # MAXIMUM(conv, 0.0): a clamp once XNNPACK rewrites it
        tensors += [{"name": "c", "shape": [1, H, H, K]}, {"name": "zero", "shape": [], "buffer": 3},
                    {"name": "y", "shape": [1, H, H, K]}]
        buffers.append(np.zeros(1, np.float32).tobytes())
        ops = [_conv(0, 3, SAME), {"opcode": 5, "inputs": [3, 4], "outputs": [5]}]
        outputs = [5] + ([3] if second_reader else [])
    elif kind == "pad+conv":
        tensors += [{"name": "pads", "shape": [4, 2], "type": INT32, "buffer": 3},
                    {"name": "xp", "shape": [1, H + 2, H + 2, C]}, {"name": "y", "shape": [1, H, H, K]}]
        buffers.append(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32).tobytes())
        ops, outputs = [{"opcode": 0, "inputs": [0, 3], "outputs": [4]}, _conv(4, 5, VALID)], [5] + ([4] if second_reader else [])
    elif kind == "conv+fc":  # the baseline of the reshape: FULLY_CONNECTED flattens the 4-D input itself
        tensors += [{"name": "c", "shape": [1, H, H, K]}, {"name": "fw", "shape": [8, K], "buffer": 3},
                    {"name": "fb", "shape": [8], "buffer": 4}, {"name": "y", "shape": [H * H, 8]}]
        buffers += fc_weights
        ops = [_conv(0, 3, SAME), {"opcode": 4, "inputs": [3, 4, 5], "outputs": [6], "options": ("FullyConnectedOptions", {})}]
        outputs = [6]
    elif kind == "conv+reshape+fc":
        tensors += [{"name": "c", "shape": [1, H, H, K]}, {"name": "new_shape", "shape": [2], "type": INT32, "buffer": 3},
                    {"name": "flat", "shape": [H * H, K]}, {"name": "fw", "shape": [8, K], "buffer": 4},
                    {"name": "fb", "shape": [8], "buffer": 5}, {"name": "y", "shape": [H * H, 8]}]
        buffers += [np.array([H * H, K], np.int32).tobytes()] + fc_weights
        ops = [_conv(0, 3, SAME), {"opcode": 3, "inputs": [3, 4], "outputs": [5]},
               {"opcode": 4, "inputs": [5, 6, 7], "outputs": [8], "options": ("FullyConnectedOptions", {})}]
        outputs = [8] + ([3] if second_reader else [])
    else:
        raise ValueError(kind)
    sg = {"tensors": tensors, "operators": ops, "inputs": [0], "outputs": outputs, "name": "main"}
    return build_model([sg], [PAD, CONV_2D, RELU, RESHAPE, FULLY_CONNECTED, MAXIMUM, TRANSPOSE_CONV], buffers=buffers)


CASES = [  # (label, model, the fusion rule's verdict expected)
    ("conv (baseline)", make("conv"), None),
    ("conv + RELU", make("conv+relu"), "RELU"),
    ("conv + RELU, conv output read twice", make("conv+relu", True), None),
    ("conv + MAXIMUM(x, 0)", make("conv+max0"), "MAXIMUM"),
    ("conv + MAXIMUM(x, 0), conv output read twice", make("conv+max0", True), None),
    ("transpose conv (baseline)", make("deconv"), None),
    ("transpose conv + RELU", make("deconv+relu"), "RELU"),
    ("transpose conv + RELU, its output read twice", make("deconv+relu", True), None),
    ("PAD + VALID conv", make("pad+conv"), "PAD"),
    ("PAD + VALID conv, PAD output read twice", make("pad+conv", True), None),
    ("conv + FC (baseline)", make("conv+fc"), None),
    ("conv + RESHAPE + FC", make("conv+reshape+fc"), "RESHAPE"),
    ("conv + RESHAPE + FC, conv output read twice", make("conv+reshape+fc", True), None),
    ("int8 LOGISTIC (baseline)", swish_model("logistic"), None),
    ("int8 LOGISTIC + MUL(x, sigmoid(x))", swish_model("swish"), "MUL"),
    ("int8 LOGISTIC + MUL(x, sigmoid(x)), sigmoid read twice", swish_model("swish_two_readers"), None),
    ("int8 LOGISTIC + MUL(x2, sigmoid(x))", swish_model("other_operand"), None),
    ("float32 LOGISTIC + MUL(x, sigmoid(x))", swish_model("swish", FLOAT32), None),
]


def verdict(data: bytes) -> str:
    """The op types the analysis counts as fused in this model."""
    report = analyze_model(data)
    fused = fused_ops(load_model(data), report.ops)
    return ", ".join(sorted(report.ops[i].op_type for _, i in fused)) or "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    runtime, bench = RuntimeSettings("litert", args.threads, True), BenchSettings(args.runs, 30)
    medians: dict[str, list[float]] = {label: [] for label, _, _ in CASES}
    for _ in range(args.rounds):
        for label, data, _ in CASES:
            medians[label].append(measure_model(data, {}, runtime, bench).median_ms * 1000)
    print(f"{'model':48s} {'median µs':>10s} {'spread':>15s}  fused (analysis)")
    for label, data, expected in CASES:
        v = medians[label]
        got = verdict(data)
        mark = "" if (expected or "-") == got else f"  (expected {expected or '-'})"
        print(f"{label:48s} {statistics.median(v):10.1f} {min(v):7.1f}-{max(v):7.1f}  {got}{mark}")


if __name__ == "__main__":
    main()
