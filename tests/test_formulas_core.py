"""Hand-derived tests of the core formulas (ops/conv.py, matmul.py, elementwise.py, pool.py,
reduce.py, layout.py). Each expected number is worked out in the comment beside it.
"""

from __future__ import annotations

import pytest

from tflite_flops.errors import ShapeError
from tflite_flops.ops import lookup

from op_helpers import cost, ctx, shape, t


def test_one_by_one_conv_on_one_pixel_is_two_flops():
    x, w, y = t((1, 1, 1, 1)), t((1, 1, 1, 1), const=True), t((1, 1, 1, 1))
    # 1 MAC = 1 multiply + 1 add
    assert (cost(ctx("CONV_2D", [x, w, None], [y])).macs, cost(ctx("CONV_2D", [x, w, None], [y])).flops) == (1, 2)
    # + bias: 1 per output element -> 3; + fused RELU on a float kernel: 1 more -> 4
    assert cost(ctx("CONV_2D", [x, w, t((1,), const=True)], [y])).flops == 3
    assert cost(ctx("CONV_2D", [x, w, t((1,), const=True)], [y], fused_activation_function="RELU")).flops == 4
    # an int8 kernel folds RELU into its output clamp: 3 OPs
    xi, wi, yi = t((1, 1, 1, 1), "INT8"), t((1, 1, 1, 1), "INT8", const=True), t((1, 1, 1, 1), "INT8")
    assert cost(ctx("CONV_2D", [xi, wi, t((1,), "INT32", const=True)], [yi],
                    fused_activation_function="RELU")).flops == 3


def test_conv2d_mobilenet_stem():
    # 224×224×3 -> 3×3 stride 2 SAME -> 112×112×32, bias, RELU6
    c = ctx("CONV_2D", [t((1, 224, 224, 3)), t((32, 3, 3, 3), const=True), t((32,), const=True)],
            [t((1, 112, 112, 32))], padding="SAME", stride_h=2, stride_w=2, fused_activation_function="RELU6")
    r = cost(c)
    # MACs = 1·112·112·32 · 3·3·3 = 10,838,016
    assert r.macs == 10838016
    # FLOPs = 2·10,838,016 + 401,408 bias (1·112·112·32) + 2·401,408 RELU6 = 22,880,256
    assert r.flops == 22880256
    assert shape(c) == [(1, 112, 112, 32)]


def test_grouped_conv_and_valid_padding():
    # C_in 8 in 2 groups (filter dim 3 = 4), C_out 6, 3×3 VALID stride 1 on 10×10 -> 8×8
    c = ctx("CONV_2D", [t((2, 10, 10, 8)), t((6, 3, 3, 4), const=True), None], [t((2, 8, 8, 6))], padding="VALID")
    # MACs = 2·8·8·6 · 3·3·4 = 768 · 36 = 27,648
    assert cost(c).macs == 27648 and "groups=2" in cost(c).note
    assert shape(c) == [(2, 8, 8, 6)]


def test_depthwise_with_multiplier():
    # C_in 4, multiplier 2 -> C_out 8; 3×3 SAME stride 1 on 5×5
    c = ctx("DEPTHWISE_CONV_2D", [t((1, 5, 5, 4)), t((1, 3, 3, 8), const=True), t((8,), const=True)],
            [t((1, 5, 5, 8))], padding="SAME", depth_multiplier=2)
    # MACs = 1·5·5·8 · 3·3 = 1,800; FLOPs = 3,600 + 200 bias = 3,800
    assert (cost(c).macs, cost(c).flops) == (1800, 3800)


def test_fully_connected_nd_input_and_keep_num_dims():
    # input [2, 3, 16], weights [10, 16]: B = 96/16 = 6 rows
    c = ctx("FULLY_CONNECTED", [t((2, 3, 16)), t((10, 16), const=True), t((10,), const=True)], [t((2, 3, 10))],
            keep_num_dims=True)
    # MACs = 6·10·16 = 960; FLOPs = 1,920 + 60 bias = 1,980
    assert (cost(c).macs, cost(c).flops) == (960, 1980)
    assert shape(c) == [(2, 3, 10)]
    assert shape(ctx("FULLY_CONNECTED", c.inputs, c.outputs, keep_num_dims=False)) == [(6, 10)]
    with pytest.raises(ShapeError):
        cost(ctx("FULLY_CONNECTED", [t((2, 7)), t((10, 16), const=True)], [t((2, 10))]))


def test_batch_matmul_adjoint_and_broadcast():
    # x [2, 1, 4, 3] with adj_x -> 3×4 per batch; y [5, 4, 6]; broadcast batch [2, 5] -> out [2, 5, 3, 6]
    c = ctx("BATCH_MATMUL", [t((2, 1, 4, 3)), t((5, 4, 6))], [t((2, 5, 3, 6))], adj_x=True)
    # MACs = 2·5 · 3·6 · 4 = 720; FLOPs = 1,440
    assert (cost(c).macs, cost(c).flops) == (720, 1440)
    assert shape(c) == [(2, 5, 3, 6)]


def test_transpose_conv_counts_over_the_input():
    # input [1, 8, 8, 16] -> 3×3 stride 2 -> [1, 16, 16, 4]; weights [4, 3, 3, 16]; bias
    c = ctx("TRANSPOSE_CONV", [t((4,), "INT32", value=[1, 16, 16, 4]), t((4, 3, 3, 16), const=True),
                               t((1, 8, 8, 16)), t((4,), const=True)], [t((1, 16, 16, 4))])
    # MACs = n(input) 1,024 · 3·3 · 4 = 36,864; FLOPs = 73,728 + 1,024 bias (16·16·4) = 74,752
    assert (cost(c).macs, cost(c).flops) == (36864, 74752)


def test_conv3d_and_transpose():
    # CONV_3D: [1, 4, 8, 8, 2] -> 3×3×3 SAME -> [1, 4, 8, 8, 5]; filter [3, 3, 3, 2, 5]
    c = ctx("CONV_3D", [t((1, 4, 8, 8, 2)), t((3, 3, 3, 2, 5), const=True), None], [t((1, 4, 8, 8, 5))],
            padding="SAME")
    # MACs = 1·4·8·8·5 · 27·2 = 1,280 · 54 = 69,120
    assert cost(c).macs == 69120
    ct = ctx("CONV_3D_TRANSPOSE", [t((5,), "INT32", value=[1, 8, 16, 16, 5]), t((2, 2, 2, 5, 3), const=True),
                                   t((1, 4, 8, 8, 3)), None], [t((1, 8, 16, 16, 5))])
    # MACs = n(input) 768 · 2·2·2 · 5 = 30,720
    assert cost(ct).macs == 30720


def test_binary_elementwise_broadcast_and_fused_activation():
    c = ctx("ADD", [t((1, 4, 4, 8)), t((8,))], [t((1, 4, 4, 8))], fused_activation_function="RELU6")
    # 128 adds + 2·128 for RELU6 = 384
    assert cost(c).flops == 384
    assert shape(c) == [(1, 4, 4, 8)]
    # SQUARED_DIFFERENCE 2/elem: 2·30 = 60; ADD_N of 3 inputs: 2 adds · 10 = 20
    assert cost(ctx("SQUARED_DIFFERENCE", [t((5, 6)), t((5, 6))], [t((5, 6))])).flops == 60
    assert cost(ctx("ADD_N", [t((10,))] * 3, [t((10,))])).flops == 20
    with pytest.raises(ShapeError):
        shape(ctx("MUL", [t((3, 4)), t((5,))]))


def test_activations_and_softmax_constants():
    x = [t((2, 50))]
    y = [t((2, 50))]
    assert cost(ctx("LOGISTIC", x, y)).flops == 6400  # 64 · 100
    assert cost(ctx("TANH", x, y)).flops == 6400
    assert cost(ctx("SOFTMAX", x, y)).flops == 6400
    assert cost(ctx("HARD_SWISH", x, y)).flops == 500  # 5 · 100
    assert cost(ctx("RELU6", x, y)).flops == 200  # 2 · 100
    assert cost(ctx("EXP", x, y)).flops == 3200  # 32 · 100
    assert cost(ctx("QUANTIZE", x, [t((2, 50), "INT8")])).flops == 200  # 2 · 100
    assert cost(ctx("PRELU", [t((2, 50)), t((50,), const=True)], y)).flops == 200  # 2 · 100
    assert cost(ctx("L2_NORMALIZATION", x, y)).flops == 300  # 3 · 100


def test_pools_and_resize():
    # 2×2 stride 2 on [1, 8, 8, 3] -> [1, 4, 4, 3] = 48 outputs, 4 taps each = 192
    c = ctx("MAX_POOL_2D", [t((1, 8, 8, 3))], [t((1, 4, 4, 3))], filter_height=2, filter_width=2,
            stride_h=2, stride_w=2, padding="VALID")
    assert cost(c).flops == 192 and shape(c) == [(1, 4, 4, 3)]
    # L2 pool: (2·4 + 1) · 48 = 432
    assert cost(ctx("L2_POOL_2D", c.inputs, c.outputs, filter_height=2, filter_width=2)).flops == 432
    # bilinear resize to [1, 16, 16, 3]: 7 · 768 = 5,376
    r = ctx("RESIZE_BILINEAR", [t((1, 8, 8, 3)), t((2,), "INT32", value=[16, 16])], [t((1, 16, 16, 3))])
    assert cost(r).flops == 5376 and shape(r) == [(1, 16, 16, 3)]
    assert lookup("RESIZE_NEAREST_NEIGHBOR").status == "zero"


def test_reductions():
    axis = t((2,), "INT32", value=[1, 2])
    # MEAN over H, W of [1, 7, 7, 64]: n(in) = 3,136 (3,072 adds + 64 divides)
    m = ctx("MEAN", [t((1, 7, 7, 64)), axis], [t((1, 64))])
    assert cost(m).flops == 3136 and shape(m) == [(1, 64)]
    # SUM: n(in) − n(out) = 3,136 − 64 = 3,072
    assert cost(ctx("SUM", [t((1, 7, 7, 64)), axis], [t((1, 64))])).flops == 3072
    assert shape(ctx("SUM", [t((1, 7, 7, 64)), axis], keep_dims=True)) == [(1, 1, 1, 64)]
    # ARG_MAX over the last axis of [4, 10]: 40 − 4 = 36 compares
    assert cost(ctx("ARG_MAX", [t((4, 10)), t((1,), "INT32", value=[1])], [t((4,), "INT32")])).flops == 36


def test_data_movement_is_zero_with_shapes():
    for op in ("RESHAPE", "TRANSPOSE", "GATHER", "PAD", "CONCATENATION", "STRIDED_SLICE", "SHAPE"):
        spec = lookup(op)
        assert spec.status == "zero" or (op == "CONCATENATION" and spec.status == "ok"), op
    assert cost(ctx("CONCATENATION", [t((1, 2)), t((1, 3))], [t((1, 5))], axis=1)).flops == 0
    assert shape(ctx("RESHAPE", [t((2, 3, 4)), t((2,), "INT32", value=[-1, 4])])) == [(6, 4)]
    assert shape(ctx("TRANSPOSE", [t((2, 3, 4)), t((3,), "INT32", value=[2, 0, 1])])) == [(4, 2, 3)]
    assert shape(ctx("PAD", [t((1, 4, 4, 3)), t((4, 2), "INT32", value=[[0, 0], [1, 1], [2, 2], [0, 0]])])) \
        == [(1, 6, 8, 3)]
    assert shape(ctx("CONCATENATION", [t((1, 2)), t((1, 3))], axis=1)) == [(1, 5)]
