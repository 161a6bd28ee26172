"""The calibration suite's model builders: each returns ``make(w)``, which writes one small model (a single op,
a chain of tiny ops, a WHILE loop) with a :class:`~tflite_flops.measure.model_writer.ModelWriter` and returns its
inputs and outputs. :mod:`tflite_flops.latency.suite` lists which of them, at which shapes, make the suite.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..measure.model_writer import ACTIVATIONS, PADDING, ModelWriter, Quant

LOOP_TRIPS, LOOP_SIZES = (1, 4, 16, 64), (4, 1024, 16384)  # the WHILE points: trips, loop-variable elements
GROWING_OPS, GROWING_TRIPS, GROWING_WIDTH = (1, 8, 32), 8, 16  # the loops whose bodies re-prepare every trip
IN_SCALE, OUT_SCALE, W_SCALE = 0.05, 0.1, 0.02
AFTER_QD8 = (1, 16, 10)  # the dynamically quantized FULLY_CONNECTED run before a point timed after one: [m, k] x [n, k]


# ---- tensors per precision ------------------------------------------------------------------------------

def _rng(*salt: int) -> np.random.Generator:
    return np.random.default_rng(list(salt) or [0])


def _act(w: ModelWriter, shape: tuple[int, ...], prec: str, out: bool = False) -> int:
    """An activation tensor: int8 in the int8 suite, float32 otherwise."""
    if prec == "int8":
        return w.tensor(shape, "int8", quant=Quant.of(OUT_SCALE if out else IN_SCALE, -10 if out else 0))
    return w.tensor(shape, "float32")


TILE = 1 << 18  # random values per tensor; a larger one repeats them (what a weight holds does not change its time)


def _uniform(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` float32 values uniform in [-1, 1): at most TILE drawn, repeated to ``n`` (drawing every value of the
    100 MiB streaming chains cost more than their timing)."""
    values = rng.random(min(n, TILE), dtype=np.float32)
    values *= 2
    values -= 1
    return np.resize(values, n)


def _int8(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` int8 weights in [-127, 127] (random bytes, -128 moved to -127: symmetric weights never hold it), about
    what float weights in [-1, 1) quantized by 1/127 give; at most TILE drawn, repeated to ``n``."""
    values = np.frombuffer(rng.bytes(min(n, TILE)), np.int8).copy()
    np.maximum(values, -127, out=values)
    return np.resize(values, n)


def _weights(w: ModelWriter, shape: tuple[int, ...], prec: str, axis: int) -> int:
    """A constant weight tensor in ``prec``: float32; float16 behind a DEQUANTIZE; int8 per channel along ``axis``."""
    n = int(np.prod(shape))
    if prec not in ("float32", "fp16"):
        return w.tensor(shape, "int8", _int8(_rng(n, len(shape)), n), quant=Quant.of([W_SCALE] * shape[axis], 0, axis))
    values = _uniform(_rng(n, len(shape)), n)
    if prec == "float32":
        return w.tensor(shape, "float32", values)
    if prec == "fp16":
        half = w.tensor(shape, "float16", values.astype(np.float16))
        full = w.tensor(shape, "float32")
        w.op("DEQUANTIZE", [half], [full])
        return full
    raise AssertionError(prec)


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

def conv(h: int, cin: int, cout: int, k: int, s: int, act: str, prec: str,
         per_group: int | None = None) -> Callable[[ModelWriter], Any]:
    """CONV_2D, SAME padding: [1,h,h,cin] * [cout,k,k,per_group] -> [1,ho,ho,cout] (per_group: the input
    channels of a group, cin when None: one group)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, (1, h, h, cin), prec)
        wt = _weights(w, (cout, k, k, cin if per_group is None else per_group), prec, 0)
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


def grouped_conv(h: int, c: int, per_group: int, k: int, s: int, act: str, prec: str) -> Callable[[ModelWriter], Any]:
    """CONV_2D with groups = c / per_group (as Keras writes ``Conv2D(groups=...)``; per_group 1: a depthwise
    convolution written as a CONV_2D), SAME padding: [1,h,h,c] * [c,k,k,per_group] -> [1,ho,ho,c]."""
    return conv(h, c, c, k, s, act, prec, per_group)


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
    STRIDED_SLICE / SLICE (arg: the kept size per dim, from 0), RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (new h
    and w, half-pixel centers as Keras writes them)."""
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
        else:  # RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR
            out = (shape[0], arg, arg, shape[3])
            consts = [w.tensor((2,), "int32", np.array([arg, arg]))]
            options = ("ResizeBilinearOptions" if op == "RESIZE_BILINEAR" else "ResizeNearestNeighborOptions",
                       {"halfPixelCenters": True})
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


def stream(n: int, h: int, c: int, prec: str, k: int = 1) -> Callable[[ModelWriter], Any]:
    """``n`` kxk CONV_2D (SAME) in a row on [1,h,h,c] -> c channels, each with weights of its own (random, so that
    no runtime shares one packing between two of them): the weights of the whole chain are read once per
    inference, as a whole model reads its own (calibrate.py's streaming chains)."""
    def make(w: ModelWriter) -> tuple[list[int], list[int]]:
        x = _act(w, (1, h, h, c), prec)
        cur = x
        for i in range(n):
            if prec == "int8":
                wt = w.tensor((c, k, k, c), "int8", _int8(_rng(i, n, c), c * c * k * k), quant=Quant.of([W_SCALE] * c, 0, 0))
            else:
                wt = w.tensor((c, k, k, c), "float32", _uniform(_rng(i, n, c), c * c * k * k))
            nxt = _act(w, (1, h, h, c), prec, out=True) if prec != "int8" else \
                w.tensor((1, h, h, c), "int8", quant=Quant.of(IN_SCALE, 0))  # the next conv's input scale
            w.op("CONV_2D", [cur, wt, _bias(w, c, prec)], [nxt], "Conv2DOptions", padding=PADDING["SAME"], strideW=1,
                 strideH=1, fusedActivationFunction=ACTIVATIONS["NONE"], dilationWFactor=1, dilationHFactor=1)
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
