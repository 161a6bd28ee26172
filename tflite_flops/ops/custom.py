"""Custom ops found in published production models, registered as ``CUSTOM:<custom_code>``.

* ``TFLite_Detection_PostProcess`` (SSD box decoding + NMS; ``detection_postprocess.cc``);
* MediaPipe: ``Convolution2DTransposeBias``, ``MaxPoolingWithArgmax2D``, ``MaxUnpooling2D``,
  ``TransformTensorBilinear``, ``TransformLandmarks``, ``Landmarks2TransformMatrix``;
* ``UNIDIRECTIONAL_SEQUENCE_GRU`` (``unidirectional_sequence_gru.cc`` / ``gru_cell.cc``).

MediaPipe's ops store a raw C struct instead of a FlexBuffer map; the reader then exposes the
int32 words as ``raw_int32`` (TfLiteTransposeConvParams: padding, stride_w, stride_h;
TfLitePoolParams: padding, stride_w, stride_h, filter_w, filter_h, activation), padding
1 = SAME, 2 = VALID. Unknown custom ops stay unsupported; users add theirs with
``register_cost("CUSTOM:MyOp")``.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC
from .conv import conv_out_dim, transpose_conv_padding, transposed_conv2d_cost
from .facts import register_facts
from .placement import (CATEGORY_INPUTS, CATEGORY_OP_TYPE, CATEGORY_OPTIONS, CATEGORY_SHAPE, DRIFT_INT_COMPOSITES, GPU,
                        XNNPACK, DelegateOp, float_only, gpu_activation, gpu_drift, gpu_drift_only, gpu_io,
                        gpu_positive, gpu_version, num_io, rank_in, reason, register_placement, static)
from .registry import (EXP_LIKE, TRANSCENDENTAL, Cost, OpContext, Shape, register, register_traits, register_zero,
                       shape_fn)

DETECTION = "CUSTOM:TFLite_Detection_PostProcess"
CONV_T_BIAS = "CUSTOM:Convolution2DTransposeBias"
MAXPOOL_ARGMAX = "CUSTOM:MaxPoolingWithArgmax2D"
MAX_UNPOOL = "CUSTOM:MaxUnpooling2D"
TRANSFORM_BILINEAR = "CUSTOM:TransformTensorBilinear"
TRANSFORM_LANDMARKS = "CUSTOM:TransformLandmarks"
LANDMARKS_TO_MATRIX = "CUSTOM:Landmarks2TransformMatrix"
GRU = "CUSTOM:UNIDIRECTIONAL_SEQUENCE_GRU"
RESAMPLER = "CUSTOM:Resampler"  # (no cost formula: only its GPU placement is known)

_PADDING = {1: "SAME", 2: "VALID"}


def _raw(ctx: OpContext, i: int) -> int | None:
    raw = ctx.opt("raw_int32")
    return int(raw[i]) if raw is not None and len(raw) > i else None


def _log2(n: int) -> int:
    """⌈log2 n⌉ for n ≥ 1 (comparisons of a binary search / sort level count)."""
    return max(int(n) - 1, 0).bit_length()


# ---------------------------------------------------------------------------------------------
# TFLite_Detection_PostProcess. Inputs: 0 box encodings [1, A, 4+], 1 class scores [1, A, C(+1)],
# 2 anchors [A, 4]. An ESTIMATE: decoding is exact, the NMS part is data-dependent.
#   decode (DecodeCenterSizeBoxes), per anchor: y/x centre = enc/scale·anchor_size + anchor_centre
#     (div, mul, add) ×2 = 6; half h/w = 0.5·exp(enc/scale)·anchor_size (div, exp, 2 mul) ×2
#     = 6 + 2·EXP(32); corners 4 add/sub → 16 + 64 = 80 per anchor;
#   scores dequantized 2/elem when the inputs are quantized (boxes too);
#   fast NMS (default): per anchor, top-k class among C (C compares) + score threshold (1),
#     a sort of the A candidates (A·⌈log2 A⌉ compares), then at most A·D IoU tests (D =
#     max_detections), 19 FLOPs each: intersection 9 (4 min/max, 2 sub, 2 clamp, 1 mul),
#     two areas 6, union 2, divide 1, threshold compare 1;
#   regular NMS (use_regular_nms): per class, threshold A + sort A·⌈log2 A⌉ + A·d·19 IoU (d =
#     detections_per_class), then a merge sort of the C·d survivors.
IOU_FLOPS = 19
DECODE_FLOPS = 16 + 2 * EXP_LIKE


@register(DETECTION, "FLOPs ≈ 80·A decode + class max A·C + sort A·log2A + IoU 19·A·D (upper bound); estimate",
          reference="estimate from the kernel structure (detection_postprocess.cc)")
def detection_postprocess(ctx: OpContext) -> Cost:
    """SSD post-processing: box decoding and (fast or regular) non-max suppression."""
    boxes, scores = ctx.input(0), ctx.input(1)
    if boxes.rank < 2 or scores.rank < 2:
        raise ShapeError(f"{DETECTION}: boxes {boxes.shape} / scores {scores.shape} need rank >= 2")
    anchors = boxes.shape[-2]
    classes = int(ctx.opt("num_classes", 0) or 0) or max(scores.shape[-1] - 1, 1)
    max_det = int(ctx.opt("max_detections", 0) or 0) or (ctx.output(0).shape[1] if ctx.output(0).rank > 1 else 10)
    flops = DECODE_FLOPS * anchors
    if scores.dtype not in ("FLOAT32", "FLOAT16"):
        flops += 2 * (scores.n + boxes.n)
    if ctx.opt("use_regular_nms", False):
        per_class = int(ctx.opt("detections_per_class", 0) or 0) or 100
        survivors = classes * per_class
        flops += classes * (anchors + anchors * _log2(anchors) + IOU_FLOPS * anchors * per_class)
        flops += survivors * _log2(survivors)
        kind = "regular NMS"
    else:
        flops += anchors * classes + anchors + anchors * _log2(anchors) + IOU_FLOPS * anchors * max_det
        kind = "fast NMS"
    return Cost(0, flops, note=f"ESTIMATE: {kind} is data-dependent; IoU tests counted as an upper bound "
                               f"({anchors} anchors, {classes} classes, {max_det} detections)")


@shape_fn(DETECTION)
def _detection_shape(ctx: OpContext) -> list[Shape]:
    d = int(ctx.opt("max_detections", 0) or 0)
    if not d:
        raise ShapeError(f"{DETECTION}: max_detections is not in the options")
    k = int(ctx.opt("max_classes_per_detection", 1) or 1)
    if ctx.opt("use_regular_nms", False):
        k = 1
    return [(1, d * k, 4), (1, d * k), (1, d * k), (1,)]


register_traits(CONV_T_BIAS, sparse_weights=True)
# XNNPACK runs it by its deconvolution (xnnpack_delegate.cc VisitMediaPipeDeconvolutionNode), as a TRANSPOSE_CONV:
# that law predicts it (MediaPipe's selfie segmentation, 128x128x16 -> 256x256x1: ~0.85 ms, a stand-in law said 0.02)
register_facts(CONV_T_BIAS, law_as="TRANSPOSE_CONV")


# ---------------------------------------------------------------------------------------------
# Convolution2DTransposeBias (MediaPipe): inputs 0 x [N, H, W, C_in], 1 weights [C_out, K_h, K_w,
# C_in] (as TRANSPOSE_CONV), 2 bias [C_out]. Every input pixel scatters a full kernel:
#   MACs = n(input)·K_h·K_w·C_out; FLOPs = 2·MACs + n(out) (bias).
@register(CONV_T_BIAS, "MACs = N·Hi·Wi·Ci·Kh·Kw·Co (input spatial); FLOPs = 2·MACs + n(out) bias",
          reference="as TRANSPOSE_CONV (TFLite converter, GPU delegate)")
def conv2d_transpose_bias(ctx: OpContext) -> Cost:
    """MediaPipe's transposed convolution with bias."""
    return transposed_conv2d_cost(ctx, data=0, bias=2)


@shape_fn(CONV_T_BIAS)
def _conv_t_bias_shape(ctx: OpContext) -> list[Shape]:
    pad, sw, sh = _raw(ctx, 0), _raw(ctx, 1), _raw(ctx, 2)
    if pad not in _PADDING or not sw or not sh:
        raise ShapeError(f"{CONV_T_BIAS}: stride/padding options are not readable")
    n, h, w, _ = ctx.input(0).shape
    c_out, kh, kw, _ = ctx.input(1).shape
    if _PADDING[pad] == "SAME":
        return [(n, h * sh, w * sw, c_out)]
    return [(n, (h - 1) * sh + kh, (w - 1) * sw + kw, c_out)]


def _pool_params(ctx: OpContext) -> tuple[str, int, int, int, int]:
    """(padding, stride_h, stride_w, filter_h, filter_w) from the raw TfLitePoolParams."""
    pad, sw, sh, fw, fh = (_raw(ctx, i) for i in range(5))
    if pad not in _PADDING or not all((sw, sh, fw, fh)):
        raise ShapeError(f"{ctx.op_type}: pooling options are not readable")
    return _PADDING[pad], sh, sw, fh, fw  # type: ignore[return-value]


# MaxPoolingWithArgmax2D (MediaPipe): outputs 0 max values, 1 argmax indices [N, Ho, Wo, C].
# One compare per window tap (as MAX_POOL_2D): FLOPs = K_h·K_w·n(out). When the options cannot
# be read the window is taken as the stride implied by the shapes (H / Ho), flagged.
@register(MAXPOOL_ARGMAX, "FLOPs = Kh·Kw·n(out)", reference="as MAX_POOL_2D (TF profiler, TFLite converter)")
def max_pool_argmax(ctx: OpContext) -> Cost:
    """Max pooling that also returns the argmax positions."""
    out = ctx.output(0)
    note = ""
    try:
        _, _, _, fh, fw = _pool_params(ctx)
    except ShapeError:
        x = ctx.input(0).shape
        if len(x) != 4 or out.rank != 4 or not out.shape[1] or not out.shape[2]:
            raise
        fh, fw = max(x[1] // out.shape[1], 1), max(x[2] // out.shape[2], 1)
        note = f"options unreadable: window assumed {fh}x{fw} from the shapes"
    return Cost(0, fh * fw * out.n, note=note)


@shape_fn(MAXPOOL_ARGMAX)
def _pool_argmax_shape(ctx: OpContext) -> list[Shape]:
    pad, sh, sw, fh, fw = _pool_params(ctx)
    n, h, w, c = ctx.input(0).shape
    out = (n, conv_out_dim(h, fh, sh, 1, pad), conv_out_dim(w, fw, sw, 1, pad), c)
    return [out, out]


# MaxUnpooling2D (MediaPipe): inputs 0 values, 1 argmax indices; the output is zero-filled and
# each value is written at its index: data movement only.
register_zero(MAX_UNPOOL, "scatters each value to its argmax position (no arithmetic)",
              reference="onnx-tool MaxUnpool/ScatterND (0)")


@shape_fn(MAX_UNPOOL)
def _unpool_shape(ctx: OpContext) -> list[Shape]:
    pad, sh, sw, fh, fw = _pool_params(ctx)
    n, h, w, c = ctx.input(0).shape
    if pad == "SAME":
        return [(n, h * sh, w * sw, c)]
    return [(n, (h - 1) * sh + fh, (w - 1) * sw + fw, c)]


# TransformTensorBilinear (MediaPipe): inputs 0 x [N, H, W, C], 1 matrix [1, 1, 4, 4]; output
# [N, Ho, Wo, C]. Per output pixel: source coordinates from the affine matrix (2 × (2 mul + 2 add)
# = 8) and the bilinear weights (2 floor, 2 sub, 4 products/complements = 8); per output element:
# 4 mul + 3 add = 7 (as RESIZE_BILINEAR).
@register(TRANSFORM_BILINEAR, "FLOPs = 7·n(out) + 16·N·Ho·Wo",
          reference="as RESIZE_BILINEAR (fvcore/onnx-tool 4 mul + 3 add) + coordinate transform")
def transform_tensor_bilinear(ctx: OpContext) -> Cost:
    """Affine warp of an image with bilinear sampling."""
    out = ctx.output(0)
    if out.rank != 4:
        raise ShapeError(f"{TRANSFORM_BILINEAR}: output {out.shape}, expected rank 4")
    pixels = out.n // max(out.shape[3], 1)
    return Cost(0, 7 * out.n + 16 * pixels)


@shape_fn(TRANSFORM_BILINEAR)
def _transform_bilinear_shape(ctx: OpContext) -> list[Shape]:
    size = ctx.opt("output_size")
    x = ctx.input(0).shape
    if not size or len(size) != 2 or len(x) != 4:
        raise ShapeError(f"{TRANSFORM_BILINEAR}: output_size is not in the options")
    return [(x[0], int(size[0]), int(size[1]), x[3])]


# TransformLandmarks (MediaPipe): inputs 0 landmarks [1, 1, L, D], 1 matrix [1, 1, 4, 4]. Per
# landmark x' = m00·x + m01·y + m03 and y' likewise: 4 MACs + 2 adds; z (D ≥ 3) is scaled:
# 1 mul; the other components are copied.
@register(TRANSFORM_LANDMARKS, "MACs = 4·L; FLOPs = 2·MACs + 2·L + L·[D≥3]",
          reference="kernel structure (2-D affine transform per landmark)")
def transform_landmarks(ctx: OpContext) -> Cost:
    """Apply a 2-D affine matrix to every landmark."""
    x = ctx.input(0)
    if x.rank < 1 or not x.shape[-1]:
        raise ShapeError(f"{TRANSFORM_LANDMARKS}: landmarks {x.shape} need a last dim")
    dim = x.shape[-1]
    n = x.n // dim
    macs = 4 * n
    return Cost(macs, FLOPS_PER_MAC * macs + 2 * n + (n if dim >= 3 else 0), note=f"{n} landmarks")


shape_fn(TRANSFORM_LANDMARKS)(lambda ctx: [ctx.input(0).shape])


# Landmarks2TransformMatrix (MediaPipe): input 0 landmarks [1, L·D] or [1, 1, L, D]; output the
# 4×4 matrix. An ESTIMATE from the kernel's steps over the P landmarks it uses (subset_idxs pairs
# averaged, else all L): midpoint 4, running mean 2, rotation 6 (4 mul, 2 add), bounding box 4
# compares = 16 per point; plus a constant: atan2, sin, cos (3·32) + building and multiplying
# the 4×4 matrices (48).
@register(LANDMARKS_TO_MATRIX, "FLOPs ≈ 16·P + 3·32 + 48; estimate",
          reference="estimate from the kernel structure")
def landmarks_to_matrix(ctx: OpContext) -> Cost:
    """Affine matrix that aligns a face/hand crop from landmarks."""
    subset = ctx.opt("subset_idxs")
    if subset:
        points = len(subset) // 2 or len(subset)
    else:
        x = ctx.input(0)
        dim = 3 if x.rank < 3 else (x.shape[-1] or 3)
        points = x.n // dim
    return Cost(0, 16 * points + 3 * EXP_LIKE + 48, note=f"ESTIMATE over {points} landmark(s)")


shape_fn(LANDMARKS_TO_MATRIX)(lambda ctx: [(1, 1, 4, 4)])


register_traits(GRU, sparse_weights=True)


# UNIDIRECTIONAL_SEQUENCE_GRU (custom): inputs 0 x [T, B, I], 1 h [B, O], 2 gate_weight
# [2·O, I+O], 3 gate_bias [2·O], 4 candidate_weight [O, I+O], 5 candidate_bias [O]. Per step and
# batch row (gru_cell.cc):
#   gates = σ([x, h]·Wgᵀ + bg): 2·O·(I+O) MACs, 2·O bias, 2·O sigmoid (64);
#   r⊙h: O mul; c = tanh([x, r⊙h]·Wcᵀ + bc): O·(I+O) MACs, O bias, O tanh (64);
#   h' = u⊙(h − c) + c: 3·O.
#   MACs = T·B·3·O·(I+O); FLOPs = 2·MACs + T·B·O·(3 + 3·64 + 1 + 3).
@register(GRU, "MACs = T·B·3·O·(I+O); FLOPs = 2·MACs + T·B·O·(3 bias + 2σ + tanh (64 each) + 4)",
          reference="onnx-tool GRU (GEMM term); kernel structure (gru_cell.cc)")
def gru(ctx: OpContext) -> Cost:
    """Sequence GRU (TFLite custom op)."""
    gate_w, cand_w = ctx.input(2), ctx.input(4)
    if gate_w.rank != 2 or cand_w.rank != 2 or gate_w.shape[0] != 2 * cand_w.shape[0]:
        raise ShapeError(f"{GRU}: gate weights {gate_w.shape} / candidate weights {cand_w.shape} do not fit")
    n_out = cand_w.shape[0]
    n_in = cand_w.shape[1] - n_out
    x = ctx.input(0)
    if n_in <= 0 or x.n % n_in:
        raise ShapeError(f"{GRU}: input {x.shape} does not fit n_input {n_in}")
    rows = x.n // n_in
    macs = rows * (gate_w.n + cand_w.n)
    elem = n_out * (3 + 3 * TRANSCENDENTAL + 1 + 3)
    return Cost(macs, FLOPS_PER_MAC * macs + rows * elem, note=f"{rows} step·batch rows")


@shape_fn(GRU)
def _gru_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    n_out = ctx.input(4).shape[0]
    if len(x) != 3:
        raise ShapeError(f"{GRU}: input {x}, expected [T, B, I]")
    return [(x[0], x[1], n_out), (x[1], n_out)][:max(len(ctx.outputs), 1)]


# ---- GPU delegate placement (model_builder.cc NewOperationParser, kTfLiteBuiltinCustom case;
# gpu_compatibility.cc CheckCustomOpsGpuDelegateCompatibility) ---------------------------------------------------
# The delegate parses four custom ops itself. Every other custom name goes to NewCustomOperationParser:
# in LiteRT's build (tflite/delegates/gpu/common/default/custom_parsers.cc) an
# UnimplementedOperationParser, which refuses it; MediaPipe's build of the delegate links parsers for
# its landmark and transform ops (``DelegateConfig.gpu_mediapipe_ops``).


def _raw_struct(op: DelegateOp, n: int) -> tuple[int, ...] | None:
    """The op's raw C-struct custom options (``custom_initial_data``) as int32 words, or None when absent."""
    raw = op.opt("raw_int32")
    return tuple(int(v) for v in raw) if raw is not None and len(raw) >= n else None


def _no_options(op: DelegateOp) -> str:
    return reason(CATEGORY_OPTIONS, f"no custom options struct (the GPU delegate reads {op.op_type[7:]}'s "
                                    f"parameters from it)")


@register_placement(GPU, CONV_T_BIAS, source="gpu_compatibility.cc CheckCustomOpsGpuDelegateCompatibility "
                                             "(model_builder.cc TransposeConvCustomOperationParser)")
def _gpu_conv_t_bias(op: DelegateOp) -> str | None:
    """A filter input; TfLiteTransposeConvParams options with strides above 0 (any version)."""
    if len(op.inputs) < 2:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (no filter)")
    raw = _raw_struct(op, 3)
    if raw is None:
        return _no_options(op)
    return gpu_positive(op, ("stride_h", "stride_w"), "strides", (raw[2], raw[1]))


@register_placement(GPU, MAXPOOL_ARGMAX, source="model_builder.cc Pooling2DOperationParser::IsSupported, "
                                                "gpu_compatibility.cc CheckPooling2DGpuDelegateCompatibility")
def _gpu_max_pool_argmax(op: DelegateOp) -> str | None:
    """Up to v2; TfLitePoolParams options; one runtime input and two outputs; window and strides above
    0; no SIGN_BIT activation."""
    found = gpu_version(op, 2)
    if found:
        return found
    raw = _raw_struct(op, 6)
    if raw is None:
        return _no_options(op)
    return (gpu_io(op, 1, 2) or gpu_positive(op, ("filter_height", "filter_width"), "window", (raw[4], raw[3]))
            or gpu_positive(op, ("stride_h", "stride_w"), "strides", (raw[2], raw[1])) or gpu_activation(op, raw[5]))


@register_placement(GPU, MAX_UNPOOL, source="gpu_compatibility.cc CheckCustomOpsGpuDelegateCompatibility "
                                            "(model_builder.cc Unpooling2DOperationParser)")
def _gpu_max_unpool(op: DelegateOp) -> str | None:
    """Two runtime inputs (values, indices), one output; TfLitePoolParams with window and strides above 0."""
    found = gpu_io(op, 2, 1)
    if found:
        return found
    raw = _raw_struct(op, 5)
    if raw is None:
        return _no_options(op)
    return (gpu_positive(op, ("filter_height", "filter_width"), "window", (raw[4], raw[3]))
            or gpu_positive(op, ("stride_h", "stride_w"), "strides", (raw[2], raw[1])))


@register_placement(GPU, RESAMPLER, source="gpu_compatibility.cc CheckCustomOpsGpuDelegateCompatibility "
                                           "(model_builder.cc ResamplerOperationParser)")
def _gpu_resampler(op: DelegateOp) -> str | None:
    """Two runtime inputs, one output; 4-D source and warp of one batch; a warp of 2 channels or more."""
    found = gpu_io(op, 2, 1)
    if found:
        return found
    src, warp = op.input(0), op.input(1)
    if src.rank != 4 or warp.rank != 4:
        return reason(CATEGORY_SHAPE, f"source rank {src.rank} and warp rank {warp.rank} (4 each)")
    if src.shape[0] != warp.shape[0]:
        return reason(CATEGORY_SHAPE, f"source batch {src.shape[0]} and warp batch {warp.shape[0]}")
    if warp.shape[3] < 2:
        return reason(CATEGORY_SHAPE, f"warp has {warp.shape[3]} channels (2 or more)")
    return None


# MediaPipe's NewCustomOperationParser also knows the older names TransformTensor (v1 of
# TransformTensorBilinear) and Landmarks2TransformMatrixV2.
_MEDIAPIPE_RUNTIME_INPUTS = {TRANSFORM_BILINEAR: 2, "CUSTOM:TransformTensor": 2, TRANSFORM_LANDMARKS: 2,
                             LANDMARKS_TO_MATRIX: 1, "CUSTOM:Landmarks2TransformMatrixV2": 1}


@register_placement(GPU, tuple(_MEDIAPIPE_RUNTIME_INPUTS),
                    source="default/custom_parsers.cc NewCustomOperationParser (LiteRT: unimplemented); MediaPipe "
                           "build: TransformTensorBilinear / TransformLandmarks / LandmarksToTransformMatrix "
                           "OperationParser::IsSupported")
def _gpu_mediapipe(op: DelegateOp) -> str | None:
    """Refused by LiteRT's GPU delegates (no parser for these names). With MediaPipe's parsers (a build of the
    classic delegate): up to v2; two runtime inputs (one for Landmarks2TransformMatrix and its V2) and one output."""
    if gpu_drift(op):
        return reason(CATEGORY_OP_TYPE, f"the LiteRT GPU accelerator (ML Drift) has no parser for {op.op_type[7:]}")
    if not op.config.gpu_mediapipe_ops:
        return reason(CATEGORY_OP_TYPE, f"LiteRT's GPU delegate has no parser for {op.op_type[7:]} (only MediaPipe's "
                                        f"build of the delegate has)")
    return gpu_version(op, 2) or gpu_io(op, _MEDIAPIPE_RUNTIME_INPUTS[op.op_type], 1)


# The LiteRT GPU accelerator's own custom names (ml_drift_delegate/tflite/model_builder.cc NewOperationParser,
# kTfLiteBuiltinCustom: the custom_call.* parsers; then CustomOperationParserFactory for the names it
# SupportsIntegerTypes): none of them in the classic delegate.
_DRIFT_CUSTOM = ("CUSTOM:custom_call.GroupNorm", "CUSTOM:custom_call.LayerNorm", "CUSTOM:custom_call.RmsNorm",
                 "CUSTOM:custom_call.PixelShuffle", "CUSTOM:custom_call.absolute_positional_embedding",
                 "CUSTOM:custom_call.rotary_positional_embedding") + tuple(f"CUSTOM:{n}" for n in sorted(DRIFT_INT_COMPOSITES))


@register_placement(GPU, _DRIFT_CUSTOM, source="ml_drift_delegate/tflite/model_builder.cc NewOperationParser "
                                               "(kTfLiteBuiltinCustom), GroupNormParser / LayerNormParser / "
                                               "RmsNormParser / PixelShuffleParser / PositionalEmbeddingParser / "
                                               "RoPEParser::IsSupported; delegate/composite/custom_parsers.cc")
def _gpu_drift_custom(op: DelegateOp) -> str | None:
    """ML Drift only. The positional embedding: two inputs, one output; the rotary one: two inputs and one
    output, or three and two; the others: their tensors read as the kernel wants (not modelled further)."""
    found = gpu_drift_only(op)
    if found:
        return found
    name = op.op_type[7:]
    if name == "custom_call.absolute_positional_embedding" and (len(op.inputs), len(op.outputs)) != (2, 1):
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (2 and 1)")
    if name == "custom_call.rotary_positional_embedding" and (len(op.inputs), len(op.outputs)) not in ((2, 1), (3, 2)):
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs and {len(op.outputs)} outputs (2 and 1, or 3 and 2)")
    return None


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitNode's custom ops: VisitMediaPipeDeconvolutionNode,
# VisitMediaPipeMaxPoolingNode, VisitMediaPipeUnpoolingNode, VisitScaledDotAttentionCompositeNode) ---------------
# The MediaPipe ops read a raw TfLiteTransposeConvParams / TfLitePoolParams (``SafeCopyCustomData``: missing words
# are 0, padding 0 is "unknown"). A custom op the delegate refuses needs a kernel of its own in the interpreter.

SDPA = "CUSTOM:odml.scaled_dot_product_attention"
_XNN_MP = "xnnpack_delegate.cc "


def _raw_word(op: DelegateOp, i: int) -> int:
    raw = op.opt("raw_int32") or ()
    return int(raw[i]) if len(raw) > i else 0


def _xnn_mp_padding(code: int) -> str | None:
    """``CalculatePadding`` on the raw padding word (1 SAME, 2 VALID)."""
    return None if code in _PADDING else reason(CATEGORY_OPTIONS, f"padding code {code} (neither SAME nor VALID)")


@register_placement(XNNPACK, CONV_T_BIAS, source=_XNN_MP + "VisitMediaPipeDeconvolutionNode")
def _xnn_conv_t_bias(op: DelegateOp) -> str | None:
    """Float32 input, filter, bias and output; static filter and bias; SAME/VALID paddings fitting the shapes."""
    found = num_io(op, 3)
    if found:
        return found
    x, w, b, y = op.input(0), op.input(1), op.input(2), op.outputs[0]
    if x is None or w is None or b is None:
        return reason(CATEGORY_INPUTS, "a missing input")
    found = (float_only(op, x, "input", fp16=False) or rank_in(x, "input", 4)
             or float_only(op, w, "filter", fp16=False) or rank_in(w, "filter", 4) or static(w, "filter")
             or float_only(op, b, "bias", fp16=False) or rank_in(b, "bias", 1) or static(b, "bias")
             or float_only(op, y, "output", fp16=False) or rank_in(y, "output", 4))
    if found:
        return found
    pad, sw, sh = _raw_word(op, 0), _raw_word(op, 1), _raw_word(op, 2)
    if sw <= 0 or sh <= 0:
        return reason(CATEGORY_OPTIONS, f"stride {sw}x{sh}")
    return transpose_conv_padding(_PADDING.get(pad, f"code {pad}"), x.shape[1:3], w.shape[1:3], (sh, sw),
                                  y.shape[1:3])


def _xnn_mp_pool_params(op: DelegateOp) -> str | None:
    """``CheckMediaPipePoolParams``: positive strides and window, the window equal to the stride, no fused
    activation. (The source snapshot accepts a ReLU with a log line; ai-edge-litert 2.3 refuses every fused
    activation, which the runtime test shows.)"""
    pad, sw, sh, fw, fh, act = (_raw_word(op, i) for i in range(6))
    if min(sw, sh, fw, fh) <= 0:
        return reason(CATEGORY_OPTIONS, f"stride {sw}x{sh} or window {fw}x{fh} not positive")
    if fw != sw or fh != sh:
        return reason(CATEGORY_OPTIONS, f"window {fw}x{fh} differs from the stride {sw}x{sh}")
    if act != 0:
        return reason(CATEGORY_OPTIONS, f"fused activation code {act}")
    return None


@register_placement(XNNPACK, MAXPOOL_ARGMAX, source=_XNN_MP + "VisitMediaPipeMaxPoolingNode")
def _xnn_max_pool_argmax(op: DelegateOp) -> str | None:
    """Float32 4-D input and values, 4-D indices; window equal to the stride; SAME or VALID."""
    found = num_io(op, 1, 2)
    if found:
        return found
    x, y, idx = op.input(0), op.outputs[0], op.outputs[1]
    return (float_only(op, x, "input", fp16=False) or rank_in(x, "input", 4)
            or float_only(op, y, "values", fp16=False) or rank_in(y, "values", 4) or rank_in(idx, "indices", 4)
            or _xnn_mp_pool_params(op) or _xnn_mp_padding(_raw_word(op, 0)))


@register_placement(XNNPACK, MAX_UNPOOL, source=_XNN_MP + "VisitMediaPipeUnpoolingNode")
def _xnn_max_unpool(op: DelegateOp) -> str | None:
    """Float32 4-D values and output, 4-D indices; window equal to the stride; VALID padding only (a SAME
    padding's non-zero XNNPACK flags are refused; the source snapshot only logs them, ai-edge-litert 2.3 refuses)."""
    found = num_io(op, 2)
    if found:
        return found
    x, idx, y = op.input(0), op.input(1), op.outputs[0]
    if x is None or idx is None:
        return reason(CATEGORY_INPUTS, "a missing input")
    return (float_only(op, x, "values", fp16=False) or rank_in(x, "values", 4) or rank_in(idx, "indices", 4)
            or float_only(op, y, "output", fp16=False) or rank_in(y, "output", 4)
            or _xnn_mp_pool_params(op) or _xnn_mp_padding(_raw_word(op, 0))
            or (reason(CATEGORY_OPTIONS, "SAME padding") if _raw_word(op, 0) == 1 else None))


def xnn_dot_attention(op: DelegateOp) -> str | None:
    """``VisitDotAttentionNode`` (what it checks before building): float32 query, key, value, optional mask and
    output; one head size; the mask's last dimension the key and value length (their dimension 1)."""
    if len(op.inputs) < 3 or not op.outputs:
        return reason(CATEGORY_INPUTS, f"{len(op.inputs)} inputs (query, key, value and an optional mask)")
    qt, kt, vt = op.input(0), op.input(1), op.input(2)
    mask = op.input(3) if len(op.inputs) > 3 else None
    if qt is None or kt is None or vt is None:
        return reason(CATEGORY_INPUTS, "a missing input")
    found = (float_only(op, qt, "query", fp16=False) or float_only(op, kt, "key", fp16=False)
             or float_only(op, vt, "value", fp16=False)
             or (float_only(op, mask, "mask", fp16=False) if mask is not None else None)
             or float_only(op, op.outputs[0], "output", fp16=False))
    if found:
        return found
    if not (qt.rank and kt.rank and vt.rank) or not qt.shape[-1] == kt.shape[-1] == vt.shape[-1]:
        return reason(CATEGORY_SHAPE, f"head sizes of query {list(qt.shape)}, key {list(kt.shape)}, "
                                      f"value {list(vt.shape)} differ")
    if mask is not None and (kt.rank < 2 or vt.rank < 2 or not mask.rank
                             or not kt.shape[1] == vt.shape[1] == mask.shape[-1]):
        return reason(CATEGORY_SHAPE, f"mask {list(mask.shape)} does not match the key/value length")
    return None


@register_placement(XNNPACK, SDPA, source=_XNN_MP + "VisitScaledDotAttentionCompositeNode, VisitDotAttentionNode")
def _xnn_sdpa(op: DelegateOp) -> str | None:
    """The ODML scaled dot-product attention custom op."""
    return xnn_dot_attention(op)
