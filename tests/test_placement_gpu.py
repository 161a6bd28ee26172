"""The classic GPU delegate's placement (TfLiteGpuDelegateV2, ``gpu_delegate="classic"``), op by op, against the
rules of its source. The LiteRT GPU accelerator's (ML Drift, the default) differences are in
tests/test_placement_gpu_drift.py.

There is no GPU on the machines that run this suite, so nothing here runs the real delegate: each
test builds a tiny model in memory, asks ``place_subgraph(model, 0, GPU)`` where each op goes, and
checks the answer against the rule of the source it cites (google-ai-edge/LiteRT):

* ``model_builder.cc``: ``NewOperationParser`` (which op types have a parser), each parser's
  ``IsSupported`` (``CheckMaxSupportedOpVersion`` and special cases), ``GetOpsToReplace``
  (``IsAllAllowedTensors``, the partition limit);
* ``gpu_compatibility.cc``: ``CheckGpuDelegateCompatibility`` (per-op inputs, options, shapes);
* ``delegates/utils.cc``: ``FP16GraphPartitionHelper`` (fp16 weights, full vs partial delegation);
* ``delegate.cc`` / ``delegate_options.cc``: ``max_delegated_partitions`` = 1 by default,
  SPLIT/SPLIT_V excluded without OpenCL.

Each rule category gets a taken and a refused case.

``tf.lite.experimental.Analyzer.analyze(model_content=..., gpu_compatibility=True)`` disagrees with
every refusal tested here: in TensorFlow 2.21 it prints "Your model looks compatible with GPU
delegate" for the one-op models of CONV_2D v7, RESHAPE v2, INT32 ADD, ADD broadcasting [8, 4] to 4-D,
SUM with runtime axes, a 5-D ABS, CEIL, SHAPE and TransformLandmarks alike (tried by hand; it is not a
reference, as issue 20 says, so no test runs it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

from tflite_builder import build_model
from tflite_flops.analysis.placement import place_subgraph
from tflite_flops.ops.placement import (CATEGORIES, CATEGORY_DTYPE, CATEGORY_DYNAMIC, CATEGORY_INPUTS, CATEGORY_OP_TYPE,
                                        CATEGORY_OPTIONS, CATEGORY_PARTIAL, CATEGORY_PARTITION_LIMIT, CATEGORY_SHAPE,
                                        CATEGORY_VERSION, GPU, DelegateConfig, DelegateOp, DelegateTensor, category_of,
                                        decide, placed_op_types, placement_rule)
from tflite_flops.reader.load import load_model

_NP = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "INT8": np.int8, "UINT8": np.uint8,
       "INT16": np.int16, "BOOL": np.bool_, "INT64": np.int64}
ACT = tflite.ActivationFunctionType
CLASSIC = DelegateConfig(gpu_delegate="classic")  # every test here places with the classic delegate's rules


class Graph:
    """A one-subgraph model under construction: tensors, constants, ops in execution order."""

    def __init__(self) -> None:
        self.tensors: list[dict] = []
        self.buffers: list = [None]
        self.ops: list[dict] = []
        self.codes: list[dict] = []

    def t(self, shape, dtype: str = "FLOAT32", value=None, quant: dict | None = None) -> int:
        """A tensor; a constant of the file when ``value`` is given (an array, or "ones")."""
        spec = {"shape": list(shape), "type": getattr(tflite.TensorType, dtype)}
        if value is not None:
            data = np.ones(shape, _NP[dtype]) if isinstance(value, str) else np.asarray(value, _NP[dtype])
            self.buffers.append(data.tobytes())
            spec["buffer"] = len(self.buffers) - 1
        if quant is not None:
            spec["quant"] = quant
        self.tensors.append(spec)
        return len(self.tensors) - 1

    def op(self, op_type: str, inputs, outputs, options: tuple | None = None, version: int = 1,
           custom_options: bytes | None = None) -> int:
        """Append an op (``CUSTOM:<name>`` for a custom op)."""
        if op_type.startswith("CUSTOM:"):
            code = {"builtin": tflite.BuiltinOperator.CUSTOM, "custom": op_type[7:], "version": version}
        else:
            code = {"builtin": getattr(tflite.BuiltinOperator, op_type), "version": version}
        if code not in self.codes:
            self.codes.append(code)
        spec = {"opcode": self.codes.index(code), "inputs": list(inputs), "outputs": list(outputs)}
        if options is not None:
            spec["options"] = options
        if custom_options is not None:
            spec["custom_options"] = custom_options
        self.ops.append(spec)
        return len(self.ops) - 1

    def build(self, outputs=None) -> bytes:
        """The model's bytes (graph inputs: computed tensors no op writes; outputs: the written tensors no op
        reads, unless given)."""
        written = {t for op in self.ops for t in op["outputs"]}
        read = {t for op in self.ops for t in op["inputs"]}
        consts = {i for i, t in enumerate(self.tensors) if "buffer" in t}
        inputs = [i for i in range(len(self.tensors)) if i not in written and i not in consts and i in read]
        if outputs is None:
            outputs = [t for t in sorted(written) if t not in read]
        return build_model([{"tensors": self.tensors, "operators": self.ops, "inputs": inputs, "outputs": outputs}],
                           self.codes, buffers=self.buffers)

    def place(self, config: DelegateConfig = CLASSIC, outputs=None):
        """Where the GPU delegate puts each op (inputs and outputs as :meth:`build` makes them)."""
        return place_subgraph(load_model(self.build(outputs)), 0, GPU, config)


def one(op_type: str, inputs: list[tuple], outputs: list[tuple], options: tuple | None = None, version: int = 1,
        config: DelegateConfig = CLASSIC, custom_options: bytes | None = None) -> str | None:
    """The GPU decision on a model of one op; tensors given as (shape, dtype[, value]); None in inputs
    is an omitted optional input."""
    g = Graph()
    ins = [-1 if spec is None else g.t(*spec) for spec in inputs]
    outs = [g.t(*spec) for spec in outputs]
    g.op(op_type, ins, outs, options, version, custom_options)
    return g.place(config).reasons[0]


def refused(found: str | None, category: str, *words: str) -> bool:
    """``found`` is a refusal of ``category`` naming every one of ``words``."""
    return found is not None and category_of(found) == category and all(w in found for w in words)


F = "FLOAT32"
X4 = ((1, 8, 8, 4), F)
CONV = ("Conv2DOptions", {"stride_w": 1, "stride_h": 1, "dilation_w_factor": 1, "dilation_h_factor": 1})


def conv_inputs():
    return [X4, ((8, 3, 3, 4), F, "ones"), ((8,), F, "ones")]


# ---- the registry ------------------------------------------------------------------------------------------

def test_every_parsed_op_type_has_a_rule_citing_its_source():
    # model_builder.cc NewOperationParser: 80 builtin cases, 4 custom names; MediaPipe's 5 names via its
    # NewCustomOperationParser. Each rule names the source function it follows.
    # The registry also holds ML Drift's 32 op types the classic delegate has no parser for (20 builtins,
    # STABLEHLO_COMPOSITE, 11 custom names: tests/test_placement_gpu_drift.py): refused here as "op type".
    types = placed_op_types(GPU)
    assert len(types) == 89 + 32
    drift_only = {t for t in types if "classic GPU delegate has no parser" in (
        decide(GPU, DelegateOp(t, 1, {"name": "odml.rms_norm"}, (), (), CLASSIC)) or "")}
    assert len(drift_only) == 32 and "CEIL" in drift_only and "CONV_2D" not in drift_only
    for name in ("CONV_2D", "RESIZE_NEAREST_NEIGHBOR", "RELU_0_TO_1", "CUSTOM:Convolution2DTransposeBias",
                 "CUSTOM:Resampler", "CUSTOM:TransformLandmarks"):
        assert name in types
    for name in types:
        entry = placement_rule(GPU, name)
        assert ".cc " in entry.source and entry.rule.__doc__
    assert {"partition limit", "partial delegation"} <= set(CATEGORIES)


@pytest.mark.parametrize("op_type", ["SHAPE", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "CEIL", "EMBEDDING_LOOKUP",
                                     "DYNAMIC_UPDATE_SLICE", "REVERSE_V2", "TOPK_V2", "LOGICAL_OR"])
def test_op_types_without_a_parser_are_refused(op_type):
    # model_builder.cc NewOperationParser: no case for these -> UnsupportedOperationParser. BATCH_TO_SPACE_ND
    # and SPACE_TO_BATCH_ND have parser classes in the file that no case returns; CEIL, EMBEDDING_LOOKUP,
    # DYNAMIC_UPDATE_SLICE, REVERSE_V2, TOPK_V2, LOGICAL_OR have a CheckGpuDelegateCompatibility case, so the
    # offline check (what tf.lite.experimental.Analyzer's gpu_compatibility reports) accepts them while the
    # delegate does not.
    found = decide(GPU, DelegateOp(op_type, 1, {}, (), (), CLASSIC))
    assert refused(found, CATEGORY_OP_TYPE, op_type)


# ---- op version: CheckMaxSupportedOpVersion (operation_parser.cc) per parser ------------------------------------

@pytest.mark.parametrize("op_type, options, inputs, outputs, top", [
    ("CONV_2D", CONV, conv_inputs(), [((1, 6, 6, 8), F)], 6),  # Conv2DOperationParser: 6
    ("RESHAPE", None, [((1, 4), F), ((2,), "INT32", [2, 2])], [((2, 2), F)], 1),  # ReshapeOperationParser: 1
    ("MUL", None, [((1, 4), F), ((1, 4), F)], [((1, 4), F)], 3),  # ElementwiseOperationParser: MUL 3
    ("ADD", None, [((1, 4), F), ((1, 4), F)], [((1, 4), F)], 2),  # ElementwiseOperationParser: others 2
    ("FULLY_CONNECTED", None, [((1, 4), F), ((3, 4), F, "ones")], [((1, 3), F)], 9),  # FullyConnected...: 9
    ("SOFTMAX", ("SoftmaxOptions", {"beta": 1.0}), [((1, 4), F)], [((1, 4), F)], 2),  # SoftmaxOperationParser: 2
])
def test_op_version_limit(op_type, options, inputs, outputs, top):
    assert one(op_type, inputs, outputs, options, version=top) is None
    found = one(op_type, inputs, outputs, options, version=top + 1)
    assert refused(found, CATEGORY_VERSION, f"{op_type} v{top + 1}", f"up to v{top}")


# ---- fused activation: IsActivationSupported (gpu_compatibility.cc) -------------------------------------------

def test_fused_activation_sign_bit():
    # CONV_2D: CheckGpuDelegateCompatibility calls IsActivationSupported: everything but kTfLiteActSignBit.
    out = [((1, 6, 6, 8), F)]
    relu6 = ("Conv2DOptions", {**CONV[1], "fused_activation_function": ACT.RELU6})
    sign = ("Conv2DOptions", {**CONV[1], "fused_activation_function": ACT.SIGN_BIT})
    assert one("CONV_2D", conv_inputs(), out, relu6) is None
    assert refused(one("CONV_2D", conv_inputs(), out, sign), CATEGORY_OPTIONS, "SIGN_BIT")
    # ADD's case checks broadcasting only: its activation is fused later by the parser
    # (MaybeFuseActivation), after the partitions are fixed, so IsSupported takes it.
    add_sign = ("AddOptions", {"fused_activation_function": ACT.SIGN_BIT})
    assert one("ADD", [((1, 4), F), ((1, 4), F)], [((1, 4), F)], add_sign) is None
    sub_sign = ("SubOptions", {"fused_activation_function": ACT.SIGN_BIT})  # two-operand case: checked
    assert refused(one("SUB", [((1, 4), F), ((1, 4), F)], [((1, 4), F)], sub_sign), CATEGORY_OPTIONS, "SIGN_BIT")


# ---- options -----------------------------------------------------------------------------------------------

def test_conv_strides_and_dilations_above_zero():
    # CheckStridesAndDilation: stride and dilation factors must be > 0.
    zero_stride = ("Conv2DOptions", {**CONV[1], "stride_w": 0})
    zero_dilation = ("Conv2DOptions", {**CONV[1], "dilation_h_factor": 0})
    out = [((1, 6, 6, 8), F)]
    assert refused(one("CONV_2D", conv_inputs(), out, zero_stride), CATEGORY_OPTIONS, "strides", "stride_w 0")
    assert refused(one("CONV_2D", conv_inputs(), out, zero_dilation), CATEGORY_OPTIONS, "dilations")


def test_pool_window_and_strides():
    # CheckPooling2DGpuDelegateCompatibility: one runtime input, one output, CheckKernelsAndStrides, activation.
    ok = ("Pool2DOptions", {"stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2})
    no_window = ("Pool2DOptions", {"stride_w": 2, "stride_h": 2, "filter_width": 0, "filter_height": 2})
    assert one("MAX_POOL_2D", [X4], [((1, 4, 4, 4), F)], ok) is None
    assert refused(one("AVERAGE_POOL_2D", [X4], [((1, 4, 4, 4), F)], no_window), CATEGORY_OPTIONS, "window")
    assert refused(one("MAX_POOL_2D", [X4], [((1, 4, 4, 4), F)], ok, version=3), CATEGORY_VERSION)


def test_softmax_beta():
    # CheckGpuDelegateCompatibility, kTfLiteBuiltinSoftmax: beta must be 1.
    assert one("SOFTMAX", [((1, 4), F)], [((1, 4), F)], ("SoftmaxOptions", {"beta": 1.0})) is None
    assert refused(one("SOFTMAX", [((1, 4), F)], [((1, 4), F)], ("SoftmaxOptions", {"beta": 2.0})),
                   CATEGORY_OPTIONS, "beta 2")


def test_strided_slice_masks_and_rank():
    # kTfLiteBuiltinStridedSlice: no ellipsis/new-axis/shrink-axis mask, 4 inputs, a 3-D or 4-D input.
    ins = [X4, ((4,), "INT32", [0, 0, 0, 0]), ((4,), "INT32", [1, 4, 4, 4]), ((4,), "INT32", [1, 1, 1, 1])]
    out = [((1, 4, 4, 4), F)]
    assert one("STRIDED_SLICE", ins, out, ("StridedSliceOptions", {})) is None
    shrink = ("StridedSliceOptions", {"shrink_axis_mask": 1})
    assert refused(one("STRIDED_SLICE", ins, [((4, 4, 4), F)], shrink), CATEGORY_OPTIONS, "shrink_axis_mask")
    flat = [((8, 8), F), ((2,), "INT32", [0, 0]), ((2,), "INT32", [4, 4]), ((2,), "INT32", [1, 1])]
    assert refused(one("STRIDED_SLICE", flat, [((4, 4), F)], ("StridedSliceOptions", {})), CATEGORY_SHAPE, "rank 2")


def test_resize_bilinear_options_and_constant_size():
    # kTfLiteBuiltinResizeBilinear: one runtime input (the size a constant), not align_corners with
    # half_pixel_centers.
    size = ((2,), "INT32", [16, 16])
    out = [((1, 16, 16, 4), F)]
    both = ("ResizeBilinearOptions", {"align_corners": True, "half_pixel_centers": True})
    assert one("RESIZE_BILINEAR", [X4, size], out, ("ResizeBilinearOptions", {"align_corners": True})) is None
    assert refused(one("RESIZE_BILINEAR", [X4, size], out, both), CATEGORY_OPTIONS, "half_pixel_centers")
    assert refused(one("RESIZE_NEAREST_NEIGHBOR", [X4, ((2,), "INT32")], out), CATEGORY_INPUTS, "2 runtime inputs")


def test_pad_paddings_shape_and_mirror_mode():
    # kTfLiteBuiltinPad / MirrorPad: REFLECT mode only; one runtime input; paddings 4x2 or 3x2.
    pads4 = ((4, 2), "INT32", [[0, 0], [1, 1], [1, 1], [0, 0]])
    out = [((1, 10, 10, 4), F)]
    assert one("PAD", [X4, pads4], out) is None
    assert one("MIRROR_PAD", [X4, pads4], out, ("MirrorPadOptions", {"mode": tflite.MirrorPadMode.REFLECT})) is None
    symmetric = ("MirrorPadOptions", {"mode": tflite.MirrorPadMode.SYMMETRIC})
    assert refused(one("MIRROR_PAD", [X4, pads4], out, symmetric), CATEGORY_OPTIONS, "SYMMETRIC")
    pads2 = ((2, 2), "INT32", [[1, 1], [1, 1]])
    assert refused(one("PAD", [((8, 8), F), pads2], [((10, 10), F)]), CATEGORY_SHAPE, "paddings 2x2")


def test_depth_to_space_block_size():
    # kTfLiteBuiltinDepthToSpace: block_size 1 is a no-op the delegate refuses.
    assert one("DEPTH_TO_SPACE", [X4], [((1, 16, 16, 1), F)], ("DepthToSpaceOptions", {"block_size": 2})) is None
    assert refused(one("DEPTH_TO_SPACE", [X4], [X4], ("DepthToSpaceOptions", {"block_size": 1})),
                   CATEGORY_OPTIONS, "block size 1")


def test_fully_connected_weights_format_and_constant_input():
    # kTfLiteBuiltinFullyConnected: default weights format, at most 2 runtime inputs, input 0 computed.
    w = ((3, 4), F, "ones")
    assert one("FULLY_CONNECTED", [((1, 4), F), w], [((1, 3), F)]) is None
    shuffled = ("FullyConnectedOptions", {"weights_format": 1})
    assert refused(one("FULLY_CONNECTED", [((1, 4), F), w], [((1, 3), F)], shuffled), CATEGORY_OPTIONS,
                   "weights format")
    assert refused(one("FULLY_CONNECTED", [((1, 4), F, "ones"), ((3, 4), F)], [((1, 3), F)]), CATEGORY_INPUTS,
                   "constant")
    assert refused(one("FULLY_CONNECTED", [((1, 4), F), ((3, 4), F), ((3,), F)], [((1, 3), F)]), CATEGORY_INPUTS,
                   "3 runtime inputs")


# ---- inputs: CheckInputsOutputs / CheckInputsConstsOutputs -------------------------------------------------

def test_reduce_axes_constant_int32():
    # kTfLiteBuiltinMean / Sum...: 1 runtime + 1 constant input, 1 output; CheckAxesAreInt32Const.
    out = [((1, 4), F)]
    assert one("MEAN", [X4, ((2,), "INT32", [1, 2])], out) is None
    assert one("REDUCE_PROD", [X4, ((2,), "INT32", [1, 2])], out) is None
    assert refused(one("SUM", [X4, ((2,), "INT32")], out), CATEGORY_DYNAMIC, "0 constant")
    assert refused(one("MEAN", [X4, ((2,), "INT64", [1, 2])], out), CATEGORY_DTYPE, "axes are INT64")


def test_two_operand_elementwise_at_most_one_constant():
    # Two-argument elementwise case: 2 runtime inputs, or 1 runtime and 1 constant.
    y = [((1, 4), F)]
    assert one("MAXIMUM", [((1, 4), F), ((1, 4), F)], y) is None
    assert one("MAXIMUM", [((1, 4), F), ((1, 4), F, "ones")], y) is None
    assert refused(one("SUB", [((1, 4), F, "ones"), ((1, 4), F, "ones")], y), CATEGORY_INPUTS, "2 operands")
    # one-argument case: 1 runtime, 0 constant inputs
    assert one("RSQRT", [((1, 4), F)], y) is None
    assert refused(one("EXP", [((1, 4), F, "ones")], y), CATEGORY_INPUTS)


def test_add_n_two_inputs():
    # kTfLiteBuiltinAddN: exactly 2 inputs.
    x = ((1, 4), F)
    assert one("ADD_N", [x, x], [x]) is None
    assert refused(one("ADD_N", [x, x, x], [x]), CATEGORY_INPUTS, "3 inputs")


def test_gather_indices():
    # kTfLiteBuiltinGather: 1 or 2 operands, 1-D INT32 indices (GetOpsToReplace allows INT32 inputs here).
    params, out = ((10, 4), F, "ones"), [((3, 4), F)]
    assert one("GATHER", [params, ((3,), "INT32")], out) is None
    assert refused(one("GATHER", [params, ((1, 3), "INT32")], [((1, 3, 4), F)]), CATEGORY_SHAPE, "rank 2")
    assert refused(one("GATHER", [params, ((3,), "INT64")], out), CATEGORY_DTYPE, "INT64")


def test_one_hot_and_cumsum():
    # CheckOneHotGpuDelegateCompatibility: int32 indices, axis -1, constant scalar float on/off values.
    # CheckCumsumGpuDelegateCompatibility: float input/output of one type, constant int32 axis.
    on, off = ((), F, 1.0), ((), F, 0.0)
    oh = ("OneHotOptions", {"axis": -1})
    assert one("ONE_HOT", [((1, 3), "INT32"), ((), "INT32", 5), on, off], [((1, 3, 5), F)], oh) is None
    assert refused(one("ONE_HOT", [((1, 3), "INT32"), ((), "INT32", 5), ((), F), off], [((1, 3, 5), F)], oh),
                   CATEGORY_DYNAMIC, "on value")
    assert one("CUMSUM", [((1, 8), F), ((), "INT32", 1)], [((1, 8), F)]) is None
    assert refused(one("CUMSUM", [((1, 8), F), ((), "INT32")], [((1, 8), F)]), CATEGORY_DYNAMIC, "axis")


def test_select_v2_branch_shapes():
    # CheckSelectV2GpuDelegateCompatibility: each branch the output's shape or a scalar.
    g = Graph()
    a, b, c, y = g.t((1, 4, 4, 2)), g.t((1, 4, 4, 2)), g.t((1, 4, 4, 2), "BOOL"), g.t((1, 4, 4, 2))
    g.op("GREATER", [a, b], [c])
    g.op("SELECT_V2", [c, a, b], [y])
    assert dict(g.place().reasons) == {0: None, 1: None}
    g = Graph()
    a, b, c = g.t((1, 4, 4, 2)), g.t((1, 4, 4, 2)), g.t((1, 4, 4, 2), "BOOL")
    other, y = g.t((1, 1, 4, 2)), g.t((1, 4, 4, 2))
    g.op("GREATER", [a, b], [c])
    g.op("SELECT_V2", [c, a, other], [y])
    assert refused(g.place().reasons[1], CATEGORY_SHAPE, "false branch")


# ---- shapes ------------------------------------------------------------------------------------------------

def test_add_mul_broadcast_standard_flags():
    # CheckAddMulBroadcastCompatibility with GpuCompatibilityFlags::kStandard (what the delegate passes):
    # 3-D to 4-D with batch 1, [1, 1] or [b, c] to 4-D; nothing else across ranks.
    assert one("ADD", [X4, ((8, 8, 4), F)], [X4]) is None
    assert one("MUL", [X4, ((1, 4), F)], [X4]) is None
    assert refused(one("ADD", [X4, ((8, 4), F)], [X4]), CATEGORY_SHAPE, "broadcast of [1, 8, 8, 4] and [8, 4]")
    assert refused(one("MUL", [((2, 3, 4), F), ((3, 4), F)], [((2, 3, 4), F)]), CATEGORY_SHAPE, "broadcast")


def test_slice_rank():
    # kTfLiteBuiltinSlice: 3 inputs, a 3-D or 4-D input.
    begin, size = ((4,), "INT32", [0, 0, 0, 0]), ((4,), "INT32", [1, 4, 4, 4])
    assert one("SLICE", [X4, begin, size], [((1, 4, 4, 4), F)]) is None
    assert refused(one("SLICE", [((8, 8), F), ((2,), "INT32", [0, 0]), ((2,), "INT32", [4, 4])], [((4, 4), F)]),
                   CATEGORY_SHAPE, "rank 2")


def test_depthwise_shapes_and_bias():
    # CheckDepthwiseConvGpuDelegateCompatibility: 4-D tensors, output channels = input channels x depth
    # multiplier, and a bias (when the op lists one, even omitted: NumElements of no dims is 1) of
    # output-channel elements.
    opts = ("DepthwiseConv2DOptions", {"stride_w": 1, "stride_h": 1, "dilation_w_factor": 1, "dilation_h_factor": 1,
                                       "depth_multiplier": 2})
    w, b = ((1, 3, 3, 8), F, "ones"), ((8,), F, "ones")
    out = [((1, 6, 6, 8), F)]
    assert one("DEPTHWISE_CONV_2D", [X4, w, b], out, opts) is None
    assert refused(one("DEPTHWISE_CONV_2D", [X4, w, None], out, opts), CATEGORY_SHAPE, "omitted bias")
    bad_mult = ("DepthwiseConv2DOptions", {**opts[1], "depth_multiplier": 1})
    assert refused(one("DEPTHWISE_CONV_2D", [X4, w, b], out, bad_mult), CATEGORY_OPTIONS, "depth multiplier 1")


def test_rank_five_tensor_refused():
    # GetOpsToReplace -> IsAllAllowedTensors: any tensor (constants too) with dims->size >= 5 is refused.
    x5 = ((1, 2, 2, 2, 2), F)
    assert one("ABS", [X4], [X4]) is None
    assert refused(one("ABS", [x5], [x5]), CATEGORY_SHAPE, "rank 5")


# ---- tensor types: IsAllAllowedTensors -------------------------------------------------------------------

def test_computed_tensor_types():
    # Non-constant tensors must be FLOAT32/FLOAT16, or INT8/UINT8 with quantized ops allowed (the default,
    # TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT); constants are not checked.
    q = {"scale": [0.1], "zero_point": [0]}
    i8 = ((1, 4), "INT8", None, q)
    assert one("ADD", [i8, i8], [i8]) is None
    no_quant = CLASSIC._replace(gpu_quant_ops=False)
    assert refused(one("ADD", [i8, i8], [i8], config=no_quant), CATEGORY_DTYPE, "input 1 is INT8")
    assert refused(one("ADD", [((1, 4), "INT32"), ((1, 4), "INT32")], [((1, 4), "INT32")]), CATEGORY_DTYPE,
                   "input 1 is INT32")
    assert refused(one("ABS", [((1, 4), "INT16")], [((1, 4), "INT16")]), CATEGORY_DTYPE, "INT16")
    # a hybrid FULLY_CONNECTED (int8 constant weights, float activations) passes: weights are constants
    assert one("FULLY_CONNECTED", [((1, 4), F), ((3, 4), "INT8", "ones", q)], [((1, 3), F)]) is None


def test_cast_types():
    # kTfLiteBuiltinCast: bool->float, float->bool, float32<->int32 (GetOpsToReplace adds BOOL/INT32 for CAST).
    assert one("CAST", [((1, 4), F)], [((1, 4), "INT32")]) is None
    assert one("CAST", [((1, 4), F)], [((1, 4), "BOOL")]) is None
    assert refused(one("CAST", [((1, 4), "INT32")], [((1, 4), "BOOL")]), CATEGORY_DTYPE, "INT32 to BOOL")


def test_dequantize_quantize():
    # DequantizeOperationParser / QuantizeOperationParser exist only with quantized ops allowed
    # (NewOperationParser); DEQUANTIZE refuses INT16 input.
    q = {"scale": [0.1], "zero_point": [0]}
    assert one("DEQUANTIZE", [((1, 4), "INT8", None, q)], [((1, 4), F)]) is None
    assert refused(one("DEQUANTIZE", [((1, 4), "INT16", None, q)], [((1, 4), F)]), CATEGORY_DTYPE, "INT16")
    assert one("QUANTIZE", [((1, 4), F)], [((1, 4), "INT8", None, q)]) is None
    assert refused(one("QUANTIZE", [((1, 4), F)], [((1, 4), "INT8", None, q)], config=CLASSIC._replace(
        gpu_quant_ops=False)), CATEGORY_OP_TYPE, "ENABLE_QUANT")


def test_split_excluded_without_opencl():
    # delegate.cc DelegatePrepare: SPLIT and SPLIT_V go to excluded_ops when OpenCL is not supported.
    ins, outs = [((), "INT32", 3), X4], [((1, 8, 8, 2), F), ((1, 8, 8, 2), F)]
    assert one("SPLIT", ins, outs, ("SplitOptions", {"num_splits": 2})) is None
    assert refused(one("SPLIT", ins, outs, ("SplitOptions", {"num_splits": 2}), config=CLASSIC._replace(
        gpu_opencl=False)), CATEGORY_OP_TYPE, "OpenCL")


# ---- neighbours: comparisons and bool CAST (ElementwiseOperationParser / CastOperationParser) ----------------

def test_comparison_needs_one_cast_or_select_to_float():
    # ElementwiseOperationParser::IsSupported, logical op: its output must have exactly one consumer, a
    # CAST/SELECT/SELECT_V2 whose output is FLOAT16/FLOAT32. CastOperationParser: a bool->float CAST whose
    # input comes from a comparison read once, and whose output is read once, is taken.
    def chain(read_out: bool):
        g = Graph()
        a, b, c, y = g.t((1, 4)), g.t((1, 4)), g.t((1, 4), "BOOL"), g.t((1, 4))
        g.op("LESS", [a, b], [c])
        g.op("CAST", [c], [y])
        if read_out:
            g.op("ABS", [y], [g.t((1, 4))])
        return g.place().reasons

    assert chain(True) == {0: None, 1: None, 2: None}
    last = chain(False)  # the CAST's output is a graph output: "Cast from bool not supported for outputs"
    assert refused(last[1], CATEGORY_INPUTS, "0 readers")
    g = Graph()
    a, b, c = g.t((1, 4)), g.t((1, 4)), g.t((1, 4), "BOOL")
    g.op("EQUAL", [a, b], [c])
    assert refused(g.place().reasons[0], CATEGORY_INPUTS, "0 readers")  # a comparison as graph output
    g = Graph()
    a, b, c, d = g.t((1, 4)), g.t((1, 4)), g.t((1, 4), "BOOL"), g.t((1, 4), "BOOL")
    g.op("GREATER", [a, b], [c])
    g.op("LOGICAL_AND", [c, c], [d])
    assert refused(g.place().reasons[0], CATEGORY_INPUTS, "2 readers")


# ---- custom ops ------------------------------------------------------------------------------------------

def _words(*values: int) -> bytes:
    return np.asarray(values, np.int32).tobytes()


def test_convolution_2d_transpose_bias():
    # CheckCustomOpsGpuDelegateCompatibility: a filter input, TfLiteTransposeConvParams custom data, strides > 0.
    ins = [X4, ((8, 3, 3, 4), F, "ones"), ((8,), F, "ones")]
    out = [((1, 16, 16, 8), F)]
    assert one("CUSTOM:Convolution2DTransposeBias", ins, out, custom_options=_words(1, 2, 2)) is None
    assert refused(one("CUSTOM:Convolution2DTransposeBias", ins, out, custom_options=_words(1, 0, 2)),
                   CATEGORY_OPTIONS, "strides")
    assert refused(one("CUSTOM:Convolution2DTransposeBias", ins, out), CATEGORY_OPTIONS, "no custom options")


def test_max_pooling_with_argmax_and_unpooling():
    # MaxPoolingWithArgmax2D: Pooling2DOperationParser (v <= 2), custom data -> 1 runtime input, 2 outputs.
    # MaxUnpooling2D: 2 runtime inputs, 1 output, CheckKernelsAndStrides on TfLitePoolParams.
    params = _words(1, 2, 2, 2, 2, 0)  # padding, stride w, stride h, filter w, filter h, activation
    pooled = ((1, 4, 4, 4), F)
    assert one("CUSTOM:MaxPoolingWithArgmax2D", [X4], [pooled, pooled], custom_options=params) is None
    assert refused(one("CUSTOM:MaxPoolingWithArgmax2D", [X4], [pooled], custom_options=params), CATEGORY_INPUTS,
                   "1 outputs")
    assert refused(one("CUSTOM:MaxPoolingWithArgmax2D", [X4], [pooled, pooled], custom_options=_words(
        1, 2, 2, 2, 2, 5)), CATEGORY_OPTIONS, "SIGN_BIT")
    assert one("CUSTOM:MaxUnpooling2D", [pooled, pooled], [X4], custom_options=params) is None
    assert refused(one("CUSTOM:MaxUnpooling2D", [pooled, pooled], [X4], custom_options=_words(1, 2, 2, 0, 2, 0)),
                   CATEGORY_OPTIONS, "window")


def test_resampler():
    # kTfLiteBuiltinCustom "Resampler": 2 runtime inputs, 4-D source and warp of one batch, warp channels >= 2.
    assert one("CUSTOM:Resampler", [X4, ((1, 8, 8, 2), F)], [X4]) is None
    assert refused(one("CUSTOM:Resampler", [X4, ((2, 8, 8, 2), F)], [X4]), CATEGORY_SHAPE, "batch")


def test_mediapipe_ops_need_mediapipes_build():
    # LiteRT's default/custom_parsers.cc NewCustomOperationParser returns an UnimplementedOperationParser
    # for every name; MediaPipe's build of the delegate has parsers for TransformLandmarks (v <= 2, 2 runtime
    # inputs, 1 output) and friends.
    ins, out = [((1, 5, 3), F), ((1, 4, 4), F)], [((1, 5, 3), F)]
    assert refused(one("CUSTOM:TransformLandmarks", ins, out), CATEGORY_OP_TYPE, "MediaPipe")
    mediapipe = CLASSIC._replace(gpu_mediapipe_ops=True)
    assert one("CUSTOM:TransformLandmarks", ins, out, config=mediapipe) is None
    assert refused(one("CUSTOM:TransformLandmarks", ins, out, version=3, config=mediapipe), CATEGORY_VERSION)
    assert refused(one("CUSTOM:SomethingElse", ins, out), CATEGORY_OP_TYPE)


# ---- rule-level checks without a model --------------------------------------------------------------------

def _tensor(i: int, shape, dtype=F, static=False) -> DelegateTensor:
    return DelegateTensor(i, dtype, tuple(shape), static)


def test_lstm_basic_kernel():
    # kTfLiteBuiltinLstm, kTfLiteLSTMBasicKernel: 3 runtime + 2 constant inputs, 4 outputs, depth % 4,
    # TANH, no clips. LSTMOperationParser: up to v4.
    ins = (_tensor(0, (1, 4)), _tensor(1, (1, 8)), _tensor(2, (1, 8)), _tensor(3, (32, 12), static=True),
           _tensor(4, (32,), static=True))
    outs = (_tensor(5, (1, 8)), _tensor(6, (1, 8)), _tensor(7, (1, 32)), _tensor(8, (1, 32)))
    opts = {"kernel_type": "BASIC", "fused_activation_function": "TANH", "cell_clip": 0.0, "proj_clip": 0.0}
    assert decide(GPU, DelegateOp("LSTM", 2, opts, ins, outs, CLASSIC)) is None
    assert refused(decide(GPU, DelegateOp("LSTM", 2, {**opts, "cell_clip": 3.0}, ins, outs, CLASSIC)),
                   CATEGORY_OPTIONS, "cell_clip")
    assert refused(decide(GPU, DelegateOp("LSTM", 5, opts, ins, outs, CLASSIC)), CATEGORY_VERSION)


# ---- fp16 weights and partitions (FP16GraphPartitionHelper, GetOpsToReplace) -----------------------------

def _fp16_fc(g: Graph) -> int:
    """x -> FULLY_CONNECTED(x, DEQUANTIZE(w fp16), DEQUANTIZE(b fp16)); returns the output."""
    x, w16, b16 = g.t((1, 4)), g.t((3, 4), "FLOAT16", "ones"), g.t((3,), "FLOAT16", "ones")
    w, b, y = g.t((3, 4)), g.t((3,)), g.t((1, 3))
    g.op("DEQUANTIZE", [w16], [w])
    g.op("DEQUANTIZE", [b16], [b])
    g.op("FULLY_CONNECTED", [x, w, b], [y])
    return y


def test_fp16_weights_full_delegation():
    # FP16GraphPartitionHelper::IsNodeSupported: a DEQUANTIZE of a constant FLOAT16 tensor is not supported
    # itself, and its readers are checked on the fp16 constant (RemapFp16InputTensors): the FULLY_CONNECTED
    # then has 1 runtime input, not 3 ("doesn't support more than 2 runtime inputs"). All others supported
    # -> scenario 1: every node is delegated, the DEQUANTIZEs too, in one partition.
    g = Graph()
    _fp16_fc(g)
    p = g.place()
    assert dict(p.reasons) == {0: None, 1: None, 2: None}
    assert [part.ops for part in p.partitions] == [(0, 1, 2)]


def test_fp16_weights_partial_delegation():
    # Scenario 2: an op is refused, so the fp16 DEQUANTIZEs stay on the CPU; the delegated FULLY_CONNECTED
    # reads the fp16 constants directly, so its partition holds it alone.
    g = Graph()
    y = _fp16_fc(g)
    g.op("SHAPE", [y], [g.t((2,), "INT32")])
    p = g.place()
    assert p.reasons[2] is None
    assert refused(p.reasons[0], CATEGORY_PARTIAL, "fp16") and refused(p.reasons[1], CATEGORY_PARTIAL)
    assert refused(p.reasons[3], CATEGORY_OP_TYPE, "SHAPE")
    assert [part.ops for part in p.partitions] == [(2,)]


def _two_runs(g: Graph, first: int, second: int) -> None:
    """``first`` ABS ops, an op the delegate refuses (CEIL has no parser), ``second`` ABS ops."""
    t = g.t((1, 4))
    for n, tail in ((first, True), (second, False)):
        for _ in range(n):
            nxt = g.t((1, 4))
            g.op("ABS", [t], [nxt])
            t = nxt
        if tail:
            nxt = g.t((1, 4))
            g.op("CEIL", [t], [nxt])
            t = nxt


def test_only_the_largest_partition_by_default():
    # GetOpsToReplace -> GetNodesOfFirstNLargestPartitions(max_delegated_partitions), 1 by default
    # (TfLiteGpuDelegateOptionsV2Default): of the partitions of 2 and 3 ABS ops, only the 3 run on the GPU.
    g = Graph()
    _two_runs(g, 2, 3)
    p = g.place()
    assert [part.ops for part in p.partitions] == [(3, 4, 5)]
    for i in (0, 1):
        assert refused(p.reasons[i], CATEGORY_PARTITION_LIMIT, "partition of 2 ops", "largest 1")
    assert refused(p.reasons[2], CATEGORY_OP_TYPE, "CEIL")
    assert all(p.reasons[i] is None for i in (3, 4, 5))
    assert p.partition_of == {3: 0, 4: 0, 5: 0}


def test_partition_limit_raised():
    # max_delegated_partitions = 2 keeps both; a limit <= 0 counts as 1 (Delegate::Delegate).
    g = Graph()
    _two_runs(g, 3, 2)
    p = g.place(CLASSIC._replace(gpu_max_partitions=2))
    assert [part.ops for part in p.partitions] == [(0, 1, 2), (4, 5)]
    assert all(type(i) is int for part in p.partitions for i in part.ops)
    p = g.place(CLASSIC._replace(gpu_max_partitions=0))
    assert [part.ops for part in p.partitions] == [(0, 1, 2)]
    assert refused(p.reasons[4], CATEGORY_PARTITION_LIMIT, "largest 1")


def test_tied_partitions_keep_the_first():
    # std::sort by size (descending) picks among equal sizes in an order the standard does not fix; we keep
    # the earlier partition, which is what a short insertion-sorted run gives.
    g = Graph()
    _two_runs(g, 2, 2)
    p = g.place()
    assert [part.ops for part in p.partitions] == [(0, 1)]
    assert refused(p.reasons[3], CATEGORY_PARTITION_LIMIT, "partition of 2 ops")


def test_nothing_supported_no_partition():
    g = Graph()
    a, b = g.t((1, 4), "INT32"), g.t((1, 4), "INT32")
    g.op("CEIL", [a], [b])
    p = g.place()
    assert p.partitions == () and p.partition_of == {}
    assert refused(p.reasons[0], CATEGORY_OP_TYPE, "CEIL")


# ---- the samples: invariants of the pass ----------------------------------------------------------------

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "sample_models").glob("*.tflite"))


@pytest.mark.parametrize("config", [CLASSIC, DelegateConfig()], ids=["classic", "ml_drift"])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_respect_the_partition_limit(path, config):
    # GetOpsToReplace: at most max_delegated_partitions (1) partitions, unless every op but the fp16
    # DEQUANTIZEs is supported (FP16GraphPartitionHelper scenario 1); every op has a decision, every
    # refusal a known category.
    model = load_model(str(path))
    for i, sg in enumerate(model.subgraphs):
        p = place_subgraph(model, i, GPU, config)
        assert sorted(p.reasons) == list(range(len(sg.operators)))
        taken = [op for op, r in p.reasons.items() if r is None]
        assert sorted(op for part in p.partitions for op in part.ops) == taken
        assert all(category_of(r) in CATEGORIES for r in p.reasons.values() if r is not None)
        if len(taken) < len(sg.operators):
            assert len(p.partitions) <= 1


def test_fp16_sample_fully_delegated():
    # cnn_fp16: every op but its fp16 weight DEQUANTIZEs is supported, so the delegate takes them all, in one
    # partition (FP16GraphPartitionHelper scenario 1); the decoder sample is cut to its largest partition.
    root = Path(__file__).resolve().parent.parent / "sample_models"
    model = load_model(str(root / "cnn_fp16.tflite"))
    p = place_subgraph(model, 0, GPU, CLASSIC)
    assert all(r is None for r in p.reasons.values()) and len(p.partitions) == 1
    assert any(op.op_type == "DEQUANTIZE" for op in model.subgraphs[0].operators)
    model = load_model(str(root / "tiny_decoder.tflite"))
    one_part = place_subgraph(model, 0, GPU, CLASSIC)
    more = place_subgraph(model, 0, GPU, CLASSIC._replace(gpu_max_partitions=8))
    assert len(one_part.partitions) == 1 and len(more.partitions) > 1
    assert len(one_part.partitions[0].ops) == max(len(part.ops) for part in more.partitions)
