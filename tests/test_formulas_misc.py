"""Hand-derived tests of the remaining builtins (tflite_flops/ops/misc.py, tflite_flops/ops/stablehlo.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_flops.errors import ShapeError
from tflite_flops.ops import lookup, lookup_value

from op_helpers import cost, ctx, shape, t


def test_rfft2d():
    # two 8×16 real transforms: N = 128, 2.5·128·log2(128) = 2.5·128·7 = 2,240 each -> 4,480
    c = ctx("RFFT2D", [t((2, 8, 16)), t((2,), "INT32", [8, 16])], [t((2, 8, 9), "COMPLEX64")])
    assert cost(c).flops == 4480
    assert shape(c) == [(2, 8, 9)]  # fft_w/2 + 1 = 9


def test_topk_nms_unique_are_flagged_estimates():
    # TOPK_V2: 4 rows of 100, k = 5: 400 · (1 + ⌈log2 5⌉ = 3) = 1,600
    c = ctx("TOPK_V2", [t((4, 100)), t((), "INT32", 5)], [t((4, 5)), t((4, 5), "INT32")])
    assert cost(c).flops == 1600 and "ESTIMATE" in cost(c).note
    assert shape(c) == [(4, 5), (4, 5)]
    # NMS V4: 50 boxes, keep 10: threshold 50 + sort 50·6 = 300 + IoU 19·50·10 = 9,500 -> 9,850
    nms = ctx("NON_MAX_SUPPRESSION_V4", [t((50, 4)), t((50,)), t((), "INT32", 10), t(()), t(())],
              [t((10,), "INT32"), t((), "INT32")])
    assert cost(nms).flops == 9850 and "ESTIMATE" in cost(nms).note
    assert cost(ctx("UNIQUE", [t((30,), "INT32")], [t((30,), "INT32"), t((30,), "INT32")])).flops == 30


def test_small_elementwise_like_ops():
    assert cost(ctx("FAKE_QUANT", [t((2, 5))], [t((2, 5))])).flops == 60  # 6 · 10
    assert cost(ctx("COMPLEX_ABS", [t((7,), "COMPLEX64")], [t((7,))])).flops == 28  # 4 · 7
    assert cost(ctx("CUMSUM", [t((3, 4)), t((), "INT32", 1)], [t((3, 4))])).flops == 12  # 1 · 12
    # BUCKETIZE, 3 boundaries -> 4 buckets -> ⌈log2 4⌉ = 2 compares × 10 = 20
    assert cost(ctx("BUCKETIZE", [t((10,))], [t((10,), "INT32")], boundaries=(0.0, 1.0, 2.0))).flops == 20
    # segment ops: one op per data element: 6·4 = 24
    data, ids = t((6, 4)), t((6,), "INT32", [0, 0, 1, 1, 2, 2])
    assert cost(ctx("SEGMENT_SUM", [data, ids], [t((3, 4))])).flops == 24
    assert shape(ctx("SEGMENT_SUM", [data, ids])) == [(3, 4)]
    c = ctx("UNSORTED_SEGMENT_MAX", [data, ids, t((), "INT32", 5)], [t((5, 4))])
    assert cost(c).flops == 24 and shape(c) == [(5, 4)]


def test_zero_and_not_costed_entries():
    for op in ("WHERE", "ONE_HOT", "SCATTER_ND", "DENSIFY", "HASHTABLE_LOOKUP", "READ_VARIABLE", "RANDOM_UNIFORM",
               "DILATE", "STABLEHLO_TRANSPOSE", "STABLEHLO_GATHER", "STABLEHLO_RNG_BIT_GENERATOR"):
        assert lookup(op).status == "zero", op
    for op in ("CUSTOM", "DELEGATE", "CONCAT_EMBEDDINGS", "STABLEHLO_CUSTOM_CALL", "STABLEHLO_SORT"):
        spec = lookup(op)
        assert spec.status == "not_costed" and spec.note, op


def test_layout_shapes_and_range_folding():
    assert shape(ctx("ONE_HOT", [t((2, 3), "INT32"), t((), "INT32", 10)])) == [(2, 3, 10)]
    assert shape(ctx("ONE_HOT", [t((2, 3), "INT32"), t((), "INT32", 10)], axis=0)) == [(10, 2, 3)]
    rng = ctx("RANGE", [t((), "INT32", 2), t((), "INT32", 11), t((), "INT32", 3)])
    assert shape(rng) == [(3,)]  # 2, 5, 8
    assert lookup_value("RANGE")(rng)[0].tolist() == [2, 5, 8]
    assert shape(ctx("MATRIX_DIAG", [t((2, 4))])) == [(2, 4, 4)]
    assert shape(ctx("SCATTER_ND", [t((3, 1), "INT32"), t((3, 4)), t((2,), "INT32", [8, 4])])) == [(8, 4)]
    with pytest.raises(ShapeError):
        shape(ctx("ONE_HOT", [t((2, 3), "INT32"), t((), "INT32")]))  # depth unknown


def test_range_length_is_arithmetic_never_allocated():
    # RANGE(0, 2**40, 1) in a few hundred bytes of model: 1,099,511,627,776 elements, counted, not made
    big = ctx("RANGE", [t((), "INT64", 0), t((), "INT64", 2**40), t((), "INT64", 1)])
    assert shape(big) == [(2**40,)]
    assert shape(ctx("RANGE", [t((), "INT32", 10), t((), "INT32", 1), t((), "INT32", -4)])) == [(3,)]  # 10, 6, 2
    assert shape(ctx("RANGE", [t((), "INT32", 5), t((), "INT32", 1), t((), "INT32", 2)])) == [(0,)]  # empty
    assert shape(ctx("RANGE", [t((), "FLOAT32", 0.0), t((), "FLOAT32", 1.0), t((), "FLOAT32", 0.25)])) == [(4,)]
    with pytest.raises(ShapeError, match="no length"):  # delta 0: the package's error, no numpy warning
        shape(ctx("RANGE", [t((), "INT32", 0), t((), "INT32", 5), t((), "INT32", 0)]))


def test_stablehlo_convolution_and_dot_general():
    # lhs [1, 8, 8, 3] (NHWC), kernel [3, 3, 3, 16] (HWIO), output [1, 8, 8, 16]:
    # MACs = 1,024 outputs · 3·3 · 3 = 27,648; FLOPs = 55,296
    conv = ctx("STABLEHLO_CONVOLUTION", [t((1, 8, 8, 3)), t((3, 3, 3, 16), value=np.zeros((3, 3, 3, 16)))],
               [t((1, 8, 8, 16))], kernel_spatial_dimensions=(0, 1), kernel_input_feature_dimension=2,
               kernel_output_feature_dimension=3)
    c = cost(conv)
    assert (c.macs, c.flops) == (27648, 55296)
    # [2, 3, 4] · [2, 4, 5], batch dim 0, contracting 2 / 1 -> [2, 3, 5]: MACs = 30 · 4 = 120
    dot = ctx("STABLEHLO_DOT_GENERAL", [t((2, 3, 4)), t((2, 4, 5))], [t((2, 3, 5))],
              lhs_batching_dimensions=(0,), rhs_batching_dimensions=(0,), lhs_contracting_dimensions=(2,),
              rhs_contracting_dimensions=(1,))
    assert (cost(dot).macs, cost(dot).flops) == (120, 240)
    assert shape(dot) == [(2, 3, 5)]


def test_windowed_and_reductions():
    # window 1×2×2×1 over an output of 1·4·4·8 = 128 -> 4 · 128 = 512
    rw = ctx("STABLEHLO_REDUCE_WINDOW", [t((1, 8, 8, 8)), t(())], [t((1, 4, 4, 8))], window_dimensions=(1, 2, 2, 1))
    assert cost(rw).flops == 512
    old = ctx("REDUCE_WINDOW", [t((1, 8, 8, 8)), t(()), t((4,), "INT64", [1, 2, 2, 1]), t((4,), "INT64", [1, 2, 2, 1])],
              [t((1, 4, 4, 8))], reduce_function="MAXIMUM")
    assert cost(old).flops == 512
    # reduce [4, 6] over dim 1 -> [4]: 24 − 4 = 20 body ops
    red = ctx("STABLEHLO_REDUCE", [t((4, 6)), t(())], [t((4,))], dimensions=(1,))
    assert cost(red).flops == 20 and shape(red) == [(4,)]
    # scatter of 12 update elements: 12
    assert cost(ctx("STABLEHLO_SCATTER", [t((10, 4)), t((3, 1), "INT32"), t((3, 4))], [t((10, 4))])).flops == 12


# ---------------------------------------------------------------------------------------------
# The interpreter's own shapes for single-op models with a dynamic leading dim (LiteRT runtime).

_I32, _F32, _C64 = 2, 0, 8


def _single_op(code: int, tensors: list[dict], n_inputs: int, buffers: list, options=None) -> bytes:
    from tflite_builder import build_model

    op = {"opcode": 0, "inputs": list(range(n_inputs)), "outputs": list(range(n_inputs, len(tensors)))}
    if options:
        op["options"] = options
    sg = {"tensors": tensors, "inputs": [i for i in range(n_inputs) if not tensors[i].get("buffer")],
          "outputs": op["outputs"], "operators": [op]}
    return build_model([sg], [code], buffers=[None, *buffers])


def _dyn(shape, dtype=_F32) -> dict:
    return {"shape": [1, *shape], "shape_signature": [-1, *shape], "type": dtype}


def _const(shape, dtype, buffer) -> dict:
    return {"shape": list(shape), "type": dtype, "buffer": buffer}


_RUNTIME_CASES = {
    "TOPK_V2": (48, [_dyn([10]), _const([], _I32, 1), _dyn([3]), _dyn([3], _I32)], 2,
                [np.int32(3).tobytes()], None),
    "ONE_HOT": (85, [_dyn([4], _I32), _const([], _I32, 1), _const([], _F32, 2), _const([], _F32, 3),
                     _dyn([4, 6])], 4,
                [np.int32(6).tobytes(), np.float32(1).tobytes(), np.float32(0).tobytes()],
                ("OneHotOptions", {"axis": -1})),
    "RFFT2D": (131, [_dyn([8, 16]), _const([2], _I32, 1), _dyn([8, 9], _C64)], 2,
               [np.array([8, 16], np.int32).tobytes()], None),
    "EMBEDDING_LOOKUP": (7, [_dyn([], _I32), _const([10, 4], _F32, 1),
                             _dyn([4])], 2, [np.ones((10, 4), np.float32).tobytes()], None),
    "CUMSUM": (128, [_dyn([5]), _const([], _I32, 1), _dyn([5])], 2, [np.int32(1).tobytes()], None),
    "MATRIX_DIAG": (113, [_dyn([4]), _dyn([4, 4])], 1, [], None),
}


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(_RUNTIME_CASES))
def test_output_shapes_match_the_interpreter(name):
    import tflite_flops
    from tf_reference import interpreter_shapes

    code, tensors, n_inputs, buffers, options = _RUNTIME_CASES[name]
    data = _single_op(code, tensors, n_inputs, buffers, options)
    new = (3,) + tuple(tensors[0]["shape"][1:])  # batch 1 -> 3
    runtime = interpreter_shapes(data, {0: new})
    (op,) = tflite_flops.analyze(data, input_shapes={0: new}).ops
    assert op.op_type == name and op.status in ("ok", "zero")
    assert list(op.outputs) == [runtime[i] for i in range(n_inputs, len(tensors))]
