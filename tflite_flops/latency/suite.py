"""The calibration suite: single-op models (and chains of tiny ops for the overheads) written without TensorFlow.

Every op family that matters in real models (and a WHILE's own loop cost), at the shapes of real models
(from a few hundred elements to MobileNet and ResNet layers), in each precision (float32; float16 weights behind a DEQUANTIZE;
dynamic-range int8 weights with float activations, "hybrid"; full int8), with fused activations.
A :class:`SuitePoint` names one model and says whether it is timed with XNNPACK on (``delegate``);
:func:`build` writes it with :class:`~tflite_flops.measure.model_writer.ModelWriter`. Which law a point
feeds is not decided here: calibration analyses each model with the same static analysis (placement,
precision) the prediction uses.

``suite(quick)`` is the list; ``quick`` keeps about a third of the shapes of every family and precision.
Points are identified by ``SuitePoint.key`` (model id and ``@x``/``@b`` for XNNPACK on/off), which keys
the resumable side file and the files of a phone pack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..measure.model_writer import ACTIVATIONS, PADDING, ModelWriter, Quant

DESCRIPTION = "tflite_flops calibration suite"
PRECISIONS = ("float32", "fp16", "hybrid", "int8")
LOOP = "WHILE"  # the family of the WHILE points (a loop with a trivial body): the WHILE's own cost per trip
OVERHEAD = "overhead"  # the family of the chains of tiny ops that measure the per-invoke and per-partition costs
CHAIN_LENGTHS = (1, 2, 4, 8, 16)
LOOP_TRIPS, LOOP_SIZES = (1, 4, 16, 64), (4, 1024, 16384)  # the WHILE points: trips, loop-variable elements
GROWING_OPS, GROWING_TRIPS, GROWING_WIDTH = (1, 8, 32), 8, 16  # the loops whose bodies re-prepare every trip
IN_SCALE, OUT_SCALE, W_SCALE = 0.05, 0.1, 0.02


@dataclass(frozen=True)
class SuitePoint:
    """One calibration model: ``id`` names the model, ``delegate`` the timing configuration."""

    id: str
    family: str  # the op type it calibrates, or OVERHEAD
    precision: str  # one of PRECISIONS: how the model is written (the law's precision comes from the analysis)
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


# ---- tensors per precision ------------------------------------------------------------------------------

def _rng(*salt: int) -> np.random.Generator:
    return np.random.default_rng(list(salt) or [0])


def _act(w: ModelWriter, shape: tuple[int, ...], prec: str, out: bool = False) -> int:
    """An activation tensor: int8 in the int8 suite, float32 otherwise."""
    if prec == "int8":
        return w.tensor(shape, "int8", quant=Quant.of(OUT_SCALE if out else IN_SCALE, -10 if out else 0))
    return w.tensor(shape, "float32")


def _weights(w: ModelWriter, shape: tuple[int, ...], prec: str, axis: int) -> int:
    """A constant weight tensor in ``prec``: float32; float16 behind a DEQUANTIZE; int8 per channel along ``axis``."""
    n = int(np.prod(shape))
    values = _rng(n, len(shape)).uniform(-1, 1, n).astype(np.float32)
    if prec == "float32":
        return w.tensor(shape, "float32", values)
    if prec == "fp16":
        half = w.tensor(shape, "float16", values.astype(np.float16))
        full = w.tensor(shape, "float32")
        w.op("DEQUANTIZE", [half], [full])
        return full
    q = np.clip(np.round(values * 127), -127, 127).astype(np.int8)
    return w.tensor(shape, "int8", q, quant=Quant.of([W_SCALE] * shape[axis], 0, axis))


def _bias(w: ModelWriter, n: int, prec: str) -> int:
    """The bias of a contraction: int32 (scale = input scale x weight scale) in int8, else float32 (float16 in fp16)."""
    if prec == "int8":
        return w.tensor((n,), "int32", np.arange(n) % 7, quant=Quant.of([IN_SCALE * W_SCALE] * n, 0))
    if prec == "fp16":
        half = w.tensor((n,), "float16", (np.arange(n) % 7 / 10).astype(np.float16))
        full = w.tensor((n,), "float32")
        w.op("DEQUANTIZE", [half], [full])
        return full
    return w.tensor((n,), "float32", np.arange(n) % 7 / 10)


def _out_hw(h: int, k: int, s: int, padding: str) -> int:
    return -(-h // s) if padding == "SAME" else (h - k) // s + 1


# ---- models ---------------------------------------------------------------------------------------------

def conv(h: int, cin: int, cout: int, k: int, s: int, act: str, prec: str) -> Callable[[ModelWriter], Any]:
    """CONV_2D, SAME padding: [1,h,h,cin] * [cout,k,k,cin] -> [1,ho,ho,cout]."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, (1, h, h, cin), prec)
        wt = _weights(w, (cout, k, k, cin), prec, 0)
        b = _bias(w, cout, prec)
        ho = _out_hw(h, k, s, "SAME")
        y = _act(w, (1, ho, ho, cout), prec, out=True)
        w.op("CONV_2D", [x, wt, b], [y], "Conv2DOptions", padding=PADDING["SAME"], strideW=s, strideH=s,
             fusedActivationFunction=ACTIVATIONS[act], dilationWFactor=1, dilationHFactor=1)
        return [x], [y]
    return make


def depthwise(h: int, c: int, k: int, s: int, act: str, prec: str) -> Callable[[ModelWriter], Any]:
    """DEPTHWISE_CONV_2D, multiplier 1, SAME padding: [1,h,h,c] * [1,k,k,c] -> [1,ho,ho,c]."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, (1, h, h, c), prec)
        wt = _weights(w, (1, k, k, c), prec, 3)
        b = _bias(w, c, prec)
        ho = _out_hw(h, k, s, "SAME")
        y = _act(w, (1, ho, ho, c), prec, out=True)
        w.op("DEPTHWISE_CONV_2D", [x, wt, b], [y], "DepthwiseConv2DOptions", padding=PADDING["SAME"], strideW=s,
             strideH=s, depthMultiplier=1, fusedActivationFunction=ACTIVATIONS[act], dilationWFactor=1,
             dilationHFactor=1)
        return [x], [y]
    return make


def after_qd8(make_op: Callable[[ModelWriter], Any]) -> Callable[[ModelWriter], Any]:
    """``make_op``'s model with AFTER_QD8's dynamically quantized FULLY_CONNECTED run first, on an input of its own:
    what LiteRT's builtin hybrid kernels meet inside a dynamic-range model, where XNNPACK's qd8 ops run
    between them (docs/notes/predict-hybrid-rnn.md: a builtin hybrid DEPTHWISE_CONV_2D takes 2.9x longer
    after one, whatever it reads)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        lead_in, lead_out = fully_connected(*AFTER_QD8, "NONE", "hybrid")(w)
        inputs, outputs = make_op(w)
        return [*lead_in, *inputs], [*lead_out, *outputs]
    return make


def fully_connected(m: int, k: int, n: int, act: str, prec: str) -> Callable[[ModelWriter], Any]:
    """FULLY_CONNECTED: [m,k] x [n,k]^T + b -> [m,n]."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, (m, k), prec)
        wt = _weights(w, (n, k), prec, 0)
        b = _bias(w, n, prec)
        y = _act(w, (m, n), prec, out=True)
        w.op("FULLY_CONNECTED", [x, wt, b], [y], "FullyConnectedOptions", fusedActivationFunction=ACTIVATIONS[act])
        return [x], [y]
    return make


def batch_matmul(b: int, m: int, k: int, n: int, prec: str) -> Callable[[ModelWriter], Any]:
    """BATCH_MATMUL of two activations: [b,m,k] x [b,k,n] -> [b,m,n] (attention's QK^T and AV)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x, y = _act(w, (b, m, k), prec), _act(w, (b, k, n), prec)
        z = _act(w, (b, m, n), prec, out=True)
        w.op("BATCH_MATMUL", [x, y], [z], "BatchMatMulOptions", adjX=False, adjY=False)
        return [x, y], [z]
    return make


def transpose_conv(h: int, cin: int, cout: int, k: int, s: int, prec: str) -> Callable[[ModelWriter], Any]:
    """TRANSPOSE_CONV, SAME padding: [1,h,h,cin] -> [1,h*s,h*s,cout] with weights [cout,k,k,cin]."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        ho = h * s
        shape = w.tensor((4,), "int32", np.array([1, ho, ho, cout]))
        wt = _weights(w, (cout, k, k, cin), prec, 0)
        x = _act(w, (1, h, h, cin), prec)
        y = _act(w, (1, ho, ho, cout), prec, out=True)
        w.op("TRANSPOSE_CONV", [shape, wt, x], [y], "TransposeConvOptions", padding=PADDING["SAME"], strideW=s,
             strideH=s)
        return [x], [y]
    return make


BINARY_OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions", "DIV": "DivOptions",
                  "MAXIMUM": "MaximumMinimumOptions", "MINIMUM": "MaximumMinimumOptions",
                  "SQUARED_DIFFERENCE": "SquaredDifferenceOptions"}
FUSABLE = ("ADD", "SUB", "MUL", "DIV")


def binary(op: str, a: tuple[int, ...], b: tuple[int, ...], act: str, prec: str) -> Callable[[ModelWriter], Any]:
    """An element-wise binary op of two activations, ``b`` broadcast against ``a``."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x, y = _act(w, a, prec), _act(w, b, prec)
        z = _act(w, a, prec, out=True)
        fields = {"fusedActivationFunction": ACTIVATIONS[act]} if op in FUSABLE else {}
        w.op(op, [x, y], [z], BINARY_OPTIONS[op], **fields)
        return [x, y], [z]
    return make


UNARY_OPTIONS = {"LEAKY_RELU": ("LeakyReluOptions", {"alpha": 0.2}), "GELU": ("GeluOptions", {"approximate": False}),
                 "HARD_SWISH": ("HardSwishOptions", {}), "EXP": ("ExpOptions", {}), "ABS": ("AbsOptions", {}),
                 "NEG": ("NegOptions", {}), "SQUARE": ("SquareOptions", {})}


INT8_OUTPUT = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}  # tflite/kernels/activations.cc Prepare


def unary(op: str, shape: tuple[int, ...], prec: str) -> Callable[[ModelWriter], Any]:
    """An element-wise unary op (an activation or a math function)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, shape, prec)
        fixed = INT8_OUTPUT.get(op) if prec == "int8" else None  # what the builtin kernels require
        y = w.tensor(shape, "int8", quant=Quant.of(*fixed)) if fixed else _act(w, shape, prec, out=True)
        options, fields = UNARY_OPTIONS.get(op, (None, {}))
        w.op(op, [x], [y], options, **fields)
        return [x], [y]
    return make


def pool(op: str, h: int, c: int, k: int, s: int, padding: str, prec: str) -> Callable[[ModelWriter], Any]:
    """MAX_POOL_2D / AVERAGE_POOL_2D of a [1,h,h,c] activation."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, (1, h, h, c), prec)
        ho = _out_hw(h, k, s, padding)
        y = _act(w, (1, ho, ho, c), prec, out=True) if op == "AVERAGE_POOL_2D" else w.tensor(
            (1, ho, ho, c), "int8" if prec == "int8" else "float32", quant=Quant.of(IN_SCALE) if prec == "int8" else None)
        w.op(op, [x], [y], "Pool2DOptions", padding=PADDING[padding], strideW=s, strideH=s, filterWidth=k,
             filterHeight=k)
        return [x], [y]
    return make


def reduce(op: str, shape: tuple[int, ...], axes: tuple[int, ...], prec: str) -> Callable[[ModelWriter], Any]:
    """MEAN / SUM / REDUCE_MAX over ``axes``, keeping the dims."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, shape, prec)
        ax = w.tensor((len(axes),), "int32", np.array(axes))
        # REDUCE_MAX keeps its input's quantization (tflite/kernels/reduce.cc EvalType)
        y = _act(w, tuple(1 if i in axes else d for i, d in enumerate(shape)), prec, out=op != "REDUCE_MAX")
        w.op(op, [x, ax], [y], "ReducerOptions", keepDims=True)
        return [x], [y]
    return make


def softmax(shape: tuple[int, ...], prec: str) -> Callable[[ModelWriter], Any]:
    """SOFTMAX over the last axis (int8 output: scale 1/256, zero point -128, as the kernels require)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, shape, prec)
        y = w.tensor(shape, "int8", quant=Quant.of(1 / 256, -128)) if prec == "int8" else w.tensor(shape)
        w.op("SOFTMAX", [x], [y], "SoftmaxOptions", beta=1.0)
        return [x], [y]
    return make


def concatenation(shape: tuple[int, ...], parts: int, axis: int, prec: str) -> Callable[[ModelWriter], Any]:
    """CONCATENATION of ``parts`` activations of ``shape`` along ``axis`` (same quantization: a copy)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        xs = [_act(w, shape, prec) for _ in range(parts)]
        out = tuple(d * parts if i == axis else d for i, d in enumerate(shape))
        y = _act(w, out, prec)
        w.op("CONCATENATION", xs, [y], "ConcatenationOptions", axis=axis)
        return xs, [y]
    return make


def layout(op: str, shape: tuple[int, ...], arg: Any, prec: str) -> Callable[[ModelWriter], Any]:
    """A data-movement op: RESHAPE (arg: new shape), TRANSPOSE (perm), PAD (pad per side),
    STRIDED_SLICE / SLICE (arg: the kept size per dim, from 0), RESIZE_BILINEAR (new h)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, shape, prec)
        if op == "RESHAPE":
            out, consts, options = tuple(arg), [w.tensor((len(arg),), "int32", np.array(arg))], ("ReshapeOptions", {})
        elif op == "TRANSPOSE":
            out = tuple(shape[p] for p in arg)
            consts, options = [w.tensor((len(arg),), "int32", np.array(arg))], ("TransposeOptions", {})
        elif op == "PAD":
            pads = [[0, 0]] + [[arg, arg]] * (len(shape) - 2) + [[0, 0]]
            out = tuple(d + sum(p) for d, p in zip(shape, pads))
            consts, options = [w.tensor((len(shape), 2), "int32", np.array(pads))], ("PadOptions", {})
        elif op in ("STRIDED_SLICE", "SLICE"):
            out = tuple(arg)
            begin = w.tensor((len(shape),), "int32", np.zeros(len(shape)))
            size = w.tensor((len(shape),), "int32", np.array(arg))
            ones = w.tensor((len(shape),), "int32", np.ones(len(shape)))
            consts = [begin, size, ones] if op == "STRIDED_SLICE" else [begin, size]
            options = ("StridedSliceOptions", {}) if op == "STRIDED_SLICE" else ("SliceOptions", {})
        else:  # RESIZE_BILINEAR
            out = (shape[0], arg, arg, shape[3])
            consts = [w.tensor((2,), "int32", np.array([arg, arg]))]
            options = ("ResizeBilinearOptions", {"halfPixelCenters": True})
        y = _act(w, out, prec)
        w.op(op, [x, *consts], [y], options[0], **options[1])
        return [x], [y]
    return make


def gather(rows: int, width: int, count: int, prec: str) -> Callable[[ModelWriter], Any]:
    """GATHER of ``count`` rows of a constant [rows, width] table (an embedding lookup)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        table = _rng(rows, width).uniform(-1, 1, (rows, width))
        if prec == "int8":
            params = w.tensor((rows, width), "int8", np.round(table * 100), quant=Quant.of(IN_SCALE))
        else:
            params = w.tensor((rows, width), "float32", table)
        idx = w.tensor((count,), "int32")
        y = w.tensor((count, width), "int8" if prec == "int8" else "float32",
                     quant=Quant.of(IN_SCALE) if prec == "int8" else None)
        w.op("GATHER", [params, idx], [y], "GatherOptions", axis=0, batchDims=0)
        return [idx], [y]
    return make


def convert(op: str, shape: tuple[int, ...]) -> Callable[[ModelWriter], Any]:
    """QUANTIZE float32 -> int8 or DEQUANTIZE int8 -> float32 of an activation."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        f, q = w.tensor(shape), w.tensor(shape, "int8", quant=Quant.of(IN_SCALE))
        x, y = (f, q) if op == "QUANTIZE" else (q, f)
        w.op(op, [x], [y])
        return [x], [y]
    return make


def chain(n: int) -> Callable[[ModelWriter], Any]:
    """``n`` ADDs of 4 float32 elements in a row: the per-invoke and per-partition overheads."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = w.tensor((1, 4))
        c = w.tensor((1, 4), "float32", np.full(4, 0.5))
        cur = x
        for _ in range(n):
            nxt = w.tensor((1, 4))
            w.op("ADD", [cur, c], [nxt], "AddOptions")
            cur = nxt
        return [x], [cur]
    return make


def loop(trips: int, n: int) -> Callable[[ModelWriter], Any]:
    """A WHILE of ``trips`` trips with a trivial body: loop variables (a counter, ``n`` float32 elements);
    the cond is ``LESS(i, trips)``, the body ``i + 1`` and ``v + 0.5`` (a new value, as a real body writes
    its loop variables). The walk infers the trip count from this pattern (``walk.infer_trip_count``)."""
    def variables(w: ModelWriter) -> list[int]:
        return [w.tensor((), "int32"), w.tensor((1, n))]

    def cond(w: ModelWriter) -> tuple[list[int], list[int]]:
        i, v = variables(w)
        bound, less = w.tensor((), "int32", np.array(trips)), w.tensor((), "bool")
        w.op("LESS", [i, bound], [less])
        return [i, v], [less]

    def body(w: ModelWriter) -> tuple[list[int], list[int]]:
        i, v = variables(w)
        one, half = w.tensor((), "int32", np.array(1)), w.tensor((1, n), "float32", np.full(n, 0.5))
        i2, v2 = variables(w)
        w.op("ADD", [i, one], [i2], "AddOptions")
        w.op("ADD", [v, half], [v2], "AddOptions")
        return [i, v], [i2, v2]

    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        c, b = w.subgraph(cond, "cond"), w.subgraph(body, "body")
        start, x = w.tensor((), "int32", np.array(0)), w.tensor((1, n))
        i, y = variables(w)
        w.op("WHILE", [start, x], [i, y], "WhileOptions", condSubgraphIndex=c, bodySubgraphIndex=b)
        return [x], [y]
    return make


def growing_loop(n: int, trips: int = GROWING_TRIPS, width: int = GROWING_WIDTH) -> Callable[[ModelWriter], Any]:
    """A WHILE of ``trips`` trips whose body writes row ``i`` of a [trips, width] buffer as a converted
    Keras RNN writes its output sequence: the rows before ``i`` and after it are SLICEs whose sizes follow
    the counter (outputs of unknown declared rows: they change shape every trip), concatenated around the
    new row, which ``n`` MULs make from the other loop variable. The body runs ``Eval_dynamic`` and
    re-prepares every trip what runs after the SLICEs: with XNNPACK, the partition of the MULs and the
    CONCATENATION (``predict.loop_reprepare``)."""
    def variables(w: ModelWriter) -> list[int]:
        return [w.tensor((), "int32"), w.tensor((1, width)), w.tensor((trips, width))]

    def cond(w: ModelWriter) -> tuple[list[int], list[int]]:
        i, v, rows = variables(w)
        bound, less = w.tensor((), "int32", np.array(trips)), w.tensor((), "bool")
        w.op("LESS", [i, bound], [less])
        return [i, v, rows], [less]

    def index(w: ModelWriter, i: int, then: int) -> int:
        """[i, then]: a slice's begin or size made from the counter."""
        one = w.tensor((1,), "int32")
        w.op("RESHAPE", [i, w.tensor((1,), "int32", np.array([1]))], [one])
        out = w.tensor((2,), "int32")
        w.op("CONCATENATION", [one, w.tensor((1,), "int32", np.array([then]))], [out], "ConcatenationOptions", axis=0)
        return out

    def body(w: ModelWriter) -> tuple[list[int], list[int]]:
        i, v, rows = variables(w)
        i2 = w.tensor((), "int32")
        w.op("ADD", [i, w.tensor((), "int32", np.array(1))], [i2], "AddOptions")
        cur = v
        for _ in range(n):
            nxt = w.tensor((1, width))
            w.op("MUL", [cur, w.tensor((1, width), "float32", np.full((1, width), 0.5))], [nxt], "MulOptions")
            cur = nxt
        before, after = w.tensor((1, width), signature=(-1, width)), w.tensor((1, width), signature=(-1, width))
        w.op("SLICE", [rows, w.tensor((2,), "int32", np.array([0, 0])), index(w, i, width)], [before])
        w.op("SLICE", [rows, index(w, i2, 0), w.tensor((2,), "int32", np.array([-1, width]))], [after])
        out = w.tensor((trips, width))
        w.op("CONCATENATION", [before, cur, after], [out], "ConcatenationOptions", axis=0)
        return [i, v, rows], [i2, cur, out]

    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        c, b = w.subgraph(cond, "cond"), w.subgraph(body, "body")
        start, x = w.tensor((), "int32", np.array(0)), w.tensor((1, width))
        rows = w.tensor((trips, width), "float32", np.zeros((trips, width)))
        i, y, out = variables(w)
        w.op("WHILE", [start, x, rows], [i, y, out], "WhileOptions", condSubgraphIndex=c, bodySubgraphIndex=b)
        return [x], [out]
    return make


# ---- the suite ------------------------------------------------------------------------------------------

ACTS = ("NONE", "RELU", "RELU6")
# (h, cin, cout, k, stride): stems, pointwise and 3x3 layers of MobileNet/ResNet-sized networks, and tiny ones
CONVS = ((56, 64, 64, 1, 1), (28, 64, 128, 3, 1), (8, 8, 8, 3, 1), (224, 3, 32, 3, 2), (14, 96, 576, 1, 1),
         (7, 512, 512, 3, 1), (32, 3, 16, 3, 2), (112, 32, 64, 1, 1), (14, 256, 256, 3, 1), (56, 24, 144, 1, 1),
         (7, 160, 960, 1, 1), (16, 16, 16, 3, 1), (56, 64, 128, 3, 2), (28, 32, 192, 1, 1), (4, 64, 32, 1, 1),
         (56, 64, 64, 3, 1), (14, 256, 512, 1, 1), (28, 128, 128, 3, 1), (112, 3, 16, 3, 2), (64, 3, 32, 7, 2),
         (96, 3, 24, 3, 2), (32, 8, 16, 3, 1), (16, 4, 8, 3, 1), (112, 3, 64, 7, 2))
DEPTHWISES = ((56, 144, 3, 1), (14, 576, 3, 1), (8, 8, 3, 1), (112, 32, 3, 1), (28, 144, 5, 2), (7, 960, 3, 1),
              (112, 96, 3, 2), (16, 16, 3, 1), (28, 192, 3, 1), (14, 480, 5, 1), (56, 144, 3, 2), (32, 64, 3, 1))
FCS = ((1, 1024, 1000), (16, 256, 1024), (1, 64, 10), (64, 256, 256), (1, 256, 256), (128, 512, 512),
       (8, 16, 8), (1, 2048, 1000), (32, 128, 128), (1, 512, 10), (128, 256, 1024), (4, 1024, 1024),
       (1, 16, 10), (1, 128, 64), (2, 32, 16))
# The gate matmuls of Keras LSTM/GRU cells (one step: [1, inputs or units] x [4 or 3 x units, ...]): weights of
# 16-512 KiB read every trip of the loop, where the larger FCS above (MiB of weights) cost more per weight
RNN_FCS = ((1, 128, 512), (1, 64, 384), (1, 256, 1024), (1, 32, 128))
BMMS = ((4, 64, 64, 64), (8, 128, 64, 128), (1, 16, 16, 16), (8, 128, 128, 64), (2, 32, 32, 32), (12, 64, 64, 64),
        (4, 1, 16, 8), (8, 1, 32, 64), (2, 4, 8, 4), (4, 8, 16, 8))  # the last four: a small decoder's attention
TCONVS = ((16, 16, 8, 3, 2), (28, 64, 32, 3, 2), (8, 8, 8, 2, 2), (8, 16, 8, 3, 2), (14, 32, 32, 3, 2),
          (4, 8, 4, 3, 2), (32, 16, 16, 2, 2), (7, 128, 64, 4, 2))
SHAPES = ((1, 28, 28, 64), (1, 8, 8, 16), (1, 128, 256), (1, 112, 112, 32), (1, 56, 56, 64), (1, 16, 64))
BROADCASTS = (((1, 28, 28, 64), (1, 1, 1, 64)), ((1, 128, 256), (1, 1, 256)), ((1, 14, 14, 96), (1, 1, 1, 96)))
BINARY_FLOAT = ("ADD", "MUL", "SUB", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE")
BINARY_INT8 = ("ADD", "MUL", "SUB", "MAXIMUM", "MINIMUM")
UNARY_FLOAT = ("RELU", "RELU6", "LOGISTIC", "HARD_SWISH", "TANH", "GELU", "LEAKY_RELU", "EXP", "RSQRT", "SQRT",
               "ABS", "NEG", "SQUARE")
UNARY_INT8 = ("RELU", "RELU6", "LOGISTIC", "HARD_SWISH", "TANH", "LEAKY_RELU")
POOLS = (("MAX_POOL_2D", 112, 64, 3, 2, "SAME"), ("AVERAGE_POOL_2D", 7, 1280, 7, 7, "VALID"),
         ("MAX_POOL_2D", 8, 16, 2, 2, "VALID"), ("AVERAGE_POOL_2D", 28, 32, 2, 2, "VALID"),
         ("MAX_POOL_2D", 28, 64, 2, 2, "VALID"), ("AVERAGE_POOL_2D", 14, 256, 3, 1, "SAME"))
REDUCES = (("MEAN", (1, 7, 7, 1280), (1, 2)), ("MEAN", (1, 128, 256), (2,)), ("MEAN", (1, 8, 8, 16), (1, 2)),
           ("MEAN", (1, 28, 28, 64), (1, 2)), ("MEAN", (1, 16, 64), (2,)), ("SUM", (1, 128, 256), (2,)),
           ("REDUCE_MAX", (1, 128, 256), (2,)), ("MEAN", (1, 14, 14, 576), (1, 2)))
SOFTMAXES = ((1, 1000), (4, 128, 128), (1, 10), (1, 8, 64, 64), (1, 4, 16, 16))
CONCATS = (((1, 28, 28, 32), 2, 3), ((1, 8, 8, 8), 2, 3), ((1, 128, 256), 2, 1), ((1, 56, 56, 64), 2, 3),
           ((1, 14, 14, 64), 4, 3))
LAYOUTS = (("RESHAPE", (1, 7, 7, 1280), (1, 62720)), ("TRANSPOSE", (1, 128, 4, 64), (0, 2, 1, 3)),
           ("PAD", (1, 56, 56, 64), 1), ("STRIDED_SLICE", (1, 28, 28, 64), (1, 28, 28, 32)),
           ("RESHAPE", (1, 128, 256), (1, 128, 4, 64)), ("TRANSPOSE", (1, 28, 28, 64), (0, 3, 1, 2)),
           ("PAD", (1, 8, 8, 16), 1), ("SLICE", (1, 128, 256), (1, 64, 256)), ("RESIZE_BILINEAR", (1, 14, 14, 64), 28),
           ("TRANSPOSE", (1, 8, 8, 16), (0, 3, 1, 2)), ("PAD", (1, 112, 112, 32), 1),
           ("STRIDED_SLICE", (1, 128, 256), (1, 1, 256)))
GATHERS = ((1000, 64, 16), (5000, 128, 128), (100, 16, 4))
CONVERTS = (("QUANTIZE", (1, 224, 224, 3)), ("DEQUANTIZE", (1, 28, 28, 64)), ("QUANTIZE", (1, 8, 8, 16)),
            ("DEQUANTIZE", (1, 1000)))
# The hybrid DEPTHWISE_CONV_2D points of an XNNPACK suite are timed once more after a tiny dynamically quantized
# FULLY_CONNECTED on the delegate (its own point, AFTER_QD8: [m, k] x [n, k]), as in a dynamic-range model: the
# law of profile.AFTER_QD8_PLACEMENT
AFTER_QD8, AFTER_QD8_FAMILIES = (1, 16, 10), ("DEPTHWISE_CONV_2D",)
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
        for i, (h, c, k, s) in enumerate(DEPTHWISES):
            act = ACTS[(i + 1) % 3]
            add("DEPTHWISE_CONV_2D", prec, i, _name(h, c, k, s, act), depthwise(h, c, k, s, act, prec))
        for i, (m, k, n) in enumerate(FCS):
            act = ACTS[i % 2]
            add("FULLY_CONNECTED", prec, i, _name(m, k, n, act), fully_connected(m, k, n, act, prec))
        for i, (m, k, n) in enumerate(RNN_FCS):
            add("FULLY_CONNECTED", prec, i, _name(m, k, n, "NONE"), fully_connected(m, k, n, "NONE", prec))
    for prec in ("float32", "int8"):
        for i, dims in enumerate(BMMS):
            add("BATCH_MATMUL", prec, i, _name(*dims), batch_matmul(*dims, prec))
        for i, (h, cin, cout, k, s) in enumerate(TCONVS):
            add("TRANSPOSE_CONV", prec, i, _name(h, cin, cout, k, s), transpose_conv(h, cin, cout, k, s, prec))
        for j, op in enumerate(BINARY_FLOAT if prec == "float32" else BINARY_INT8):
            cases = [(a, a) for a in SHAPES[:4]] + list(BROADCASTS)
            for i, (a, b) in enumerate(cases):
                act = "RELU" if op in FUSABLE and i == 1 else "NONE"
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
    return out


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
        if xnnpack and prec == "hybrid" and family in AFTER_QD8_FAMILIES:  # also timed as in a model, after the lead
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


def reference_points(xnnpack: bool = True) -> list[SuitePoint]:
    """The drift reference (REFERENCE_OPS): a few fixed points, about a second of timing, the same in every suite."""
    out = []
    for family, prec in REFERENCE_OPS:
        for p in suite(True, xnnpack):
            if p.family == family and p.precision == prec and p.delegate == xnnpack:
                out.append(p)
                break
    return out
