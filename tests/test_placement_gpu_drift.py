"""The LiteRT GPU accelerator's placement (ML Drift, the default GPU model), where its rules differ from the classic
GPU delegate's (tests/test_placement_gpu.py).

LiteRT 2.x's ``benchmark_model --use_gpu`` and CompiledModel API apply the ML Drift delegate (kernel names
LITERT_CL, LITERT_METAL, LITERT_WEBGPU), not ``TfLiteGpuDelegateV2``. Its ``GetOpsToReplace`` (in
google-ai-edge/LiteRT ``ml_drift_delegate/tflite/model_builder.cc``, ``GetOpsToReplaceWithOptions``) keeps the
classic partitioning (``FP16GraphPartitionHelper``, the largest partition: ``max_delegated_partitions`` is the
literal 1 in ``delegate_opencl.cc``, ``delegate_metal.mm``, ``delegate_webgpu.cc``) and the tensor check's rank
veto (``IsAllAllowedTensors``: rank 5 or more refused), but its parsers and allowed types differ. Each test
builds a tiny model and cites the rule. tests/test_placement_gpu_litert.py holds the same rules to the
accelerator itself where this machine can run it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_placement_gpu import Graph, one, refused
from tflite_flops.analysis.placement import place_subgraph
from tflite_flops.errors import InputSpecError
from tflite_flops.ops.placement import (CATEGORY_DTYPE, CATEGORY_DYNAMIC, CATEGORY_INPUTS, CATEGORY_OP_TYPE,
                                        CATEGORY_OPTIONS, CATEGORY_PARTITION_LIMIT, CATEGORY_SHAPE, CATEGORY_VERSION,
                                        GPU, DelegateConfig)
from tflite_flops.reader.load import load_model
from tflite_flops.settings import GPU_CLASSIC, GPU_ML_DRIFT, Settings

DRIFT = DelegateConfig()
CLASSIC = DelegateConfig(gpu_delegate=GPU_CLASSIC)
F = "FLOAT32"
X4 = ((1, 8, 8, 4), F)


def both(*args, **kwargs) -> tuple[str | None, str | None]:
    """The ML Drift and the classic decision on the same one-op model."""
    return one(*args, config=DRIFT, **kwargs), one(*args, config=CLASSIC, **kwargs)


def test_ml_drift_is_the_default_and_fixes_the_classic_options():
    # delegate_opencl.cc / delegate_metal.mm: GetOpsToReplace(context, /*allow_quant_ops=*/true,
    # /*max_delegated_partitions=*/1, &kExcludedOps /* empty */, ...): nothing a user sets.
    assert DelegateConfig().gpu_delegate == GPU_ML_DRIFT
    assert Settings().delegate.gpu_delegate == GPU_ML_DRIFT
    Settings(delegate=CLASSIC._replace(gpu_max_partitions=4))  # the classic delegate's option
    with pytest.raises(InputSpecError, match="gpu_max_partitions=4 is an option of the classic GPU delegate"):
        Settings(delegate=DelegateConfig(gpu_max_partitions=4))
    with pytest.raises(InputSpecError, match="gpu_delegate: expected one of ml_drift, classic"):
        Settings(delegate=DelegateConfig(gpu_delegate="tflite_gpu_v3"))


# ---- allowed tensor types: GetOpsToReplaceWithOptions' allowed_in_types / allowed_out_types ------------------------

def test_int_types_for_int_supported_ops():
    # IsIntSupportedOp (ADD, SUB, MUL, DIV, MAXIMUM, ABS, SUM, TILE, ...): int8/16/32 in and out. The classic
    # delegate's IsAllAllowedTensors takes only float and 8-bit types there.
    i32 = ((1, 4), "INT32")
    drift, classic = both("ADD", [i32, i32], [i32])
    assert drift is None and refused(classic, CATEGORY_DTYPE, "INT32")
    drift, classic = both("ABS", [((1, 4), "INT16")], [((1, 4), "INT16")])
    assert drift is None and refused(classic, CATEGORY_DTYPE, "INT16")


def test_all_precision_ops_take_int_shapes():
    # SupportAllPrecisionOp (CAST, CONCATENATION, GATHER, PACK, PAD, RESHAPE, SELECT, SLICE, STRIDED_SLICE,
    # TRANSPOSE, ...): every int, uint, bool and bfloat16 type: int32 shape arithmetic stays on the GPU.
    drift, classic = both("RESHAPE", [((2, 3), "INT32"), ((1,), "INT32", [6])], [((6,), "INT32")])
    assert drift is None and refused(classic, CATEGORY_DTYPE, "INT32")
    drift, classic = both("CAST", [((1, 4), "INT32")], [((1, 4), "BOOL")])
    assert drift is None and refused(classic, CATEGORY_DTYPE, "INT32 to BOOL")


def test_logical_ops_take_bool_and_int_only():
    # IsLogicalOpCode (LOGICAL_AND/OR/NOT, BITWISE_XOR): allowed types replaced by {BOOL, INT8, INT16, INT32}, so a
    # float LOGICAL_AND that the classic delegate takes is refused; a bool one is taken.
    b = ((1, 4), "BOOL")
    assert one("LOGICAL_AND", [b, b], [b], config=DRIFT) is None
    drift, classic = both("LOGICAL_AND", [((1, 4), F), ((1, 4), F)], [((1, 4), F)])
    assert refused(drift, CATEGORY_DTYPE, "FLOAT32") and classic is None


def test_comparison_needs_no_cast_or_select_reader():
    # The classic ElementwiseOperationParser takes a comparison only when one CAST/SELECT to float reads it; ML
    # Drift's checks it as any binary op, its bool output allowed (allow_bool_tensors), int inputs too.
    g = Graph()
    a, b, c = g.t((1, 4), "INT32"), g.t((1, 4), "INT32"), g.t((1, 4), "BOOL")
    g.op("EQUAL", [a, b], [c])
    assert g.place(DRIFT).reasons[0] is None
    assert refused(g.place(CLASSIC).reasons[0], CATEGORY_INPUTS, "0 readers")


# ---- op types --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op_type, inputs, outputs", [
    ("CEIL", [((1, 4), F)], [((1, 4), F)]),
    ("ROUND", [((1, 4), F)], [((1, 4), F)]),
    ("ATAN2", [((1, 4), F), ((1, 4), F)], [((1, 4), F)]),
    ("REVERSE_V2", [((1, 4), F), ((1,), "INT32", [1])], [((1, 4), F)]),
    ("ARG_MAX", [((1, 8), F), ((), "INT32", 1)], [((1,), "INT32")]),
    ("TOPK_V2", [((1, 8), F), ((), "INT32", 2)], [((1, 2), F), ((1, 2), "INT32")]),
    ("DYNAMIC_UPDATE_SLICE", [((1, 8, 4), F), ((1, 2, 4), F), ((3,), "INT32")], [((1, 8, 4), F)]),
    ("EMBEDDING_LOOKUP", [((3,), "INT32"), ((10, 4), F, "ones")], [((3, 4), F)]),
])
def test_op_types_only_ml_drift_parses(op_type, inputs, outputs):
    # NewOperationParser of ml_drift_delegate/tflite/model_builder.cc has a case for each; the classic
    # tflite/delegates/gpu/common/model_builder.cc has none (UnsupportedOperationParser).
    drift, classic = both(op_type, inputs, outputs)
    assert drift is None, drift
    assert refused(classic, CATEGORY_OP_TYPE, "classic GPU delegate has no parser")


def test_op_types_ml_drift_refuses():
    # DENSIFY: only the classic delegate parses it. RELU_0_TO_1: ML Drift's ReLUOperationParser calls
    # CheckGpuDelegateCompatibility, which has no case for it. BITWISE_XOR: parsed by ML Drift's
    # ElementwiseOperationParser but refused by the same check.
    drift, classic = both("RELU_0_TO_1", [((1, 4), F)], [((1, 4), F)])
    assert refused(drift, CATEGORY_OP_TYPE, "RELU_0_TO_1") and classic is None
    assert refused(one("DENSIFY", [((3, 4), F, "ones")], [((3, 4), F)], config=DRIFT), CATEGORY_OP_TYPE,
                   "ML Drift) has no parser for DENSIFY")
    b = ((1, 4), "BOOL")
    assert refused(one("BITWISE_XOR", [b, b], [b], config=DRIFT), CATEGORY_OP_TYPE, "no case")


# ---- per-op rules --------------------------------------------------------------------------------------------------

def test_strided_slice_of_any_rank_but_v2_at_most():
    # ML Drift's StridedSliceOperationParser has its own CheckGpuDelegateCompatibility: the masks and 4 inputs,
    # begin values for every dimension or all but the batch, no rank rule (the classic check wants 3-D or 4-D);
    # CheckMaxSupportedOpVersion(registration, 2) (the classic: 4); strides > 0 ("Reverse slices are not
    # supported").
    flat = [((8, 8), F), ((2,), "INT32", [0, 0]), ((2,), "INT32", [4, 4]), ((2,), "INT32", [1, 1])]
    opts = ("StridedSliceOptions", {})
    drift, classic = both("STRIDED_SLICE", flat, [((4, 4), F)], opts)
    assert drift is None and refused(classic, CATEGORY_SHAPE, "rank 2")
    ins = [X4, ((4,), "INT32", [0, 0, 0, 0]), ((4,), "INT32", [1, 4, 4, 4]), ((4,), "INT32", [1, 1, 1, 1])]
    drift, classic = both("STRIDED_SLICE", ins, [((1, 4, 4, 4), F)], opts, version=3)
    assert refused(drift, CATEGORY_VERSION, "up to v2") and classic is None
    back = [((8, 8), F), ((2,), "INT32", [0, 7]), ((2,), "INT32", [4, 0]), ((2,), "INT32", [1, -1])]
    assert refused(one("STRIDED_SLICE", back, [((4, 7), F)], opts, config=DRIFT), CATEGORY_OPTIONS, "reverse")
    shrink = ("StridedSliceOptions", {"shrink_axis_mask": 1})
    assert refused(one("STRIDED_SLICE", flat, [((4,), F)], shrink, config=DRIFT), CATEGORY_OPTIONS, "shrink")


def test_slice_of_rank_one_to_four():
    # ML Drift's SliceOperationParser (no CheckGpuDelegateCompatibility): up to v8, a computed input of rank 1 to
    # 4, constant begin and size, one value per dimension (3 or 4 for a 4-D input).
    ins = [((8, 8), F), ((2,), "INT32", [0, 0]), ((2,), "INT32", [4, 4])]
    drift, classic = both("SLICE", ins, [((4, 4), F)], version=4)
    assert drift is None and refused(classic, CATEGORY_VERSION, "up to v2")
    assert refused(one("SLICE", [((8, 8), F), ((2,), "INT32"), ((2,), "INT32", [4, 4])], [((4, 4), F)],
                       config=DRIFT), CATEGORY_DYNAMIC, "the begin input")


def test_batch_matmul_constant_second_input_of_rank_two_to_four():
    # ML Drift's BatchedMatMulOperationParser: one runtime input needs the second input constant, of rank 2
    # (HW) or 3-4 (BHWC); two runtime inputs are taken. The classic IsSupported takes any two inputs (its
    # parser converts only a 2-D constant, after the partitions are fixed).
    x = ((1, 2, 3, 4), F)
    assert one("BATCH_MATMUL", [x, ((1, 2, 4, 5), F, "ones")], [((1, 2, 3, 5), F)], config=DRIFT) is None
    assert one("BATCH_MATMUL", [x, ((1, 2, 4, 5), F)], [((1, 2, 3, 5), F)], config=DRIFT) is None
    drift, classic = both("BATCH_MATMUL", [((1, 2, 3, 4), F, "ones"), ((1, 2, 4, 5), F)], [((1, 2, 3, 5), F)])
    assert refused(drift, CATEGORY_INPUTS, "constant second") and classic is None
    drift, classic = both("BATCH_MATMUL", [((3, 4), F), ((4,), F, "ones")], [((3,), F)])
    assert refused(drift, CATEGORY_SHAPE, "rank 1") and classic is None


@pytest.mark.parametrize("op_type, inputs, outputs, options, classic_top, drift_top", [
    ("CONCATENATION", [((1, 4), F), ((1, 4), F)], [((1, 8), F)], ("ConcatenationOptions", {"axis": 1}), 2, 6),
    ("TRANSPOSE", [((2, 3), F), ((2,), "INT32", [1, 0])], [((3, 2), F)], None, 4, 9),
    ("SOFTMAX", [((1, 4), F)], [((1, 4), F)], ("SoftmaxOptions", {"beta": 1.0}), 2, 4),
    ("FULLY_CONNECTED", [((1, 4), F), ((3, 4), F, "ones")], [((1, 3), F)], None, 9, 14),
    ("MUL", [((1, 4), F), ((1, 4), F)], [((1, 4), F)], None, 3, 8),
    ("ADD", [((1, 4), F), ((1, 4), F)], [((1, 4), F)], None, 2, 6),
    ("PAD", [X4, ((4, 2), "INT32", [[0, 0], [1, 1], [1, 1], [0, 0]])], [((1, 10, 10, 4), F)], None, 2, 5),
])
def test_newer_op_versions(op_type, inputs, outputs, options, classic_top, drift_top):
    # CheckMaxSupportedOpVersion per parser: ML Drift's limits (ConcatenationOperationParser 6, Transpose 9,
    # Softmax 4, FullyConnected 14, Pad 5, ElementwiseOperationParser's kSupportedOpVersion: MUL 8, ADD 6)
    # against the classic delegate's.
    v = classic_top + 1
    drift, classic = both(op_type, inputs, outputs, options, version=v)
    assert drift is None and refused(classic, CATEGORY_VERSION, f"up to v{classic_top}")
    assert refused(one(op_type, inputs, outputs, options, version=drift_top + 1, config=DRIFT), CATEGORY_VERSION,
                   f"up to v{drift_top}")


def test_add_broadcasts_any_numpy_way():
    # ML Drift's ElementwiseOperationParser passes GpuCompatibilityFlags::kEnhancedBroadcast: CheckIsBroadcastable
    # instead of the classic 3-D/2-D-to-4-D cases.
    drift, classic = both("ADD", [X4, ((8, 4), F)], [X4])
    assert drift is None and refused(classic, CATEGORY_SHAPE, "broadcast")
    assert refused(one("ADD", [X4, ((3, 4), F)], [X4], config=DRIFT), CATEGORY_SHAPE, "broadcast")


def test_rank_five_veto_kept():
    # IsAllAllowedTensors (ML Drift model_builder.cc): "Tensor dimensions must be less than 5", every tensor.
    x5 = ((1, 2, 2, 2, 2), F)
    drift, classic = both("ABS", [x5], [x5])
    assert refused(drift, CATEGORY_SHAPE, "rank 5") and refused(classic, CATEGORY_SHAPE, "rank 5")


# ---- partitions and node subsets ---------------------------------------------------------------------------------

def test_one_partition_whatever_the_config():
    # The limit is the literal 1 at ML Drift's call: a DelegateConfig handed straight to place_subgraph with another
    # gpu_max_partitions still keeps the largest partition only. ZEROS_LIKE (no parser in either model) cuts
    # ABS ABS ZEROS_LIKE ABS ABS ABS into partitions of 2 and 3 ops: the 3 are kept.
    g = Graph()
    t = g.t((1, 4))
    for kind in ["ABS", "ABS", "ZEROS_LIKE", "ABS", "ABS", "ABS"]:
        nxt = g.t((1, 4))
        g.op(kind, [t], [nxt])
        t = nxt
    p = g.place(DRIFT._replace(gpu_max_partitions=8))
    assert [part.ops for part in p.partitions] == [(3, 4, 5)]
    assert refused(p.reasons[0], CATEGORY_PARTITION_LIMIT, "largest 1")
    assert [len(part.ops) for part in g.place(CLASSIC._replace(gpu_max_partitions=8)).partitions] == [2, 3]


def _channel_shuffle(g: Graph, x: int, tail: str | None) -> None:
    """ABS, then ShuffleNet V2's channel shuffle (RESHAPE to 5-D, 5-D TRANSPOSE, RESHAPE back), two ABS, and
    optionally a ``tail`` op neither GPU model parses."""
    a, five, five_t, back, c, d = (g.t((1, 8, 8, 4)), g.t((1, 8, 8, 2, 2)), g.t((1, 8, 8, 2, 2)), g.t((1, 8, 8, 4)),
                                   g.t((1, 8, 8, 4)), g.t((1, 8, 8, 4)))
    g.op("ABS", [x], [a])
    g.op("RESHAPE", [a, g.t((5,), "INT32", [1, 8, 8, 2, 2])], [five])
    g.op("TRANSPOSE", [five, g.t((5,), "INT32", [0, 1, 2, 4, 3])], [five_t])
    g.op("RESHAPE", [five_t, g.t((4,), "INT32", [1, 8, 8, 4])], [back])
    g.op("ABS", [back], [c])
    g.op("ABS", [c], [d])
    if tail:
        g.op(tail, [d], [g.t((4,), "INT32")], ("ShapeOptions", {"out_type": 2}) if tail == "SHAPE" else None)


def test_channel_shuffle_cuts_the_graph_into_node_subsets():
    # IsAllAllowedTensors refuses the 5-D RESHAPEs (ops 1, 3), TransposeOperationParser the 5-axis permutation
    # (op 2: "Permutation for transpose is invalid", before the tensor check). Supported islands: {0} and
    # {4, 5}; the largest, {4, 5}, runs on the GPU. Greedy epochs: CPU {0, 1, 2, 3} (op 0 is first ready and now
    # on the CPU), GPU {4, 5}: 1 partition, 1 + 1 = 2 node subsets. With a SHAPE after them (no parser in ML
    # Drift), CPU {6} follows: 1 + 1 + 1 = 3, ShuffleNet V2's "10 of 190 nodes, yielding 3 partitions" on a
    # Pixel 9 Pro (leaderboard, LITERT_CL).
    for tail, kinds in ((None, [False, True]), ("SHAPE", [False, True, False])):
        g = Graph()
        _channel_shuffle(g, g.t((1, 8, 8, 4)), tail)
        p = g.place(DRIFT)
        assert all(refused(p.reasons[i], CATEGORY_SHAPE, "rank 5") for i in (1, 3))
        assert refused(p.reasons[2], CATEGORY_SHAPE, "permutation of 5 axes")
        assert refused(p.reasons[0], CATEGORY_PARTITION_LIMIT, "partition of 1 ops")
        assert [part.ops for part in p.partitions] == [(4, 5)]
        assert [taken for taken, _ in p.subsets] == kinds


def test_tiny_decoder_sample():
    # tiny_decoder (two subgraphs of 73 and 77 ops): ML Drift refuses the rank-2-indices GATHER and the
    # shrink-axis STRIDED_SLICE only (the classic delegate also its int32 ops, DYNAMIC_UPDATE_SLICE, ...); the 4 ops
    # before them form a smaller island. 73 - 6 = 67 and 77 - 6 = 71 ops on the GPU, one partition each, the 6 CPU
    # ops ahead of it: 2 node subsets per subgraph. The WebGPU build of the accelerator logs the same "67 operations
    # will run on the GPU, and the remaining 6 operations will run on the CPU" (and 71 / 6).
    model = load_model(str(Path(__file__).resolve().parent.parent / "sample_models" / "tiny_decoder.tflite"))
    for index, on_gpu in ((0, 67), (1, 71)):
        p = place_subgraph(model, index, GPU)
        assert sum(r is None for r in p.reasons.values()) == on_gpu
        assert len(p.partitions) == 1 and [taken for taken, _ in p.subsets] == [False, True]
    classic = place_subgraph(model, 0, GPU, CLASSIC)
    assert sum(r is None for r in classic.reasons.values()) < 67


def test_int64_parameters_refused():
    # ML Drift's parsers read their parameters in IsSupported (PadOperationParser: PreReadTensor of an INT32 HW
    # tensor): INT64 paddings, as litert-torch 0.9.4 writes for PADV2, fail "src has wrong size". The classic
    # delegate reads them only in Parse, after the partitions are fixed (not modelled).
    pads = [[0, 0], [1, 1], [1, 1], [0, 0]]
    out = [((1, 10, 10, 4), F)]
    assert one("PADV2", [X4, ((4, 2), "INT32", pads), ((), F, 0.0)], out, config=DRIFT) is None
    drift, classic = both("PADV2", [X4, ((4, 2), "INT64", pads), ((), F, 0.0)], out)
    assert refused(drift, CATEGORY_DTYPE, "paddings input is INT64") and classic is None
