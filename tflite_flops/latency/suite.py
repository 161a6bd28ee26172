"""The calibration suite: single-op models (and chains of tiny ops for the overheads) written without TensorFlow.

Every op family that matters in real models (and a WHILE's own loop cost), at the shapes of real models
(from a few hundred elements to MobileNet and ResNet layers), in each precision (float32; float16 weights behind a DEQUANTIZE;
dynamic-range int8 weights with float activations, "hybrid"; full int8), with fused activations.
A :class:`SuitePoint` names one model and says whether it is timed with XNNPACK on (``delegate``);
:func:`build` writes it with :class:`~tflite_flops.measure.model_writer.ModelWriter`. Which law a point
feeds is not decided here: calibration analyses each model with the same static analysis (placement,
precision) the prediction uses.

The models are written by the builders of :mod:`tflite_flops.latency.suite_models`; this module says which,
at which shapes. ``suite(quick)`` is the list; ``quick`` keeps about a third of the shapes of every family and precision.
Points are identified by ``SuitePoint.key`` (model id and ``@x``/``@b`` for XNNPACK on/off), which keys
the resumable side file and the files of a phone pack.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..measure.model_writer import ModelWriter, Quant
from .suite_models import (AFTER_QD8, FUSABLE, GROWING_OPS, IN_SCALE, LOOP_SIZES, LOOP_TRIPS, _act, after_qd8,
                           batch_matmul, binary, chain, concatenation, conv, convert, depthwise, fully_connected,
                           gather, grouped_conv, growing_loop, layout, loop, pool, reduce, softmax, stream, transpose_conv,
                           unary)

DESCRIPTION = "tflite_flops calibration suite"
PRECISIONS = ("float32", "fp16", "hybrid", "int8")
LOOP = "WHILE"  # the family of the WHILE points (a loop with a trivial body): the WHILE's own cost per trip
OVERHEAD = "overhead"  # the family of the chains of tiny ops that measure the per-invoke and per-partition costs
CHAIN_LENGTHS = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class SuitePoint:
    """One calibration model: ``id`` names the model, ``delegate`` the timing configuration."""

    id: str
    family: str  # the op type it calibrates, or OVERHEAD
    precision: str  # one of PRECISIONS (int32, bool: shape arithmetic): how the model is written (the law's
    # precision comes from the analysis)
    delegate: bool  # timed with XNNPACK on
    quick: bool  # part of the --quick suite
    make: Callable[[ModelWriter], tuple[list[int], list[int]]] = field(compare=False, repr=False)
    # the key of a point whose op this point's model runs first, on its own input (AFTER_QD8): calibration takes
    # that point's time out of this one's; "" for a point of one op
    lead: str = ""

    @property
    def key(self) -> str:
        """The point's key: its model id and timing configuration (``@x`` XNNPACK, ``@b`` builtin)."""
        return f"{self.id}@{'x' if self.delegate else 'b'}"


def build(fb: Any, point: SuitePoint) -> bytes:
    """The model bytes of ``point``, written with schema module ``fb``."""
    w = ModelWriter(fb)
    inputs, outputs = point.make(w)
    return w.to_bytes(inputs, outputs, f"{DESCRIPTION}: {point.id}")


def write_single_op_models(fb: Any, directory: Any, quick: bool = True) -> list[str]:
    """Write the suite's single-op models timed with XNNPACK on (no overhead chain, no loop) into
    ``directory`` (a ``pathlib.Path``), one ``ID.tflite`` each; their paths. The emulation lab and the
    allocation tracer's tests trace them."""
    paths = []
    for point in suite(quick=quick):
        if point.delegate and not point.lead and point.family not in (OVERHEAD, LOOP):
            path = directory / f"{point.id}.tflite"
            path.write_bytes(build(fb, point))
            paths.append(str(path))
    return paths


# ---- the suite ------------------------------------------------------------------------------------------

ACTS = ("NONE", "RELU", "RELU6")
# (h, cin, cout, k, stride): stems, pointwise and 3x3 layers of MobileNet/ResNet-sized networks, and tiny ones
CONVS = ((56, 64, 64, 1, 1), (28, 64, 128, 3, 1), (8, 8, 8, 3, 1), (224, 3, 32, 3, 2), (14, 96, 576, 1, 1),
         (7, 512, 512, 3, 1), (32, 3, 16, 3, 2), (112, 32, 64, 1, 1), (14, 256, 256, 3, 1), (56, 24, 144, 1, 1),
         (7, 160, 960, 1, 1), (16, 16, 16, 3, 1), (56, 64, 128, 3, 2), (28, 32, 192, 1, 1), (4, 64, 32, 1, 1),
         (56, 64, 64, 3, 1), (14, 256, 512, 1, 1), (28, 128, 128, 3, 1), (112, 3, 16, 3, 2), (64, 3, 32, 7, 2),
         (96, 3, 24, 3, 2), (32, 8, 16, 3, 1), (16, 4, 8, 3, 1), (112, 3, 64, 7, 2),
         # one input channel (a spectrogram's or a waveform's first layer): int8 and qd8 kernels pad it to their kr
         (64, 1, 32, 3, 1), (48, 1, 16, 5, 2))
# Dynamic-range pointwise convolutions of few channels over many pixels (MobileNet's and BlazeFace's early 1x1
# layers): XNNPACK quantizes their input row by row and runs them by its qd8 GEMM, ~16 ns a pixel at 16 channels
# here, a cost the layers above leave unfitted (the law said 20 us for [1,64,64,16] -> 16 channels, 68 timed).
QD8_POINTWISES = ((64, 16, 16), (32, 32, 36), (16, 96, 24), (80, 16, 96), (40, 24, 144), (20, 144, 32),
                  (32, 64, 64), (8, 96, 24), (16, 24, 96), (40, 144, 24))
# Large weights at few output positions (ResNet's and Inception's last stages): their weights (2-9 MB) are read from
# beyond the L2 once per run, a cost the MACs do not carry when there are few positions to spread it over; without
# them the laws fold it into the cost per MAC of the 7x7 and 14x14 layers above (docs/notes/predict-whole-model-residual.md).
# Not in the --quick suite.
WIDE_CONVS = ((4, 512, 512, 3, 1), (4, 1024, 2048, 1, 1), (8, 256, 256, 3, 1), (8, 2048, 384, 1, 1))
DEPTHWISES = ((56, 144, 3, 1), (14, 576, 3, 1), (8, 8, 3, 1), (112, 32, 3, 1), (28, 144, 5, 2), (7, 960, 3, 1),
              (112, 96, 3, 2), (16, 16, 3, 1), (28, 192, 3, 1), (14, 480, 5, 1), (56, 144, 3, 2), (32, 64, 3, 1),
              (10, 672, 5, 1), (14, 960, 3, 1), (20, 240, 5, 1), (14, 320, 5, 1),  # these four: weights of
              # 24 to 67 KiB, either side of half an L1d (features.op_features, dw_macs_past_l1), as EfficientNet's
              # 5x5 layers; then channels that end in a partial tile of the depthwise kernels (16 float, 32 int8 on
              # x86-avx512: features.op_features, dw_rem_taps), as BlazeFace's and ShuffleNet's 24-channel layers
              (56, 24, 3, 1), (28, 40, 5, 1), (14, 120, 3, 1), (32, 72, 5, 2),
              # a 1x1 depthwise layer (a per-channel scale, as MediaPipe's hand models write): a cost per output pixel
              # the taps do not give (128x128x8: 49 us, the law without out_rows 14)
              (128, 8, 1, 1), (64, 16, 1, 1), (32, 64, 1, 1))
# Grouped convolutions (h, channels, channels per group, k, stride), as Keras writes Conv2D(groups=...) and depthwise
# layers written as one (per group 1), and depthwise convolutions wider than XNNPACK's dwconv kernels (h, c, k,
# stride: over 25 taps, run by its GEMM kernel once per channel, profile.DWCONV_MAX_TAPS): 25 to 60 times slower
# per MAC than a 5x5 (docs/notes/predict-grouped-conv.md). Their laws: features.conv_kernel, ``grouped_taps``. The
# wide depthwise ones are not timed in hybrid: XNNPACK leaves a dynamic-range depthwise convolution to the builtin
# kernel, whose law (with its after-qd8 twin) its 3x3 and 5x5 points fit, and which the 7x7 points would bend.
GROUPED_CONVS = ((28, 128, 1, 7, 1), (14, 256, 1, 7, 1), (16, 192, 1, 3, 1), (7, 768, 1, 7, 1), (28, 64, 4, 3, 1),
                 (56, 32, 1, 7, 1), (14, 128, 8, 5, 1))
WIDE_DEPTHWISES = ((28, 128, 7, 1), (14, 256, 7, 1), (7, 768, 7, 1), (20, 64, 9, 1))
FCS = ((1, 1024, 1000), (16, 256, 1024), (1, 64, 10), (64, 256, 256), (1, 256, 256), (128, 512, 512),
       (8, 16, 8), (1, 2048, 1000), (32, 128, 128), (1, 512, 10), (128, 256, 1024), (4, 1024, 1024),
       (1, 16, 10), (1, 128, 64), (2, 32, 16))
# The gate matmuls of Keras LSTM/GRU cells (one step: [1, inputs or units] x [4 or 3 x units, ...]): weights of
# 16-512 KiB read every trip of the loop, where the larger FCS above (MiB of weights) cost more per weight
RNN_FCS = ((1, 128, 512), (1, 64, 384), (1, 256, 1024), (1, 32, 128))
BMMS = ((4, 64, 64, 64), (8, 128, 64, 128), (1, 16, 16, 16), (8, 128, 128, 64), (2, 32, 32, 32), (12, 64, 64, 64),
        (4, 1, 16, 8), (8, 1, 32, 64), (2, 4, 8, 4), (4, 8, 16, 8))  # the last four: a small decoder's attention
# Transposed convolutions; the second line: output channels on both sides of the GEMM's tiles (XNNPACK runs them in
# passes, kernels.deconv_channels), a stride of 1, a 4x4 and a 5x5 kernel.
TCONVS = ((16, 16, 8, 3, 2), (28, 64, 32, 3, 2), (8, 8, 8, 2, 2), (8, 16, 8, 3, 2), (14, 32, 32, 3, 2),
          (4, 8, 4, 3, 2), (32, 16, 16, 2, 2), (7, 128, 64, 4, 2), (64, 32, 16, 2, 2), (16, 128, 64, 2, 2),
          (8, 24, 24, 3, 2), (8, 24, 48, 3, 2), (7, 24, 32, 3, 2), (16, 16, 16, 3, 1), (12, 32, 32, 5, 2),
          (16, 16, 16, 4, 2), (32, 32, 8, 2, 2), (8, 24, 40, 3, 2))
SHAPES = ((1, 28, 28, 64), (1, 8, 8, 16), (1, 128, 256), (1, 112, 112, 32), (1, 56, 56, 64), (1, 16, 64))
# (the last three: few elements per broadcast row, as in a model's input normalization, (x - mean) / std per channel)
BROADCASTS = (((1, 28, 28, 64), (1, 1, 1, 64)), ((1, 128, 256), (1, 1, 256)), ((1, 14, 14, 96), (1, 1, 1, 96)),
              ((1, 160, 160, 3), (1, 1, 1, 3)), ((1, 64, 64, 8), (1, 1, 1, 8)), ((1, 56, 56, 32), (1, 56, 56, 1)))
BINARY_FLOAT = ("ADD", "MUL", "SUB", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE")
BINARY_INT8 = ("ADD", "MUL", "SUB", "MAXIMUM", "MINIMUM")
UNARY_FLOAT = ("RELU", "RELU6", "LOGISTIC", "HARD_SWISH", "TANH", "GELU", "LEAKY_RELU", "EXP", "RSQRT", "SQRT",
               "ABS", "NEG", "SQUARE")
UNARY_INT8 = ("RELU", "RELU6", "LOGISTIC", "HARD_SWISH", "TANH", "LEAKY_RELU")
POOLS = (("MAX_POOL_2D", 112, 64, 3, 2, "SAME"), ("AVERAGE_POOL_2D", 7, 1280, 7, 7, "VALID"),
         ("MAX_POOL_2D", 8, 16, 2, 2, "VALID"), ("AVERAGE_POOL_2D", 28, 32, 2, 2, "VALID"),
         ("MAX_POOL_2D", 28, 64, 2, 2, "VALID"), ("AVERAGE_POOL_2D", 14, 256, 3, 1, "SAME"),
         # enough points per op type for every pool feature (features + 2): 2x2 pools read 4 inputs an output
         ("MAX_POOL_2D", 128, 16, 2, 2, "VALID"), ("AVERAGE_POOL_2D", 56, 64, 2, 2, "VALID"),
         ("MAX_POOL_2D", 64, 32, 2, 2, "VALID"), ("AVERAGE_POOL_2D", 8, 512, 8, 8, "VALID"),
         ("MAX_POOL_2D", 56, 96, 3, 2, "SAME"), ("AVERAGE_POOL_2D", 112, 16, 2, 2, "VALID"),
         ("MAX_POOL_2D", 16, 256, 2, 2, "VALID"), ("AVERAGE_POOL_2D", 16, 128, 3, 1, "SAME"))
REDUCES = (("MEAN", (1, 7, 7, 1280), (1, 2)), ("MEAN", (1, 128, 256), (2,)), ("MEAN", (1, 8, 8, 16), (1, 2)),
           ("MEAN", (1, 28, 28, 64), (1, 2)), ("MEAN", (1, 16, 64), (2,)), ("SUM", (1, 128, 256), (2,)),
           ("REDUCE_MAX", (1, 128, 256), (2,)), ("MEAN", (1, 14, 14, 576), (1, 2)))
SOFTMAXES = ((1, 1000), (4, 128, 128), (1, 10), (1, 8, 64, 64), (1, 4, 16, 16),
             (1, 1024, 16), (1, 16, 256), (1, 4, 1024), (1, 128, 64))  # rows of 16 to 1,024: a cost per row too
CONCATS = (((1, 28, 28, 32), 2, 3), ((1, 8, 8, 8), 2, 3), ((1, 128, 256), 2, 1), ((1, 56, 56, 64), 2, 3),
           ((1, 14, 14, 64), 4, 3),
           # enough for every layout feature (features + 2): a U-Net's skip concatenations of 16-64 channels
           ((1, 128, 128, 16), 2, 3), ((1, 64, 64, 32), 2, 3), ((1, 32, 32, 64), 3, 3))
LAYOUTS = (("RESHAPE", (1, 7, 7, 1280), (1, 62720)), ("TRANSPOSE", (1, 128, 4, 64), (0, 2, 1, 3)),
           ("PAD", (1, 56, 56, 64), 1), ("STRIDED_SLICE", (1, 28, 28, 64), (1, 28, 28, 32)),
           ("RESHAPE", (1, 128, 256), (1, 128, 4, 64)), ("TRANSPOSE", (1, 28, 28, 64), (0, 3, 1, 2)),
           ("PAD", (1, 8, 8, 16), 1), ("SLICE", (1, 128, 256), (1, 64, 256)), ("RESIZE_BILINEAR", (1, 14, 14, 64), 28),
           ("TRANSPOSE", (1, 8, 8, 16), (0, 3, 1, 2)), ("PAD", (1, 112, 112, 32), 1),
           ("STRIDED_SLICE", (1, 128, 256), (1, 1, 256)),
           # PADs of few channels (a stem's, before a convolution it does not fold into): copied row by row
           ("PAD", (1, 128, 128, 3), 3), ("PAD", (1, 224, 224, 3), 1), ("PAD", (1, 64, 64, 8), 1),
           ("PAD", (1, 28, 28, 256), 1),
           # a channel shuffle's transpose (ShuffleNet: [h,w,groups,c/groups] -> [h,w,c/groups,groups]): a copy of
           # tiny innermost runs, 0.59 ns an int8 element at 16x16x48 where the law's 3 points said 0.03
           ("TRANSPOSE", (1, 16, 16, 2, 24), (0, 1, 2, 4, 3)), ("TRANSPOSE", (1, 32, 32, 2, 16), (0, 1, 2, 4, 3)),
           ("TRANSPOSE", (1, 8, 8, 4, 48), (0, 1, 2, 4, 3)),
           # resizes cost per output element and pixel, whatever their input: a DeepLab head's 8x upsampling of 21
           # classes, an ASPP pooled branch broadcast to 16x16, 2x and 4x upsamplings (U-Net, FPN, YOLO)
           ("RESIZE_BILINEAR", (1, 16, 16, 21), 128), ("RESIZE_BILINEAR", (1, 1, 1, 128), 16),
           ("RESIZE_BILINEAR", (1, 32, 32, 32), 64), ("RESIZE_BILINEAR", (1, 8, 8, 256), 32),
           ("RESIZE_BILINEAR", (1, 40, 40, 16), 80),
           ("RESIZE_NEAREST_NEIGHBOR", (1, 16, 16, 64), 32), ("RESIZE_NEAREST_NEIGHBOR", (1, 8, 8, 128), 16),
           ("RESIZE_NEAREST_NEIGHBOR", (1, 32, 32, 32), 64), ("RESIZE_NEAREST_NEIGHBOR", (1, 13, 13, 128), 26),
           ("RESIZE_NEAREST_NEIGHBOR", (1, 1, 1, 256), 8))
GATHERS = ((1000, 64, 16), (5000, 128, 128), (100, 16, 4))
CONVERTS = (("QUANTIZE", (1, 224, 224, 3)), ("DEQUANTIZE", (1, 28, 28, 64)), ("QUANTIZE", (1, 8, 8, 16)),
            ("DEQUANTIZE", (1, 1000)))
# The points of these (op type, precision) in an XNNPACK suite are timed once more after a tiny dynamically quantized
# FULLY_CONNECTED on the delegate (its own point, AFTER_QD8: [m, k] x [n, k]), as in a dynamic-range model: the
# laws of profile.AFTER_QD8_PLACEMENTS. The kernels that pay for the state a qd8 kernel leaves behind, timed here
# (x86-avx512) after the lead against alone, every float32 op type of the suite: the builtin hybrid depthwise
# convolution 2.9x, XNNPACK's f32 max pool 2.1-2.3x and bilinear resize 3.2x; every other kernel 0.8-1.03x
# (docs/notes/predict-atrous-audio.md).
AFTER_QD8_OPS = (("DEPTHWISE_CONV_2D", "hybrid"), ("MAX_POOL_2D", "float32"), ("RESIZE_BILINEAR", "float32"))
QUICK_EVERY = 2  # --quick keeps every other shape of each list, and the third (a small one in every list)


def _name(*parts: Any) -> str:
    text = "-".join(str(p) if not isinstance(p, tuple) else "x".join(map(str, p)) for p in parts)
    return text.replace(" ", "")


def models() -> list[tuple[str, str, str, bool, Callable[[ModelWriter], Any]]]:
    """Every model of the suite: (id, family, precision, quick, make)."""
    out: list[tuple[str, str, str, bool, Callable[[ModelWriter], Any]]] = []

    seen: dict[tuple[str, str], int] = {}

    def add(family: str, prec: str, _: int, ident: str, make: Callable[[ModelWriter], Any]) -> None:
        i = seen[family, prec] = seen.get((family, prec), -1) + 1  # the shape's place among its op type's
        out.append((f"{family}-{prec}-{ident}", family, prec, i % QUICK_EVERY == 0 or i == 2, make))

    for prec in PRECISIONS:
        for i, (h, cin, cout, k, s) in enumerate(CONVS):
            act = ACTS[i % 3]
            add("CONV_2D", prec, i, _name(h, cin, cout, k, s, act), conv(h, cin, cout, k, s, act, prec))
        for i, (h, cin, cout) in enumerate(QD8_POINTWISES if prec == "hybrid" else ()):
            add("CONV_2D", prec, i, _name(h, cin, cout, 1, 1, ACTS[i % 3]), conv(h, cin, cout, 1, 1, ACTS[i % 3], prec))
        for i, (h, cin, cout, k, s) in enumerate(WIDE_CONVS):  # the full suite only: megabytes of weights each
            ident = f"CONV_2D-{prec}-{_name(h, cin, cout, k, s, ACTS[i % 3])}"
            out.append((ident, "CONV_2D", prec, False, conv(h, cin, cout, k, s, ACTS[i % 3], prec)))
        for i, (h, c, k, s) in enumerate(DEPTHWISES):
            act = ACTS[(i + 1) % 3]
            add("DEPTHWISE_CONV_2D", prec, i, _name(h, c, k, s, act), depthwise(h, c, k, s, act, prec))
        for i, (h, c, g, k, s) in enumerate(GROUPED_CONVS):
            act = ACTS[i % 3]
            add("CONV_2D", prec, i, _name("g", h, c, g, k, s, act), grouped_conv(h, c, g, k, s, act, prec))
        for i, (h, c, k, s) in enumerate(WIDE_DEPTHWISES if prec != "hybrid" else ()):  # hybrid: the builtin
            act = ACTS[(i + 2) % 3]  # kernel, no cliff past 25 taps (its 3x3 law holds at 7x7 within 7%)
            add("DEPTHWISE_CONV_2D", prec, i, _name(h, c, k, s, act), depthwise(h, c, k, s, act, prec))
        for i, (m, k, n) in enumerate(FCS):
            act = ACTS[i % 2]
            add("FULLY_CONNECTED", prec, i, _name(m, k, n, act), fully_connected(m, k, n, act, prec))
        for i, (m, k, n) in enumerate(RNN_FCS):
            add("FULLY_CONNECTED", prec, i, _name(m, k, n, "NONE"), fully_connected(m, k, n, "NONE", prec))
    for prec in ("float32", "int8", "hybrid"):  # hybrid: XNNPACK's qd8 deconvolution (a dynamic-range model's)
        for i, (h, cin, cout, k, s) in enumerate(TCONVS):
            add("TRANSPOSE_CONV", prec, i, _name(h, cin, cout, k, s), transpose_conv(h, cin, cout, k, s, prec))
    for prec in ("float32", "int8"):
        for i, dims in enumerate(BMMS):
            add("BATCH_MATMUL", prec, i, _name(*dims), batch_matmul(*dims, prec))
        for j, op in enumerate(BINARY_FLOAT if prec == "float32" else BINARY_INT8):
            cases = [(a, a) for a in SHAPES[:5]] + list(BROADCASTS)
            for i, (a, b) in enumerate(cases):
                act = "RELU" if op in FUSABLE and i in (2, 3) else "NONE"  # a fused activation is a pass of its own
                add(op, prec, i + j, _name(a, b, act), binary(op, a, b, act, prec))
        for j, op in enumerate(UNARY_FLOAT if prec == "float32" else UNARY_INT8):
            for i, shape in enumerate(SHAPES[:5]):
                add(op, prec, i + j, _name(shape), unary(op, shape, prec))
        for i, (op, h, c, k, s, pad) in enumerate(POOLS):
            add(op, prec, i, _name(h, c, k, s, pad), pool(op, h, c, k, s, pad, prec))
        for i, (op, shape, axes) in enumerate(REDUCES):
            add(op, prec, i, _name(shape, axes), reduce(op, shape, axes, prec))
        for i, shape in enumerate(SOFTMAXES):
            add("SOFTMAX", prec, i, _name(shape), softmax(shape, prec))
        for i, (shape, parts, axis) in enumerate(CONCATS):
            add("CONCATENATION", prec, i, _name(shape, parts, axis), concatenation(shape, parts, axis, prec))
        for i, (op, shape, arg) in enumerate(LAYOUTS):
            add(op, prec, i, _name(shape, arg), layout(op, shape, arg, prec))
        for i, dims in enumerate(GATHERS):
            add("GATHER", prec, i, _name(*dims), gather(*dims, prec))
    for i, (op, shape) in enumerate(CONVERTS):
        add(op, "int8", i, _name(shape), convert(op, shape))
    standin_models(add)
    return out


# ---- the ops real models run that the families above miss (they were predicted by stand-in laws) ---------

def shape_op(op: str, dims: tuple[int, ...], prec: str) -> Callable[[ModelWriter], Any]:
    """One op of the shape arithmetic converters emit around a RESHAPE whose shape is computed (Keras
    ConvNeXt, EfficientNet, RNNs), on the builtin kernels: SHAPE of a [dims] activation; REDUCE_PROD of an
    int32 [dims[0]] vector; STRIDED_SLICE of one element of it; CONCATENATION of int32 vectors of sizes
    ``dims``; PACK of ``dims[0]`` int32 scalars; LESS, ADD (int32) or LOGICAL_AND (bool) of two scalars
    (a loop's counter); RESHAPE of an int32 scalar to [1]."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        if op == "SHAPE":
            x, y = _act(w, dims, prec), w.tensor((len(dims),), "int32")
            w.op(op, [x], [y], "ShapeOptions", outType=w.fb.TensorType.INT32)
            return [x], [y]
        if op == "CONCATENATION":
            xs = [w.tensor((d,), "int32") for d in dims]
            y = w.tensor((sum(dims),), "int32")
            w.op(op, xs, [y], "ConcatenationOptions", axis=0)
            return xs, [y]
        if op == "PACK":
            xs = [w.tensor((), "int32") for _ in range(dims[0])]
            y = w.tensor((dims[0],), "int32")
            w.op(op, xs, [y], "PackOptions", valuesCount=dims[0], axis=0)
            return xs, [y]
        if op in ("LESS", "ADD", "LOGICAL_AND"):
            dtype = "bool" if op == "LOGICAL_AND" else "int32"
            a, b = w.tensor((), dtype), w.tensor((), dtype)
            y = w.tensor((), "int32" if op == "ADD" else "bool")
            w.op(op, [a, b], [y], {"ADD": "AddOptions", "LESS": "LessOptions", "LOGICAL_AND": "LogicalAndOptions"}[op])
            return [a, b], [y]
        x = w.tensor(dims, "int32")
        if op == "REDUCE_PROD":
            y = w.tensor((), "int32")
            w.op(op, [x, w.tensor((1,), "int32", np.array([0]))], [y], "ReducerOptions", keepDims=False)
        elif op == "STRIDED_SLICE":
            y = w.tensor((), "int32")
            begin, end = w.tensor((1,), "int32", np.array([1])), w.tensor((1,), "int32", np.array([2]))
            w.op(op, [x, begin, end, w.tensor((1,), "int32", np.array([1]))], [y], "StridedSliceOptions",
                 shrinkAxisMask=1)
        else:  # RESHAPE of a scalar
            y = w.tensor((1,), "int32")
            w.op(op, [x, w.tensor((1,), "int32", np.array([1]))], [y], "ReshapeOptions")
        return [x], [y]
    return make


def rsqrt_int8(shape: tuple[int, ...]) -> Callable[[ModelWriter], Any]:
    """RSQRT of an int8 activation whose zero point is its lowest value (the kernel refuses negative inputs)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = w.tensor(shape, "int8", quant=Quant.of(IN_SCALE, -128))
        y = _act(w, shape, "int8", out=True)
        w.op("RSQRT", [x], [y])
        return [x], [y]
    return make


def gather_step(shape: tuple[int, ...], prec: str) -> Callable[[ModelWriter], Any]:
    """GATHER of one row (a constant scalar index) of an activation: a converted RNN takes its time step this way."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, shape, prec)
        y = _act(w, shape[1:], prec)
        w.op("GATHER", [x, w.tensor((), "int32", np.array(shape[0] // 2))], [y], "GatherOptions", axis=0, batchDims=0)
        return [x], [y]
    return make


def split(shape: tuple[int, int], parts: int, prec: str) -> Callable[[ModelWriter], Any]:
    """SPLIT of a [1, n] activation into ``parts`` along its last axis (an LSTM cell's four gates)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, shape, prec)
        ys = [_act(w, (shape[0], shape[1] // parts), prec) for _ in range(parts)]
        w.op("SPLIT", [w.tensor((), "int32", np.array(1)), x], ys, "SplitOptions", numSplits=parts)
        return [x], ys
    return make


# (op, dims, precision): the shape arithmetic (precision: SHAPE's input's; the others are int32 or bool), the
# int8 layer norm's SQUARED_DIFFERENCE and RSQRT and the int8 GELU (builtin kernels: XNNPACK takes none of
# them), and an LSTM's SPLIT, at the shapes of Keras ConvNeXt-tiny, EfficientNet, MobileNetV3, the encoder,
# the ViT and the RNNs of benchmarks/predict_accuracy.py
SHAPE_OPS = (("SHAPE", (1, 32, 32, 96), "float32"), ("SHAPE", (1, 32), "float32"), ("SHAPE", (1, 32, 32, 96), "int8"),
             ("SHAPE", (1, 192), "int8"), ("REDUCE_PROD", (3,), "int32"), ("REDUCE_PROD", (2,), "int32"),
             ("STRIDED_SLICE", (2,), "int32"), ("STRIDED_SLICE", (4,), "int32"), ("CONCATENATION", (3, 1), "int32"),
             ("CONCATENATION", (1, 2), "int32"), ("PACK", (2,), "int32"), ("PACK", (4,), "int32"),
             ("LESS", (), "int32"), ("ADD", (), "int32"), ("LOGICAL_AND", (), "bool"), ("RESHAPE", (), "int32"))
LAYER_NORMS_INT8 = (((1, 32, 32, 96), (1, 32, 32, 1)), ((1, 64, 128), (1, 64, 1)), ((1, 144, 192), (1, 144, 1)),
                    ((1, 8, 8, 384), (1, 8, 8, 1)))
GELUS_INT8 = ((1, 32, 32, 384), (1, 64, 512), (1, 144, 768), (1, 8, 8, 1536))
SPLITS = (((1, 512), 4), ((1, 256), 4), ((1, 384), 3))
GATHER_STEPS = ((64, 1, 64), (64, 1, 128), (16, 1, 32))


def standin_models(add: Callable[[str, str, int, str, Callable[[ModelWriter], Any]], None]) -> None:
    """Add the points of the op types and precisions real models run that no other family times (SHAPE_OPS,
    LAYER_NORMS_INT8, GELUS_INT8, SPLITS, GATHER_STEPS) with ``add`` (``models``' adder)."""
    for i, (op, dims, prec) in enumerate(SHAPE_OPS):
        add(op, prec, i, _name(dims or "scalar"), shape_op(op, dims, prec))
    for i, (a, b) in enumerate(LAYER_NORMS_INT8):
        add("SQUARED_DIFFERENCE", "int8", i, _name(a, b), binary("SQUARED_DIFFERENCE", a, b, "NONE", "int8"))
        add("RSQRT", "int8", i, _name(b), rsqrt_int8(b))
    for i, shape in enumerate(GELUS_INT8):
        add("GELU", "int8", i, _name(shape), unary("GELU", shape, "int8"))
    for i, (shape, parts) in enumerate(SPLITS):
        add("SPLIT", "float32", i, _name(shape, parts), split(shape, parts, "float32"))
    for i, shape in enumerate(GATHER_STEPS):
        add("GATHER", "float32", i, _name("step", shape), gather_step(shape, "float32"))


def suite(quick: bool = False, xnnpack: bool = True) -> list[SuitePoint]:
    """The calibration points.

    With ``xnnpack`` (the configuration calibrated has XNNPACK on), every model is timed with the
    delegate, and also without it (the builtin kernels, for the ops a real model keeps off the
    delegate) for every model in the full suite and for the quick models' first shape per family in
    ``quick``. Without ``xnnpack`` every model is timed once, on the builtin kernels. The overhead
    chains come in both configurations.
    """
    points: list[SuitePoint] = []
    lead = f"FULLY_CONNECTED-hybrid-{_name(*AFTER_QD8, 'NONE')}@x"
    for ident, family, prec, in_quick, make in models():
        if quick and not in_quick:
            continue
        if xnnpack and (family, prec) in AFTER_QD8_OPS:  # also timed as in a model, after the lead
            points.append(SuitePoint(f"{ident}-after-qd8", family, prec, True, in_quick, after_qd8(make), lead))
        if xnnpack:
            points.append(SuitePoint(ident, family, prec, True, in_quick, make))
            points.append(SuitePoint(ident, family, prec, False, in_quick, make))
        else:
            points.append(SuitePoint(ident, family, prec, False, in_quick, make))
    for n in CHAIN_LENGTHS:
        for delegate in ((True, False) if xnnpack else (False,)):
            points.append(SuitePoint(f"{OVERHEAD}-add{n}", OVERHEAD, "float32", delegate, True, chain(n)))
    for trips in LOOP_TRIPS:  # the WHILE never runs on the delegate: timed once, in the configuration calibrated
        for n in LOOP_SIZES:
            in_quick = trips in LOOP_TRIPS[1::2] and n in LOOP_SIZES[::2]
            if in_quick or not quick:
                points.append(SuitePoint(f"{LOOP}-{trips}x{n}", LOOP, "float32", xnnpack, in_quick, loop(trips, n)))
    for n in GROWING_OPS:
        points.append(SuitePoint(f"{LOOP}-growing-{n}", LOOP, "float32", xnnpack, True, growing_loop(n)))
    return points


# ---- the points timed again in whole-model conditions, and the drift reference --------------------------

# Timed cold too (an eviction buffer read between the timed runs, latency/calibrate.py): the contractions and
# an element-wise op, in float32 and int8, on the delegate: weights from a few hundred bytes to 9 MB
COLD_FAMILIES = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD")
COLD_PRECISIONS = ("float32", "int8")
# The drift reference: the first shape of each (family, precision), timed with the delegate
REFERENCE_OPS = (("CONV_2D", "float32"), ("DEPTHWISE_CONV_2D", "float32"), ("FULLY_CONNECTED", "float32"),
                 ("ADD", "float32"), ("CONV_2D", "int8"))


def cold_points(points: list[SuitePoint]) -> list[SuitePoint]:
    """The points of ``points`` that are timed cold as well (COLD_FAMILIES, COLD_PRECISIONS, delegate runs; in
    a --quick suite every other one of them), and the overhead chains in the configuration calibrated (with
    the delegate when any point has it): their state without data, per invoke and per op."""
    chosen = [p for p in points if p.delegate and p.family in COLD_FAMILIES and p.precision in COLD_PRECISIONS]
    quick = bool(points) and all(p.quick for p in points)
    delegate = any(p.delegate for p in points)
    chains = [p for p in points if p.family == OVERHEAD and p.delegate == delegate]
    return (chosen[::2] if quick else chosen) + chains


# The streaming chains (calibrate.py): float32 1x1 convolutions of 4 MiB of weights each, int8 3x3 ones of 256
# channels at 8x8 (0.56 MiB each, as a ResNet's or an Inception's int8 layers) ((h, channels, k)), in chains whose
# weights add up to these multiples of the last-level cache (STREAM_QUICK in --quick), at most STREAM_MAX_BYTES;
# and one such convolution alone. A whole model reads every weight once per inference: these time that, where
# the cold points time one op after an eviction buffer. In int8, ops of a model's size: at 24 MiB in all, int8
# chains of 4 MiB 1x1 convolutions cost 14.9 us per MiB more than their ops alone, of 1 MiB ones 18.5, of
# 0.56 MiB 3x3 ones 20.0 (each op pays its own start from memory), and ResNet50 in int8 about 20. In float32 the
# 4 MiB chains already priced ResNet50, InceptionV3 and Xception within 7% (and the 2.25 MiB 3x3 ones above them).
STREAM = "stream"
STREAM_SHAPES = {"float32": (4, 1024, 1), "int8": (8, 256, 3)}  # (h, channels, k): 4 MiB, 0.56 MiB an op
STREAM_FACTORS = (0.5, 1.0, 2.0, 3.0)
STREAM_QUICK = (1.0, 3.0)
STREAM_MAX_BYTES = 192 * 2**20


def stream_points(caches: Mapping[str, int], quick: bool = False, xnnpack: bool = True) -> list[SuitePoint]:
    """The streaming chains for a machine with cache sizes ``caches`` (none without an L3 size), with the
    delegate when ``xnnpack``: per precision, one op alone and the chains of STREAM_FACTORS x the L3."""
    l3 = int(caches.get("L3", 0) or 0)
    if l3 <= 0:
        return []
    out = []
    for prec, (h, c, k) in STREAM_SHAPES.items():
        per_op = c * c * k * k * (1 if prec == "int8" else 4)
        counts = sorted({1} | {max(2, min(round(f * l3 / per_op), STREAM_MAX_BYTES // per_op))
                               for f in (STREAM_QUICK if quick else STREAM_FACTORS)})
        out += [SuitePoint(f"{STREAM}-{prec}-{n}x{_name(h, c, k)}", STREAM, prec, xnnpack, quick,
                           stream(n, h, c, prec, k)) for n in counts]
    return out


# One-row FULLY_CONNECTED layers (a classifier's head, a decoder's step) whose weights are these multiples of the
# L2 and of the L3 (GEMV_QUICK in --quick; at most STREAM_MAX_BYTES), per precision, on the delegate and off it:
# such a layer reads each weight once, at the speed of the cache level that holds them, which the FCS above
# (up to 8 MiB) cannot tell apart (features.op_features, params_past_l2 and params_past_l3).
GEMV = "gemv"
GEMV_FACTORS = (("L2", 0.5), ("L2", 2.0), ("L3", 0.25), ("L3", 1.0), ("L3", 2.0))
GEMV_QUICK = (("L2", 2.0), ("L3", 1.0))
GEMV_PRECISIONS = ("float32", "int8", "hybrid")


def gemv_points(caches: Mapping[str, int], quick: bool = False, xnnpack: bool = True) -> list[SuitePoint]:
    """The one-row FULLY_CONNECTED points for a machine with cache sizes ``caches`` (GEMV_FACTORS; none of a
    cache level whose size is unknown): [1, k] x [k, n], k a multiple of 64, n = k (and k - 24 in float32), with
    the delegate and without it when ``xnnpack``, else without it."""
    out = []
    for prec in GEMV_PRECISIONS:
        per_param = 4 if prec == "float32" else 1
        sizes = sorted({min(int(f * int(caches.get(level, 0) or 0)), STREAM_MAX_BYTES)
                        for level, f in (GEMV_QUICK if quick else GEMV_FACTORS)} - {0})
        for size in sizes:
            k = max(64, round(math.isqrt(size // per_param) / 64) * 64)
            # float32 also with 24 outputs fewer (8 past a multiple of 32): the outputs of a classifier's head
            # (1,000), which XNNPACK may run by its narrower nr2 kernel (features.op_features, params_nr2)
            for n in ((k, k - 24) if prec == "float32" else (k,)):
                ident = f"FULLY_CONNECTED-{prec}-{GEMV}-{k}x{n}"
                for delegate in ((True, False) if xnnpack else (False,)):
                    out.append(SuitePoint(ident, "FULLY_CONNECTED", prec, delegate, quick,
                                          fully_connected(1, k, n, "NONE", prec)))
    return out


def reference_points(xnnpack: bool = True) -> list[SuitePoint]:
    """The drift reference (REFERENCE_OPS): a few fixed points, about a second of timing, the same in every suite."""
    out = []
    for family, prec in REFERENCE_OPS:
        for p in suite(True, xnnpack):
            if p.family == family and p.precision == prec and p.delegate == xnnpack:
                out.append(p)
                break
    return out
