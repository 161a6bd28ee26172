"""The arena facts of TensorFlow Lite Micro's CMSIS-NN kernels, for a target built with them.

Most Cortex-M builds of TFLM link the CMSIS-NN optimized kernels (``OPTIMIZED_KERNEL_DIR=cmsis_nn``,
tflite-micro tensorflow/lite/micro/kernels/cmsis_nn/*.cc, commit 90b983c). Their Prepare asks for
a scratch buffer in the head (``RequestScratchBufferInArena``) sized by the CMSIS-NN library's own
``arm_*_get_buffer_size`` functions (ARM-software/CMSIS-NN Source/*/arm_*_get_buffer_sizes_*.c,
commit 99f736a), and their OpData wraps the reference kernel's with a buffer index or more.

The sizes depend on the CPU features the library is compiled for (``TflmTarget.features``): ``"mve"``
(Helium: ``ARM_MATH_MVEI``, Cortex-M55/M85), ``"dsp"`` (``ARM_MATH_DSP``, Cortex-M4/M7/M33) or
``"none"`` (Cortex-M0/M0+/M3). The functions below follow those C functions (read, not copied: the
same arithmetic, named as there). The build is TFLM's default: GCC (``TOOLCHAIN := gcc``; with Arm
Compiler 6 the DSP 1x1 fast convolution asks for ``4 * input channels`` bytes, and a depthwise
convolution of one input channel becomes a convolution only above 8 output channels on MVE) and
``KERNELS_OPTIMIZED_FOR_SPEED`` (the Makefile's default). None of this is checked against a Cortex-M
build or an emulator here: docs/memory.md, "CMSIS-NN".

Each op's facts start from its reference kernel's (the builtin options are parsed alike) and replace
what the CMSIS-NN kernel does differently; the op types CMSIS-NN does not implement keep their
reference kernels (:func:`tflite_flops.ops.tflm.tflm_kernel_table`). BATCH_MATMUL, SVDF and
UNIDIRECTIONAL_SEQUENCE_LSTM have no reference facts either: they stay unmodelled (named in the report).
"""

from __future__ import annotations

from .conv import CONV_HELD, CONV_THEN, tflm_op_data_conv, tflm_transpose_conv_params
from .elementwise import tflm_softmax_params
from .matmul import tflm_op_data_fully_connected
from .pool import tflm_op_data_pooling
from .registry import OpContext
from .tflm import TFLM_KERNELS, TflmKernel, TflmTarget, c_struct, per_channel, register_tflm

CMSIS_NN = "cmsis_nn"  # TflmTarget.kernels of a build with the CMSIS-NN kernels
MVE, DSP, NONE = "mve", "dsp", "none"  # TflmTarget.features
CH_IN_BLOCK_MVE = 124  # arm_nnsupportfunctions.h: the MVE depthwise kernel's channel block
ONE_IN_CH_THRESHOLD = 1  # CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD with GCC (8 with armclang)
REVERSE_TCOL_EFFICIENT_THRESHOLD = 16  # arm_nnsupportfunctions.h: input channels above which TRANSPOSE_CONV reverses


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _c_mod(a: int, b: int) -> int:
    """C's ``%`` (the sign of the dividend)."""
    return a - b * _c_div(a, b)


def _padding(size: int, kernel: int, stride: int, dilation: int, out: int) -> int:
    """TFLM's padding of one spatial dim (kernels/padding.h ComputePaddingWithOffset), from the output's size."""
    effective = (kernel - 1) * dilation + 1
    return max((out - 1) * stride + effective - size, 0) // 2


def conv_s8_size(features: str, channels: int, kw: int, kh: int) -> int:
    """``arm_convolve_s8_get_buffer_size``: the im2col columns (MVE: four buffers of whole 16-byte lanes;
    otherwise two int16 columns, rounded up to 4)."""
    cols = channels * kw * kh
    if features == MVE:
        return 4 * ((cols + 15) // 16) * 16  # arm_convolve_s8_get_buffer_size_mve
    return 2 * (cols + (4 - cols % 4) % 4) * 2


def conv_1xn_s8_size_mve(pad_w: int, stride_w: int, in_w: int, in_c: int, kw: int, kh: int, out_w: int) -> int:
    """``arm_convolve_1_x_n_s8_get_buffer_size_mve``: the padded left and right columns, or the general
    size when the output does not split into left-padded, unpadded and right-padded columns."""
    total_pad = (out_w - 1) * stride_w + kw - in_w
    asym = _c_mod(total_pad, 2)
    right = max(1, _c_div(pad_w + asym + stride_w - 1, stride_w)) if pad_w + asym != 0 else 0
    left = max(1, _c_div(pad_w + stride_w - 1, stride_w)) if pad_w != 0 else 0
    middle = max(out_w - (right + left), 0)
    if right + middle + left != out_w:
        return conv_s8_size(MVE, in_c, kw, kh)
    pad_left = pad_w * in_c
    pad_right = right * in_c if asym else pad_left
    elems_left = kw * in_c
    return max(elems_left + pad_left, elems_left - in_c + pad_right)


def conv_wrapper_s8_size(features: str, in_hwc: tuple[int, int, int], filter_hwc: tuple[int, int, int],
                         out_w: int, stride: tuple[int, int], dilation: tuple[int, int], pad: tuple[int, int]) -> int:
    """``arm_convolve_wrapper_s8_get_buffer_size``: the kernel the wrapper picks decides the buffer. A 1x1
    convolution (no padding, unit dilation, ungrouped) needs none (its DSP fast path only with armclang); a
    1xN one (input height 1) its own on MVE; otherwise im2col. ``stride``, ``dilation``, ``pad``: (h, w)."""
    in_h, in_w, in_c = in_hwc
    kh, kw, kc = filter_hwc
    if pad == (0, 0) and (kh, kw) == (1, 1) and dilation == (1, 1) and in_c == kc:  # arm_nn_is_convolve_1x1
        return 0  # arm_convolve_1x1_s8_fast_get_buffer_size: 0 but with armclang's DSP build; the strided 1x1: 0
    if in_h == 1 and dilation[1] == 1 and kh == 1 and (stride[1] * in_c) % 4 == 0 and in_c == kc:  # 1_x_n
        if features == MVE:
            return conv_1xn_s8_size_mve(pad[1], stride[1], in_w, in_c, kw, kh, out_w)
    return conv_s8_size(features, in_c, kw, kh)


def conv_wrapper_s16_size(features: str, channels: int, kw: int, kh: int) -> int:
    """``arm_convolve_wrapper_s16_get_buffer_size``: im2col of int16 (MVE: four buffers of 8-lane registers)."""
    cols = channels * kw * kh
    return 4 * ((cols + 7) // 8) * 8 * 2 if features == MVE else 2 * cols * 2


def depthwise_wrapper_s8_size(features: str, in_hwc: tuple[int, int, int], batch: int, kh: int, kw: int, out_c: int,
                              out_w: int, stride: tuple[int, int], dilation: tuple[int, int], pad: tuple[int, int],
                              int4: bool = False) -> int:
    """``arm_depthwise_conv_wrapper_s8_get_buffer_size`` (``_s4_`` for int4 filters). With one input channel
    on MVE the depthwise convolution runs as a convolution: its buffer and the filter reordered. With a
    depth multiplier of 1: none for a 3x3 with padding up to 1 (but on MVE, and int4), otherwise the
    optimized kernel's (MVE: four blocks of 124 channels per tap; DSP: an int16 per channel and tap)."""
    in_h, in_w, in_c = in_hwc
    if features == MVE and not int4 and in_c == 1 and out_c > ONE_IN_CH_THRESHOLD:
        # arm_deptwise_conv_s8_one_in_ch_get_buffer_size_mve: the filter as a convolution's (c = 1). The
        # TFLM kernel leaves the stride of its dw_conv_params unset; the op's is taken here.
        size = conv_wrapper_s8_size(MVE, in_hwc, (kh, kw, 1), out_w, stride, dilation, pad)
        return size + out_c * kh * kw
    if in_c != out_c or batch != 1 or dilation != (1, 1):
        return 0
    if features != MVE and not int4 and (kh, kw) == (3, 3) and pad[0] <= 1 and pad[1] <= 1:
        return 0  # arm_depthwise_conv_3x3_s8 takes no buffer
    if features == MVE:
        return 4 * CH_IN_BLOCK_MVE * kw * kh  # arm_depthwise_conv_s8_opt_get_buffer_size_mve
    if features == DSP or int4:  # the s4 optimized kernel's size is the DSP one without DSP too
        return in_c * kw * kh * 2  # arm_depthwise_conv_s8_opt_get_buffer_size_dsp
    return 0


def transpose_conv_s8_sizes(features: str, in_hwc: tuple[int, int, int], kh: int, kw: int, out_c: int,
                            stride: tuple[int, int]) -> tuple[int, int]:
    """``arm_transpose_conv_s8_get_buffer_size`` and ``..._get_reverse_conv_buffer_size``: with strides up to
    2 and more than 16 input channels the transposed convolution runs as a convolution over the
    upsampled input (its im2col buffer, and the reversed filter); otherwise an int32 column buffer of
    ``max(kh, stride_h)`` rows (the width term takes ``stride_h`` as the library does)."""
    in_h, in_w, in_c = in_hwc
    if stride[0] <= 2 and stride[1] <= 2 and in_c > REVERSE_TCOL_EFFICIENT_THRESHOLD:
        return conv_s8_size(features, in_c, kw, kh), in_c * kw * kh * out_c
    buf_x = ((in_w - 1) * stride[1] + max(kw, stride[0])) * out_c
    return buf_x * max(kh, stride[0]) * 4, 0


def _geometry(ctx: OpContext, x: int, w_dims: tuple[int, int]) -> tuple[tuple[int, int, int], tuple[int, int],
                                                                         tuple[int, int], tuple[int, int], int, int]:
    """(input h, w, c), stride, dilation and padding as (h, w), and the output's width and batch of a
    convolution whose input is input ``x`` and whose filter's (h, w) are ``w_dims``."""
    _, in_h, in_w, in_c = ctx.input(x).shape
    out = ctx.output(0).shape
    stride = (ctx.opt("stride_h", 1) or 1, ctx.opt("stride_w", 1) or 1)
    dilation = (ctx.opt("dilation_h_factor", 1) or 1, ctx.opt("dilation_w_factor", 1) or 1)
    pad = (_padding(in_h, w_dims[0], stride[0], dilation[0], out[1]),
           _padding(in_w, w_dims[1], stride[1], dilation[1], out[2]))
    return (in_h, in_w, in_c), stride, dilation, pad, out[2], out[0]


# cmsis_nn/conv.cc Init (OpData: OpDataConv and a buffer index) and Prepare: per-channel multipliers and
# shifts for int8 and int16 only; int8: arm_convolve_wrapper_s8_get_buffer_size; int16 with an int64 bias
# or none (Prepare reads the bias as output 2, so always none): arm_convolve_wrapper_s16_get_buffer_size; a
# request only when the size is above 0. Int4 filters
# need no unpacking buffer (CMSIS-NN reads them packed). Temporaries: input, filter, output (the bias is
# asked for as an output, which there is none of), then CalculateOpDataConv's four.
@register_tflm("CONV_2D", kernels=CMSIS_NN)
def _cmsis_conv(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """CMSIS-NN's CONV_2D."""
    ref = TFLM_KERNELS["CONV_2D"](ctx, target, scales)
    x, w = ctx.input(0), ctx.input(1)
    _, kh, kw, kc = w.shape
    size = 0
    if x.dtype == "INT8":
        in_hwc, stride, dilation, pad, out_w, _ = _geometry(ctx, 0, (kh, kw))
        size = conv_wrapper_s8_size(target.features, in_hwc, (kh, kw, kc), out_w, stride, dilation, pad)
    elif x.dtype == "INT16":  # "an int64 bias or none": the bias is read as output 2, which is never there
        size = conv_wrapper_s16_size(target.features, x.shape[3], kw, kh)
    integer = x.dtype in ("INT8", "INT16")
    return ref._replace(op_data=c_struct(target, tflm_op_data_conv(target), "i").size,
                        prepare=per_channel(ctx, 1, 0) if integer else (), scratch=(size,) if size > 0 else (),
                        source="micro/kernels/cmsis_nn/conv.cc Prepare", held=("i0", "i1", "o0"), then=CONV_THEN)


# cmsis_nn/depthwise_conv.cc: OpData as conv.cc's; Prepare: per-channel arrays for int8 and int16 only;
# int8 input: arm_depthwise_conv_wrapper_s8_get_buffer_size (int4 filters: _s4_), a request when above 0.
@register_tflm("DEPTHWISE_CONV_2D", kernels=CMSIS_NN)
def _cmsis_depthwise(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """CMSIS-NN's DEPTHWISE_CONV_2D."""
    ref = TFLM_KERNELS["DEPTHWISE_CONV_2D"](ctx, target, scales)
    x, w = ctx.input(0), ctx.input(1)
    _, kh, kw, out_c = w.shape
    size = 0
    if x.dtype == "INT8":
        in_hwc, stride, dilation, pad, out_w, batch = _geometry(ctx, 0, (kh, kw))
        size = depthwise_wrapper_s8_size(target.features, in_hwc, batch, kh, kw, out_c, out_w, stride, dilation, pad,
                                         int4=w.dtype == "INT4")
    integer = x.dtype in ("INT8", "INT16")
    return ref._replace(op_data=c_struct(target, tflm_op_data_conv(target), "i").size,
                        prepare=per_channel(ctx, 1, 3) if integer else (), scratch=(size,) if size > 0 else (),
                        source="micro/kernels/cmsis_nn/depthwise_conv.cc Prepare", held=("i0", "i1", "o0"),
                        then=CONV_THEN)


# cmsis_nn/fully_connected.cc: OpData {OpDataFullyConnected, two buffer indices, the kernel sums' pointer,
# batches, accumulation depth, output depth}. Prepare (int8, int8 filter): an output of rank 3 or more whose
# depth is a multiple of 4 runs as a 1x1 convolution: per-tensor, a scratch of two int32 per output channel;
# otherwise arm_fully_connected_s8_get_buffer_size (MVE: an int32 per output channel, 0 else), which with a
# constant filter and bias (KERNELS_OPTIMIZED_FOR_SPEED) is a persistent buffer of the kernel sums
# instead. Int16 (arm_fully_connected_s16_get_buffer_size), int4 filters and float: no buffer.
@register_tflm("FULLY_CONNECTED", kernels=CMSIS_NN)
def _cmsis_fully_connected(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """CMSIS-NN's FULLY_CONNECTED."""
    ref = TFLM_KERNELS["FULLY_CONNECTED"](ctx, target, scales)
    x, w, out = ctx.input(0), ctx.input(1), ctx.output(0)
    op_data = c_struct(target, tflm_op_data_fully_connected(target), "ii", "p", "iii").size
    prepare, scratch = ref.prepare, ()
    if x.dtype == "INT8" and w.dtype != "INT4":
        depth = out.shape[-1]
        if len(out.shape) > 2 and w.shape[-1] % 4 == 0:  # is_conv_1x1_possible
            scratch = (8 * depth,) if scales <= 1 else ()  # + arm_convolve_1x1_s8_fast_get_buffer_size: 0 (GCC)
        elif target.features == MVE:
            constant = w.is_constant and (not ctx.has_input(2) or ctx.input(2).is_constant)
            prepare, scratch = (prepare + (4 * depth,), ()) if constant else (prepare, (4 * depth,))
    return ref._replace(op_data=op_data, prepare=prepare, scratch=scratch,
                        source="micro/kernels/cmsis_nn/fully_connected.cc Prepare")


# cmsis_nn/pooling.cc: OpData {OpDataPooling, a buffer index}; AveragePrepare (int8, int16):
# arm_avgpool_s8/s16_get_buffer_size, an int32 per channel with DSP, none on MVE or without DSP.
@register_tflm("AVERAGE_POOL_2D", kernels=CMSIS_NN)
def _cmsis_average_pool(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """CMSIS-NN's AVERAGE_POOL_2D."""
    ref = TFLM_KERNELS["AVERAGE_POOL_2D"](ctx, target, scales)
    integer = ctx.input(0).dtype in ("INT8", "INT16")
    size = 4 * ctx.output(0).shape[-1] if integer and target.features == DSP else 0
    return ref._replace(op_data=c_struct(target, tflm_op_data_pooling(target), "i").size,
                        scratch=(size,) if size > 0 else (), source="micro/kernels/cmsis_nn/pooling.cc AveragePrepare")


@register_tflm("MAX_POOL_2D", kernels=CMSIS_NN)
def _cmsis_max_pool(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """CMSIS-NN's MAX_POOL_2D: the OpData of pooling.cc, no buffer."""
    ref = TFLM_KERNELS["MAX_POOL_2D"](ctx, target, scales)
    return ref._replace(op_data=c_struct(target, tflm_op_data_pooling(target), "i").size,
                        source="micro/kernels/cmsis_nn/pooling.cc MaxPrepare")


# cmsis_nn/softmax.cc Init: CMSISNNSoftmaxParams {SoftmaxParams, rows, row size}; Prepare: the reference
# CalculateSoftmaxParams (the int16 lookup tables), no buffer.
@register_tflm("SOFTMAX", kernels=CMSIS_NN)
def _cmsis_softmax(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """CMSIS-NN's SOFTMAX."""
    ref = TFLM_KERNELS["SOFTMAX"](ctx, target, scales)
    return ref._replace(op_data=c_struct(target, tflm_softmax_params(target), "ii").size,
                        source="micro/kernels/cmsis_nn/softmax.cc Init, Prepare")


# cmsis_nn/transpose_conv.cc: OpData {ConvParams, three buffer indices, the per-channel pointers}; Prepare
# allocates the per-channel arrays (every dtype), then int8: arm_transpose_conv_s8_get_buffer_size and the
# reverse-convolution buffer, both requested even when 0; int16: an int64 per output element, and one per
# bias element for an int16 bias (CalculateOpData). Inputs: output shape, filter, input, bias.
@register_tflm("TRANSPOSE_CONV", kernels=CMSIS_NN)
def _cmsis_transpose_conv(ctx: OpContext, target: TflmTarget, scales: int) -> TflmKernel:
    """CMSIS-NN's TRANSPOSE_CONV."""
    ref = TFLM_KERNELS["TRANSPOSE_CONV"](ctx, target, scales)
    x, w = ctx.input(2), ctx.input(1)
    out_c, kh, kw, _ = w.shape
    scratch: tuple[int, ...] = ()
    if x.dtype == "INT8":
        stride = (ctx.opt("stride_h", 1) or 1, ctx.opt("stride_w", 1) or 1)
        scratch = transpose_conv_s8_sizes(target.features, tuple(x.shape[1:]), kh, kw, out_c, stride)
    elif x.dtype == "INT16":
        bias16 = ctx.has_input(3) and ctx.input(3).dtype == "INT16"
        scratch = (8 * ctx.output(0).n,) + ((8 * ctx.input(3).n,) if bias16 else ())
    op_data = c_struct(target, tflm_transpose_conv_params(target), "iii", "pp")
    return ref._replace(op_data=op_data.size, scratch=scratch,
                        source="micro/kernels/cmsis_nn/transpose_conv.cc Init, Prepare")
