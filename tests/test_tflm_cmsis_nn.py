"""The CMSIS-NN kernels' arena for TFLite Micro (``--tflm-target cortex-m*-cmsis-nn``).

The buffer sizes follow CMSIS-NN's ``arm_*_get_buffer_size`` functions (tflite_flops/ops/cmsis_nn.py);
the expected figures are derived by hand in the comments. No Cortex-M build or emulator of the
CMSIS-NN kernels runs here, so nothing below is checked against the runtime (docs/memory.md).
"""

from __future__ import annotations

import json

import numpy as np

import pytest

import tflite_flops
from test_memory import planner_inputs
from tflite_flops.analysis import resolve_shapes
from tflite_flops.cli import main
from tflite_flops.analysis.tflm import tflm_arena, tflm_figures, tflm_kernels
from tflite_flops.errors import InputSpecError
from tflite_flops.ops.cmsis_nn import (DSP, MVE, NONE, conv_1xn_s8_size_mve, conv_s8_size, conv_wrapper_s8_size,
                                       conv_wrapper_s16_size, depthwise_wrapper_s8_size, transpose_conv_s8_sizes)
from tflite_flops.reader.load import load_model
from tflite_flops.settings import CORTEX_M, TFLM_TARGETS, Settings, Target

M0, M4, M55 = (TFLM_TARGETS[k] for k in ("cortex-m0-cmsis-nn", "cortex-m4-cmsis-nn", "cortex-m55-cmsis-nn"))


def test_convolution_buffers_by_hand():
    # A 3x3 int8 conv on 16x16x8 -> 16 channels, stride 1, SAME (padding 1): im2col of 8 x 3 x 3 = 72 columns.
    # DSP and no DSP: two int16 columns of 72 (a multiple of 4): 2 x 72 x 2 = 288 bytes.
    # MVE: four buffers of whole 16-byte lanes: ceil(72 / 16) = 5 -> 4 x 5 x 16 = 320.
    for features, size in ((NONE, 288), (DSP, 288), (MVE, 320)):
        assert conv_wrapper_s8_size(features, (16, 16, 8), (3, 3, 8), 16, (1, 1), (1, 1), (1, 1)) == size
    # 27 columns (3x3 on 3 channels) round up to 28 without MVE: 2 x 28 x 2 = 112; MVE: 4 x 2 x 16 = 128.
    assert conv_s8_size(DSP, 3, 3, 3) == 112 and conv_s8_size(MVE, 3, 3, 3) == 128
    # A 1x1 unit-stride (or strided) conv without padding: no buffer with GCC, on every core.
    for features in (NONE, DSP, MVE):
        assert conv_wrapper_s8_size(features, (16, 16, 8), (1, 1, 8), 16, (1, 1), (1, 1), (0, 0)) == 0
        assert conv_wrapper_s8_size(features, (16, 16, 8), (1, 1, 8), 8, (2, 2), (1, 1), (0, 0)) == 0
    # A 1xN conv (input height 1) on MVE: input 1x10x8, kernel 1x3, stride 1, padding 1, 10 outputs.
    # Total padding 9 + 3 - 10 = 2 (even): one padded column each side, 8 unpadded; left: 3 x 8 + 1 x 8 = 32,
    # right: 2 x 8 + 8 = 24 -> 32. Without MVE it is the general im2col: 2 x 24 x 2 = 96.
    assert conv_1xn_s8_size_mve(1, 1, 10, 8, 3, 1, 10) == 32
    assert conv_wrapper_s8_size(MVE, (1, 10, 8), (1, 3, 8), 10, (1, 1), (1, 1), (0, 1)) == 32
    assert conv_wrapper_s8_size(DSP, (1, 10, 8), (1, 3, 8), 10, (1, 1), (1, 1), (0, 1)) == 96
    # int16, 3x3 on 8 channels (72 columns): 2 x 72 x 2 = 288; MVE: 8-lane registers, ceil(72 / 8) = 9 ->
    # 4 x 9 x 8 x 2 = 576.
    assert conv_wrapper_s16_size(DSP, 8, 3, 3) == 288 and conv_wrapper_s16_size(MVE, 8, 3, 3) == 576


def test_depthwise_and_transposed_buffers_by_hand():
    def dw(features, c_in, k, c_out, pad, int4=False):
        return depthwise_wrapper_s8_size(features, (16, 16, c_in), 1, k, k, c_out, 16, (1, 1), (1, 1), (pad, pad),
                                         int4)

    # 3x3, depth multiplier 1, padding 1: arm_depthwise_conv_3x3_s8, no buffer (but on MVE: 4 x 124 x 9 = 4,464)
    assert (dw(NONE, 8, 3, 8, 1), dw(DSP, 8, 3, 8, 1), dw(MVE, 8, 3, 8, 1)) == (0, 0, 4464)
    # 5x5 on 8 channels: DSP an int16 per channel and tap, 8 x 25 x 2 = 400; MVE 4 x 124 x 25 = 12,400; none 0
    assert (dw(NONE, 8, 5, 8, 2), dw(DSP, 8, 5, 8, 2), dw(MVE, 8, 5, 8, 2)) == (0, 400, 12400)
    # int4 filters: no 3x3 shortcut, and the DSP size without DSP too: 8 x 9 x 2 = 144
    assert dw(NONE, 8, 3, 8, 1, int4=True) == 144
    # depth multiplier 2: none; but one input channel on MVE runs as a convolution: im2col of 1 x 3 x 3 = 9
    # columns in 16-byte lanes (4 x 1 x 16 = 64) and the reordered filter (8 x 3 x 3 = 72): 136
    assert (dw(DSP, 4, 3, 8, 1), dw(DSP, 1, 3, 8, 1), dw(MVE, 1, 3, 8, 1)) == (0, 0, 136)
    # TRANSPOSE_CONV, 3x3, stride 2, 32 input channels (more than 16): as a convolution over the upsampled
    # input, im2col 2 x (32 x 9 = 288) x 2 = 1,152, and the reversed filter 32 x 9 x 16 outputs = 4,608.
    assert transpose_conv_s8_sizes(DSP, (8, 8, 32), 3, 3, 16, (2, 2)) == (1152, 4608)
    # 8 input channels: int32 columns of ((8 - 1) x 2 + max(3, 2)) x 16 = 272 by max(3, 2) = 3 rows:
    # 272 x 3 x 4 = 3,264, no reversed filter.
    assert transpose_conv_s8_sizes(MVE, (8, 8, 8), 3, 3, 16, (2, 2)) == (3264, 0)


# Each sample's CMSIS-NN scratch requests, derived by hand from its ops (kws_ds_cnn: CONV_2D 10x4 on
# 49x10x1, stride 2; four 3x3 depthwise on 25x5x64 with padding 1 and 1x1 convs; AVERAGE_POOL_2D to 64
# channels; FULLY_CONNECTED 64 -> 12. vww_mobilenet_v1_025: CONV_2D 3x3 on 96x96x3, stride 2; thirteen 3x3
# depthwise, padding 0 or 1; 1x1 convs; AVERAGE_POOL_2D to 256 channels; FULLY_CONNECTED 256 -> 2):
#   first conv, im2col of 1 x 10 x 4 = 40 columns: 2 x 40 x 2 = 160 (MVE: 4 x 3 lanes x 16 = 192);
#   vww's 3 x 3 x 3 = 27 -> 28 columns: 112 (MVE: 4 x 2 x 16 = 128);
#   3x3 depthwise: none (MVE: 4 x 124 x 9 = 4,464 each); 1x1 convs: none;
#   average pool with DSP: an int32 per channel, 4 x 64 = 256 (vww 4 x 256 = 1,024); none on MVE or M0;
#   FULLY_CONNECTED: no scratch (MVE: 4 x outputs, a persistent buffer as filter and bias are constant).
DW_KWS = [1, 3, 5, 7]
DW_VWW = list(range(1, 27, 2))
SCRATCH = {
    ("kws_ds_cnn", "cortex-m0-cmsis-nn"): {0: 160},
    ("kws_ds_cnn", "cortex-m4-cmsis-nn"): {0: 160, 9: 256},
    ("kws_ds_cnn", "cortex-m55-cmsis-nn"): {0: 192, **{i: 4464 for i in DW_KWS}},
    ("vww_mobilenet_v1_025", "cortex-m0-cmsis-nn"): {0: 112},
    ("vww_mobilenet_v1_025", "cortex-m4-cmsis-nn"): {0: 112, 27: 1024},
    ("vww_mobilenet_v1_025", "cortex-m55-cmsis-nn"): {0: 128, **{i: 4464 for i in DW_VWW}},
}
# The arena against the reference kernels' (kws 22,780 = 16,000 + 6,780; vww 100,604 = 73,728 + 26,876):
# (head, tail) growth.
#   head: kws on M55 grows by one depthwise's 4,464 (its two 8,000-byte tensors fill the head, the scratch
#   goes on top); the other scratch buffers fit beside the tensors alive with them (160 next to 496 + 8,000).
#   tail: OpData in 16-byte blocks: AVERAGE_POOL_2D 32 -> 36 B (48: +16), FULLY_CONNECTED 48 -> 72 (80: +32),
#   CONV_2D and DEPTHWISE 56 -> 60 and SOFTMAX 56 -> 64 (64 either way); on MVE the kernel sums (kws 48 B,
#   vww 8 -> 16); a 4-byte handle per request, before input_tensors_ at 16 bytes: up to 3 handles (12 B)
#   fit the padding that was there, 5 (kws) take 16 more, 14 (vww) 48 more.
GROWTH = {
    ("kws_ds_cnn", "cortex-m0-cmsis-nn"): (0, 48),
    ("kws_ds_cnn", "cortex-m4-cmsis-nn"): (0, 48),
    ("kws_ds_cnn", "cortex-m55-cmsis-nn"): (4464, 48 + 48 + 16),
    ("vww_mobilenet_v1_025", "cortex-m0-cmsis-nn"): (0, 48),
    ("vww_mobilenet_v1_025", "cortex-m4-cmsis-nn"): (0, 48),
    ("vww_mobilenet_v1_025", "cortex-m55-cmsis-nn"): (0, 48 + 16 + 48),
}


def _figures(samples_dir, name, target):
    model = load_model(samples_dir / "mcu" / f"{name}.tflite")
    states = resolve_shapes(model)
    sizes, constant = planner_inputs(model, states)
    return model, states, sizes, constant, tflm_figures(model, 0, states, sizes, constant, None, target)


@pytest.mark.parametrize("name,target", sorted(SCRATCH))
def test_cmsis_nn_changes_the_arena_by_the_modelled_scratch(samples_dir, name, target):
    model, states, sizes, constant, ours = _figures(samples_dir, name, TFLM_TARGETS[target])
    *_, ref = _figures(samples_dir, name, CORTEX_M)
    kernels = tflm_kernels(model, states, TFLM_TARGETS[target])
    requested = {op: k.scratch for (sg, op), k in kernels.items() if k.scratch}
    assert requested == {op: (n,) for op, n in SCRATCH[(name, target)].items()}
    # the head is the reference planner's over the tensors and those buffers, each alive while its op runs
    assert ours.head_bytes == tflm_arena(model, 0, sizes, constant, None, {(0, op): (n,) for op, n in
                                                                            SCRATCH[(name, target)].items()})
    assert ours.tensors_bytes == ref.tensors_bytes
    assert (ours.head_bytes - ref.head_bytes, ours.tail_bytes - ref.tail_bytes) == GROWTH[(name, target)]
    assert ours.arena_size_bytes == ref.arena_size_bytes + sum(GROWTH[(name, target)])


def test_the_tflm_target_is_chosen_by_name(samples_dir):
    path = str(samples_dir / "mcu" / "kws_ds_cnn.tflite")
    m55 = tflite_flops.analyze(path, settings=Settings(target=Target(tflm="cortex-m55-cmsis-nn"))).memory
    assert (m55.tflm_target, m55.tflm_arena_size_bytes, m55.tflm_pointer_bytes) == ("cortex-m55-cmsis-nn", 27356, 4)
    assert tflite_flops.analyze(path).memory.tflm_target == "cortex-m"  # the default: 22,780
    with pytest.raises(InputSpecError, match="cortex-m4-cmsis-nn"):
        Target(tflm="cortex-m99")


def test_tflm_target_option(samples_dir, capsys):
    path = str(samples_dir / "mcu" / "kws_ds_cnn.tflite")
    assert main(["analyze", path, "--tflm-target", "cortex-m4-cmsis-nn", "--format", "json"]) == 0
    memory = json.loads(capsys.readouterr().out)["memory"]
    assert (memory["tflm_target"], memory["tflm_arena_size_bytes"]) == ("cortex-m4-cmsis-nn", 22828)
    assert main(["analyze", path, "--tflm-target", "bogus"]) != 0  # one line, no traceback
    err = capsys.readouterr().err
    assert "unknown TFLite Micro target 'bogus'" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["mcu/kws_ds_cnn", "cnn_int8"])
def test_analyze_plans_the_scratch_as_the_public_functions(samples_dir, name):
    # analyze() plans the entry's buffers in one pass of its own; the scratch buffers of kws_ds_cnn's
    # AVERAGE_POOL_2D (DSP) and cnn_int8's depthwise (MVE) must be alive at their op there too (op i is at
    # TFLM scope i + 1), not with the op before: the head is the same either way.
    path = samples_dir / f"{name}.tflite"
    model = load_model(path)
    states = resolve_shapes(model)
    sizes, constant = planner_inputs(model, states)
    for key, target in TFLM_TARGETS.items():
        memory = tflite_flops.analyze(str(path), settings=Settings(target=Target(tflm=key))).memory
        ours = tflm_figures(model, 0, states, sizes, constant, None, target)
        assert (memory.tflm_head_bytes, memory.tflm_tail_bytes, memory.tflm_arena_size_bytes) == (
            ours.head_bytes, ours.tail_bytes, ours.arena_size_bytes), key


def _conv_model(kernel: int, padding: int, op: int = 3, c_out: int = 16) -> bytes:
    """x[1,16,16,8] int8 -CONV_2D (builtin 3; DEPTHWISE_CONV_2D 4) kernel x kernel, stride 1, per-channel
    filter-> y[1,h,w,c_out] int8 (padding 0: SAME, 1: VALID)."""
    from test_tflm_arena import INT8, INT32, _single_op

    out = 16 if padding == 0 else 17 - kernel
    depthwise = op == 4
    filt_shape = [1, kernel, kernel, c_out] if depthwise else [c_out, kernel, kernel, 8]
    q = {"scale": [0.05], "zero_point": [0]}
    wq = {"scale": [0.01] * c_out, "zero_point": [0] * c_out, "axis": 3 if depthwise else 0}
    options = (("DepthwiseConv2DOptions", {"padding": padding, "stride_w": 1, "stride_h": 1, "depth_multiplier": 1})
               if depthwise else ("Conv2DOptions", {"padding": padding, "stride_w": 1, "stride_h": 1}))
    return _single_op(op, [([1, 16, 16, 8], INT8, None, q),
                           (filt_shape, INT8, np.ones(filt_shape, np.int8), wq),
                           ([c_out], INT32, np.zeros(c_out, np.int32), {"scale": [0.0005] * c_out, "zero_point": [0] * c_out})],
                      [([1, out, out, c_out], INT8, None, q)], options)


def test_a_hand_built_convolution_requests_what_cmsis_nn_asks_for():
    # CONV_2D 3x3 int8 on 16x16x8 -> 16, SAME: padding 1, 72 im2col columns: 288 B (M0, M4), 320 (M55);
    # the reference kernel requests none. VALID 1x1: none anywhere. DEPTHWISE_CONV_2D 3x3 on 8 channels,
    # SAME (padding 1): none but on MVE (4 x 124 x 9 = 4,464); 5x5 VALID: DSP 8 x 25 x 2 = 400, MVE 12,400.
    cases = [((3, 0, 3, 16), (0, 288, 288, 320)), ((1, 1, 3, 16), (0, 0, 0, 0)),
             ((3, 0, 4, 8), (0, 0, 0, 4464)), ((5, 1, 4, 8), (0, 0, 400, 12400))]
    for args, sizes in cases:
        model = load_model(_conv_model(*args))
        states = resolve_shapes(model)
        got = tuple(sum(tflm_kernels(model, states, t)[(0, 0)].scratch) for t in (CORTEX_M, M0, M4, M55))
        assert got == sizes, args
        # OpDataConv and a buffer index: 56 + 4 = 60 bytes on a 32-bit MCU
        assert tflm_kernels(model, states, M4)[(0, 0)].op_data == 60
