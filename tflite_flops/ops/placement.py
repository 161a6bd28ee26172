"""Where an op runs: each delegate's per-op rule, registered next to the op's formula.

A rule is a small pure function of a :class:`DelegateOp` (the op as the delegate sees it when it
is applied: tensor types, shapes, quantization, which inputs are static weights, the delegate's
configuration). It returns ``None`` when the delegate takes the op, or the reason it refuses it.
A reason reads ``"<category>: <detail>"``; the categories are the ``CATEGORY_*`` constants, so
reports can group kept ops by why they were kept.

An op type without a rule for a delegate is refused with category :data:`OP_TYPE`: the delegate
has no kernel for it. A second registration of the same op type for the same delegate raises and
names the first site, as the cost registry does.

The shared checks below (:func:`float_or_q8` and friends) each follow one check function of
LiteRT's XNNPACK delegate (``tflite/delegates/xnnpack/xnnpack_delegate.cc``), named in its
docstring; the rules in the op families compose them in the order the delegate's ``Visit*Node``
calls them. The GPU delegate's shared checks (:func:`gpu_version` and friends, in their own
section at the end) follow ``tflite/delegates/gpu/common/model_builder.cc`` and
``tflite/tools/versioning/gpu_compatibility.cc`` the same way; :func:`decide` applies the
delegate's tensor check (``IsAllAllowedTensors``) after every GPU rule, as ``GetOpsToReplace`` does.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numpy as np

from ..reader.model import Quantization
from ..settings import GPU_CLASSIC, GPU_ML_DRIFT, DelegateConfig  # the delegates' flags, a setting; rules read op.config
from .facts import DELEGATES, GPU, XNNPACK, add_placement  # the delegates' names: the records key their rules by them
from .registry import _names, _site

DELEGATE_NAMES = {XNNPACK: "XNNPACK", GPU: "the GPU delegate"}  # in reasons and reports
# The GPU's two models (DelegateConfig.gpu_delegate): what every output names a GPU figure by
GPU_MODELS = {GPU_ML_DRIFT: "the LiteRT GPU accelerator (ML Drift: LITERT_CL, LITERT_METAL)",
              GPU_CLASSIC: "the classic GPU delegate (TfLiteGpuDelegateV2)"}
GPU_MODELS_SHORT = {GPU_ML_DRIFT: "GPU (ML Drift)", GPU_CLASSIC: "GPU (classic delegate)"}  # compare's row labels


def delegate_display(key: str, rules: str | None = None, short: bool = False) -> str:
    """How the outputs name a delegation ``key``: ``"XNNPACK"``, the GPU model of ``rules`` (``"the LiteRT GPU
    accelerator (ML Drift: ...)"``; ``short``: ``"GPU (ML Drift)"``), or ``"the GPU delegate"`` when not known."""
    if key == GPU and rules in GPU_MODELS:
        return (GPU_MODELS_SHORT if short else GPU_MODELS)[rules]
    name = DELEGATE_NAMES.get(key, key)
    return name.removeprefix("the ") if short else name

CATEGORY_OP_TYPE = "op type"  # no kernel for this op type (or custom op)
CATEGORY_DTYPE = "dtype"  # a tensor type or type combination it does not take
CATEGORY_QUANT = "quantization"  # per-channel vs per-tensor, zero points, scales out of range
CATEGORY_HYBRID = "hybrid weights"  # float activations with integer weights the kernel does not take
CATEGORY_OPTIONS = "options"  # a fused activation, padding, stride, beta... it refuses
CATEGORY_SHAPE = "shape"  # rank or dimensions out of range
CATEGORY_DYNAMIC = "dynamic"  # weights, shapes or parameters not constant in the file
CATEGORY_VERSION = "op version"
CATEGORY_INPUTS = "inputs"  # number of inputs or outputs, a missing bias
CATEGORY_FED = "feeds a kept op"  # weight unpacking (DEQUANTIZE/DENSIFY) whose output a kept op reads
CATEGORY_PARTITION_LIMIT = "partition limit"  # taken, but in a partition beyond the delegate's partition limit (GPU)
CATEGORY_PARTIAL = "partial delegation"  # an fp16-weight DEQUANTIZE the GPU delegate leaves on the CPU
CATEGORY_RULE_FAILED = "rule failed"  # the op type's placement rule raised: counted as kept, never a crash
CATEGORIES = (CATEGORY_OP_TYPE, CATEGORY_DTYPE, CATEGORY_QUANT, CATEGORY_HYBRID, CATEGORY_OPTIONS, CATEGORY_SHAPE,
              CATEGORY_DYNAMIC, CATEGORY_VERSION, CATEGORY_INPUTS, CATEGORY_FED,
              CATEGORY_PARTITION_LIMIT, CATEGORY_PARTIAL, CATEGORY_RULE_FAILED)


def reason(category: str, detail: str) -> str:
    """A refusal: ``"<category>: <detail>"``."""
    return f"{category}: {detail}"


def category_of(text: str) -> str:
    """The category of a reason made by :func:`reason`."""
    return text.split(":", 1)[0]


class DelegateTensor(NamedTuple):
    """A tensor as the delegate sees it when it is applied."""

    index: int
    dtype: str  # "FLOAT32", "INT8"...
    shape: tuple[int, ...]
    static: bool  # weights stored in the file (kTfLiteMmapRo)
    quasi_static: bool = False  # unpacked by the delegate at init (DEQUANTIZE/DENSIFY of static weights)
    quantization: Quantization | None = None
    sparse: bool = False
    value: np.ndarray | None = None  # a static tensor's values, when small (axes, paddings, permutations)
    fp16_weights: bool = False  # dequantized from fp16 weights only GEMMs read: their type checks see FLOAT16
    producer: str | None = None  # op type that writes it in the subgraph (GPU rules that look at neighbours)
    readers: tuple[tuple[str, str], ...] = ()  # (op type, its first output's dtype) per reading input slot

    @property
    def rank(self) -> int:
        """Number of dims."""
        return len(self.shape)

    @property
    def weight_dtype(self) -> str:
        """The type ``CheckFilterAndBiasTypes`` sees (``GetTensorType``: FLOAT16 behind an elided fp16 DEQUANTIZE)."""
        return "FLOAT16" if self.fp16_weights else self.dtype

    @property
    def weights(self) -> bool:
        """Static, or unpacked from static weights by the delegate."""
        return self.static or self.quasi_static


class DelegateOp(NamedTuple):
    """An op as a delegate rule receives it."""

    op_type: str
    version: int
    options: Mapping[str, Any]
    inputs: tuple[DelegateTensor | None, ...]  # None: an omitted optional input (-1)
    outputs: tuple[DelegateTensor, ...]
    config: DelegateConfig = DelegateConfig()

    def input(self, i: int) -> DelegateTensor | None:
        """Input ``i``, or None when omitted or absent."""
        return self.inputs[i] if i < len(self.inputs) else None

    def opt(self, name: str, default: Any = None) -> Any:
        """An option value by snake_case name (the schema's default when the file omits it)."""
        return self.options.get(name, default)


Rule = Callable[[DelegateOp], "str | None"]


class PlacementRule(NamedTuple):
    """A registered rule and where it was registered."""

    rule: Rule
    source: str  # the delegate source the rule follows
    site: str


_RULES: dict[str, dict[str, PlacementRule]] = {d: {} for d in DELEGATES}


def register_placement(delegate: str, op_types: str | Iterable[str], *, source: str) -> Callable[[Rule], Rule]:
    """Decorator: the rule by which ``delegate`` takes or refuses ``op_types``.

    ``source`` names the delegate code the rule follows (file and function).
    """
    if delegate not in _RULES:
        raise ValueError(f"unknown delegate {delegate!r}")

    def deco(fn: Rule) -> Rule:
        site = _site()
        for name in _names(op_types):
            prev = _RULES[delegate].get(name)
            if prev is not None:
                raise ValueError(f"{delegate} placement of {name} is registered twice: at {prev.site} and at {site}")
            _RULES[delegate][name] = PlacementRule(fn, source, site)
            add_placement(name, delegate, _RULES[delegate][name])
        return fn

    return deco


def placement_rule(delegate: str, op_type: str) -> PlacementRule | None:
    """The registered rule, or None (the delegate has no kernel for the op type)."""
    return _RULES[delegate].get(op_type)


def placed_op_types(delegate: str) -> tuple[str, ...]:
    """The op types ``delegate`` may take (it refuses every other), sorted."""
    return tuple(sorted(_RULES[delegate]))


def decide(delegate: str, op: DelegateOp) -> str | None:
    """None when ``delegate`` takes ``op``, else the reason it refuses it. A rule that raises (a bug in it,
    or an op it did not foresee) keeps the op off with a :data:`CATEGORY_RULE_FAILED` reason naming the error."""
    entry = _RULES[delegate].get(op.op_type)
    if entry is None:
        return reason(CATEGORY_OP_TYPE, f"{DELEGATE_NAMES[delegate]} has no kernel for {op.op_type}")
    try:
        found = entry.rule(op)
    except Exception as exc:  # a failing fact: a reason on the op, never a crash of the analysis
        return reason(CATEGORY_RULE_FAILED, f"the {op.op_type} rule raised {type(exc).__name__}: {exc}")
    if found is None and delegate == GPU:
        found = gpu_allowed_tensors(op)
    return found


# ---- XNNPACK's shared checks (xnnpack_delegate.cc) --------------------------------------------------
# Each returns None when the check passes, else the reason. Rules chain them with ``or``.

XNN_MAX_TENSOR_DIMS = 6


_FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # the smallest normal float32


def _normal(x: float | None) -> bool:
    return x is not None and math.isfinite(x) and x != 0 and abs(x) >= _FLOAT32_TINY


def _per_tensor(t: DelegateTensor, where: str) -> str | None:
    """An 8-bit tensor with one scale on dimension 0 (the per-tensor quantization every activation check wants)."""
    q = t.quantization
    if q is None or q.kind not in ("per_tensor", "per_axis") or q.axis != 0 or q.num_scales != 1:
        what = "no quantization" if q is None else f"{q.num_scales}-scale {q.kind} quantization"
        return reason(CATEGORY_QUANT, f"{where} is {t.dtype} with {what} (XNNPACK wants one scale)")
    return None


def float_or_q8(op: DelegateOp, t: DelegateTensor | None, where: str, *, fp16: bool = True,
                uint8: bool = True) -> str | None:
    """``CheckTensorFloatOrQUInt8Type`` (``fp16=False``: ``CheckTensorFloat32OrQUInt8Type``;
    ``uint8=False``: ``CheckTensorFloatOrQInt8Type``): float, or 8-bit quantized per tensor."""
    if t is None:
        return reason(CATEGORY_INPUTS, f"{where} is missing")
    if t.dtype == "FLOAT32" or (fp16 and t.dtype == "FLOAT16"):
        return None
    if t.dtype == "INT8" and op.config.qs8:
        return _per_tensor(t, where)
    if t.dtype == "UINT8" and uint8 and op.config.qu8:
        return _per_tensor(t, where)
    return reason(CATEGORY_DTYPE, f"{where} is {t.dtype}")


def float_only(op: DelegateOp, t: DelegateTensor | None, where: str, *, fp16: bool = True) -> str | None:
    """``CheckTensorFloatType`` (``fp16=False``: ``CheckTensorFloat32Type``)."""
    if t is None:
        return reason(CATEGORY_INPUTS, f"{where} is missing")
    if t.dtype == "FLOAT32" or (fp16 and t.dtype == "FLOAT16"):
        return None
    return reason(CATEGORY_DTYPE, f"{where} is {t.dtype} (float only)")


def q8_only(op: DelegateOp, t: DelegateTensor, where: str) -> str | None:
    """``CheckTensorQInt8OrQUInt8Type``: 8-bit quantized per tensor."""
    if (t.dtype == "INT8" and op.config.qs8) or (t.dtype == "UINT8" and op.config.qu8):
        return _per_tensor(t, where)
    return reason(CATEGORY_DTYPE, f"{where} is {t.dtype} (8-bit quantized only)")


def _channelwise(t: DelegateTensor, where: str, channel_dim: int) -> str | None:
    """``xnn_validate_channelwise_quantized_tensor`` / ``xnn_validate_quantized_tensor`` on a weight."""
    q = t.quantization
    if q is None:
        return reason(CATEGORY_QUANT, f"{where} is {t.dtype} without quantization")
    if q.num_scales > 1:
        if q.axis != channel_dim:
            return reason(CATEGORY_QUANT, f"{where} is quantized on dimension {q.axis}, not {channel_dim}")
        if q.zero_point not in (0, None):
            return reason(CATEGORY_QUANT, f"{where} has per-channel zero point {q.zero_point} (XNNPACK wants 0)")
    elif t.dtype == "INT8" and not -128 <= (q.zero_point or 0) <= 127:
        return reason(CATEGORY_QUANT, f"{where} zero point {q.zero_point} is out of the int8 range")
    if not _normal(q.scale) or (q.scale or 0) < 0:
        return reason(CATEGORY_QUANT, f"{where} scale {q.scale} is not a positive normal number")
    return None


def float_or_qc8(op: DelegateOp, t: DelegateTensor | None, where: str, channel_dim: int) -> str | None:
    """``CheckTensorFloat32OrQCInt8Type``: float, int8 per tensor or per channel on ``channel_dim``, uint8 per tensor."""
    if t is None:
        return reason(CATEGORY_INPUTS, f"{where} is missing")
    if t.dtype in ("FLOAT32", "FLOAT16"):
        return None
    q = t.quantization
    if t.dtype == "INT8" and op.config.qs8:
        if q is None or q.kind not in ("per_tensor", "per_axis"):
            return reason(CATEGORY_QUANT, f"{where} is INT8 without affine quantization")
        return _channelwise(t, where, channel_dim)
    if t.dtype == "UINT8" and op.config.qu8:
        return _per_tensor(t, where) or _channelwise(t, where, channel_dim)
    return reason(CATEGORY_DTYPE, f"{where} is {t.dtype}")


def filter_type(op: DelegateOp, t: DelegateTensor | None, where: str, channel_dim: int) -> str | None:
    """``CheckTensorFilterType`` (fully connected weights): float, int8/int4/int2 per channel or blockwise, uint8."""
    if t is None:
        return reason(CATEGORY_INPUTS, f"{where} is missing")
    if t.dtype in ("FLOAT32", "FLOAT16"):
        return None
    q = t.quantization
    if t.dtype in ("INT8", "INT4", "INT2") and op.config.qs8:
        if q is None:
            return reason(CATEGORY_QUANT, f"{where} is {t.dtype} without quantization")
        if q.kind in ("per_tensor", "per_axis"):
            if q.num_scales > 1 and q.axis != channel_dim:
                return reason(CATEGORY_QUANT, f"{where} is quantized on dimension {q.axis}, not {channel_dim}")
            if t.dtype == "INT2" and (q.axis >= t.rank or q.num_scales != t.shape[q.axis]):
                return reason(CATEGORY_QUANT, f"{where} is INT2 quantized per tensor (XNNPACK wants per channel)")
        return None
    if t.dtype == "UINT8" and op.config.qu8:
        return _per_tensor(t, where)
    return reason(CATEGORY_DTYPE, f"{where} is {t.dtype}")


def bias_type(op: DelegateOp, t: DelegateTensor, where: str = "bias") -> str | None:
    """``CheckTensorFloat32OrFloat16OrQCInt32Type``: float, or int32 quantized on dimension 0."""
    if t.dtype in ("FLOAT32", "FLOAT16"):
        return None
    q = t.quantization
    if t.dtype == "INT32" and op.config.qs8:
        if q is None or q.kind not in ("per_tensor", "per_axis") or q.axis != 0:
            return reason(CATEGORY_QUANT, f"{where} is INT32 without quantization on dimension 0")
        if not _normal(q.scale) or (q.scale or 0) < 0:
            return reason(CATEGORY_QUANT, f"{where} scale {q.scale} is not a positive normal number")
        return None
    return reason(CATEGORY_DTYPE, f"{where} is {t.dtype}")


def rank_in(t: DelegateTensor, where: str, lo: int, hi: int | None = None) -> str | None:
    """``CheckTensorShape``: rank within [lo, hi] and every dimension positive."""
    hi = lo if hi is None else hi
    shape = t.shape
    if not lo <= len(shape) <= hi:
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        return reason(CATEGORY_SHAPE, f"{where} has rank {t.rank} (XNNPACK wants {want})")
    if shape and min(shape) <= 0:
        return reason(CATEGORY_SHAPE, f"{where} has an empty or unknown dimension {list(t.shape)}")
    return None


def static(t: DelegateTensor, where: str, *, quasi: bool = True) -> str | None:
    """``CheckTensorStaticAllocation`` (skipped for quasi-static tensors when ``quasi``)."""
    if t.static or (quasi and t.quasi_static):
        return None
    return reason(CATEGORY_DYNAMIC, f"{where} is not a constant of the file")


def num_io(op: DelegateOp, inputs: int | tuple[int, int], outputs: int | tuple[int, int] = 1) -> str | None:
    """``CheckNumInputsAndOutputs``: counts of inputs (omitted ones included) and outputs."""
    if inputs == len(op.inputs) and outputs == len(op.outputs):  # the usual exact counts, met
        return None
    for what, n, want in (("inputs", len(op.inputs), inputs), ("outputs", len(op.outputs), outputs)):
        lo, hi = (want, want) if isinstance(want, int) else want
        if not lo <= n <= hi:
            return reason(CATEGORY_INPUTS, f"{n} {what} (XNNPACK wants {lo if lo == hi else f'{lo} to {hi}'})")
    return None


_ACTIVATIONS = {"NONE", "RELU", "RELU_N1_TO_1", "RELU6"}


def activation(op: DelegateOp) -> str | None:
    """``ConvertActivationToOutputRange``: no fused activation, ReLU, ReLU-N1-to-1 or ReLU6."""
    act = op.opt("fused_activation_function", "NONE")
    if act not in _ACTIVATIONS:
        return reason(CATEGORY_OPTIONS, f"fused activation {act}")
    return None


def padding(op: DelegateOp) -> str | None:
    """``CalculatePadding``: SAME or VALID."""
    pad = op.opt("padding", "SAME")
    if pad not in ("SAME", "VALID"):
        return reason(CATEGORY_OPTIONS, f"padding {pad}")
    return None


def filter_and_bias(w: DelegateTensor, b: DelegateTensor) -> str | None:
    """``CheckFilterAndBiasTypes``: a float filter takes a bias of its type (or float32 under an fp16 filter)."""
    wt, bt = w.weight_dtype, b.weight_dtype
    if wt in ("FLOAT16", "FLOAT32") and bt != wt and not (wt == "FLOAT16" and bt == "FLOAT32"):
        return reason(CATEGORY_DTYPE, f"filter {wt} and bias {bt}")
    return None


def same_type(*pairs: tuple[DelegateTensor, DelegateTensor, str]) -> str | None:
    """The tensors of each pair have one type."""
    for a, b, what in pairs:
        if a.dtype != b.dtype:
            return reason(CATEGORY_DTYPE, f"{what}: {a.dtype} and {b.dtype}")
    return None


def scale(t: DelegateTensor) -> float | None:
    """The per-tensor scale (``GetTensorScaleOrDefault`` without the default)."""
    q = t.quantization
    return q.scale if q is not None and q.num_scales == 1 and q.axis == 0 else None


def scale_ratio(a: DelegateTensor, out: DelegateTensor, lo: float, hi: float, what: str) -> str | None:
    """``CheckTensorsInputOutputScale``: input scale / output scale in [lo, hi) for same-type 8-bit tensors."""
    if a.dtype != out.dtype or a.dtype not in ("INT8", "UINT8"):
        return None
    sa, so = scale(a), scale(out)
    if sa is None or so is None:
        return None
    r = sa / so
    if not lo <= r < hi:
        return reason(CATEGORY_QUANT, f"{what} scale ratio {r:.3g} is outside [{lo:.3g}, {hi:.3g})")
    return None


def ints(t: DelegateTensor | None) -> list[int] | None:
    """A static int tensor's values (None when not known)."""
    if t is None or t.value is None:
        return None
    return [int(v) for v in np.asarray(t.value).reshape(-1)]


# ---- The GPU delegate's shared checks -----------------------------------------------------------------------
# LiteRT's GPU delegate decides an op in ``GetOpsToReplace`` (tflite/delegates/gpu/common/model_builder.cc):
# ``NewOperationParser`` picks the op type's parser (none: refused), the parser's ``IsSupported`` checks
# the op version (``CheckMaxSupportedOpVersion``, operation_parser.cc) and most then call
# ``CheckGpuDelegateCompatibility`` (tflite/tools/versioning/gpu_compatibility.cc); last,
# ``IsAllAllowedTensors`` checks every tensor's rank and every non-constant tensor's type
# (:func:`gpu_allowed_tensors`, which :func:`decide` applies after each GPU rule). Each check below
# returns None when it passes, else the reason; rules chain them with ``or`` in the source's order.

# The LiteRT GPU accelerator (ML Drift, ml_drift_delegate/tflite/model_builder.cc) keeps the classic delegate's
# partitioning and its tensor check's rank limit, and calls the same CheckGpuDelegateCompatibility from most of its
# parsers; where its parsers differ (newer op versions, wider types, parsers of its own, STRIDED_SLICE, SLICE,
# BATCH_MATMUL, CAST and comparisons checked otherwise), a rule asks :func:`gpu_drift` and follows the parser named
# in its source line. The ML Drift delegate hard-codes ``allow_quant_ops = true`` and ``max_delegated_partitions = 1``
# and excludes no op (delegate_opencl.cc, delegate_metal.mm, delegate_webgpu.cc: ``GetOpsToReplace``), so the
# classic delegate's options (``gpu_quant_ops``, ``gpu_max_partitions``, ``gpu_opencl``, ``gpu_mediapipe_ops``) are
# read only under :data:`~tflite_flops.settings.GPU_CLASSIC`.

GPU_MAX_RANK = 4  # IsAllAllowedTensors: a tensor of rank 5 or more is refused
_GPU_SIGN_BIT = ("SIGN_BIT", 5)  # IsActivationSupported refuses kTfLiteActSignBit (schema name, C enum value)
_GPU_COMPARISONS = frozenset({"GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "EQUAL", "NOT_EQUAL"})  # IsLogicalCode
_GPU_FLOATS = ("FLOAT32", "FLOAT16")


def gpu_drift(op: DelegateOp) -> bool:
    """Whether the op is placed by the LiteRT GPU accelerator's rules (ML Drift), not the classic delegate's."""
    return op.config.gpu_delegate == GPU_ML_DRIFT


def gpu_drift_only(op: DelegateOp) -> str | None:
    """None under ML Drift; under the classic delegate, the refusal of an op type only ML Drift parses
    (``NewOperationParser`` of tflite/delegates/gpu/common/model_builder.cc has no case for it)."""
    if gpu_drift(op):
        return None
    return reason(CATEGORY_OP_TYPE, f"the classic GPU delegate has no parser for {op.op_type} (the LiteRT GPU "
                                    f"accelerator, ML Drift, has)")


def gpu_drift_int32(op: DelegateOp, i: int, where: str) -> str | None:
    """ML Drift's ``PreReadTensor`` of an INT32 parameter in ``IsSupported`` (paddings, begin/size, permutations):
    input ``i`` a constant of the file whose bytes are INT32 values (an INT64 one fails "src has wrong size")."""
    t = op.input(i)
    if t is None or not t.static:
        return reason(CATEGORY_DYNAMIC, f"the {where} input is not a constant of the file")
    if t.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"the {where} input is {t.dtype} (the GPU delegate reads it as INT32)")
    return None


def gpu_classic_only(op: DelegateOp) -> str | None:
    """None under the classic delegate; under ML Drift, the refusal of an op type only the classic delegate
    parses (ML Drift's ``NewOperationParser`` has no case for it)."""
    if not gpu_drift(op):
        return None
    return reason(CATEGORY_OP_TYPE, f"the LiteRT GPU accelerator (ML Drift) has no parser for {op.op_type} (the "
                                    f"classic GPU delegate has)")


def gpu_version(op: DelegateOp, max_version: int, drift_version: int | None = None) -> str | None:
    """``CheckMaxSupportedOpVersion`` (operation_parser.cc): the op's version at most ``max_version``
    (``drift_version`` instead under ML Drift, when its parser's limit differs)."""
    top = drift_version if drift_version is not None and gpu_drift(op) else max_version
    if op.version > top:
        return reason(CATEGORY_VERSION, f"{op.op_type} v{op.version} (the GPU delegate supports up to v{top})")
    return None


def gpu_runtime_inputs(op: DelegateOp) -> int:
    """``GetNumberOfRuntimeInputs`` (gpu_compatibility.cc): inputs neither omitted nor constant in the file."""
    return sum(1 for t in op.inputs if t is not None and not t.static)


def gpu_const_inputs(op: DelegateOp) -> int:
    """The constant inputs ``CheckInputsConstsOutputs`` counts (``kTfLiteMmapRo``)."""
    return sum(1 for t in op.inputs if t is not None and t.static)


def gpu_io(op: DelegateOp, runtime: int, outputs: int, consts: int | None = None) -> str | None:
    """``CheckInputsOutputs`` (``consts`` given: ``CheckInputsConstsOutputs``): exact counts of runtime
    inputs, constant inputs and outputs. A constant the delegate wants that is computed at run time
    reads as category ``dynamic``."""
    n_run, n_const = gpu_runtime_inputs(op), gpu_const_inputs(op)
    if consts is not None and n_const != consts:
        dynamic = n_const < consts and n_run + n_const == runtime + consts
        return reason(CATEGORY_DYNAMIC if dynamic else CATEGORY_INPUTS,
                      f"{n_const} constant and {n_run} runtime inputs (the GPU delegate wants {consts} constant "
                      f"and {runtime} runtime)")
    if n_run != runtime:
        return reason(CATEGORY_INPUTS, f"{n_run} runtime inputs (the GPU delegate wants {runtime})")
    if len(op.outputs) != outputs:
        return reason(CATEGORY_INPUTS, f"{len(op.outputs)} outputs (the GPU delegate wants {outputs})")
    return None


def gpu_io_either(op: DelegateOp) -> str | None:
    """Two runtime inputs, or one runtime and one constant, and one output (the two-operand check of
    ``CheckGpuDelegateCompatibility``: "Op can only handle 1 or 2 operand(s)")."""
    if gpu_io(op, 2, 1, consts=0) and gpu_io(op, 1, 1, consts=1):
        return reason(CATEGORY_INPUTS, f"{gpu_runtime_inputs(op)} runtime and {gpu_const_inputs(op)} constant inputs, "
                                       f"{len(op.outputs)} outputs (the GPU delegate wants 2 operands, at most one "
                                       f"constant, and 1 output)")
    return None


def gpu_conv_io(op: DelegateOp) -> str | None:
    """``CheckConvolutionInputOutput``: one or two runtime inputs (a runtime filter), one output, and a
    filter input present when only one input is runtime."""
    n = gpu_runtime_inputs(op)
    if not 1 <= n <= 2:
        return reason(CATEGORY_INPUTS, f"{n} runtime inputs (the GPU delegate wants 1 or 2)")
    if len(op.outputs) != 1:
        return reason(CATEGORY_INPUTS, f"{len(op.outputs)} outputs (the GPU delegate wants 1)")
    if n == 1 and len(op.inputs) < 2:
        return reason(CATEGORY_INPUTS, "no filter input")
    return None


def gpu_positive(op: DelegateOp, names: tuple[str, ...], what: str, values: tuple[int | None, ...] | None = None
                 ) -> str | None:
    """``CheckStrides`` / ``CheckDilation`` / ``CheckKernels``: every named option above 0 (``values``
    replaces the options, for custom ops storing a raw struct)."""
    if values is not None:
        got = values
    else:
        options = op.options
        got = tuple([options.get(n, 0) for n in names])  # = op.opt(n, 0)
    for v in got:
        if int(v or 0) <= 0:
            break
    else:
        return None
    shown = ", ".join(f"{n} {int(v or 0)}" for n, v in zip(names, got))
    return reason(CATEGORY_OPTIONS, f"{what} {shown} (the GPU delegate wants them above 0)")


def gpu_activation(op: DelegateOp, value: Any = None) -> str | None:
    """``IsActivationSupported``: every fused activation but SIGN_BIT (``value`` replaces the option)."""
    act = op.opt("fused_activation_function", "NONE") if value is None else value
    if act in _GPU_SIGN_BIT:
        return reason(CATEGORY_OPTIONS, "fused activation SIGN_BIT")
    return None


def gpu_axes(op: DelegateOp, i: int) -> str | None:
    """``CheckAxesAreInt32Const``: input ``i`` (the axes) constant and int32."""
    axes = op.input(i)
    if axes is None or not axes.static:
        return reason(CATEGORY_DYNAMIC, f"{op.op_type} axes are not a constant of the file")
    if axes.dtype != "INT32":
        return reason(CATEGORY_DTYPE, f"axes are {axes.dtype} (the GPU delegate wants INT32)")
    return None


def broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """``CheckIsBroadcastable`` (gpu_compatibility.cc) / ``IsBroadcastable`` (ML Drift's model_builder_helper.cc):
    aligned from the last dimension, each pair equal or one of them 1."""
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def gpu_broadcast(a: DelegateTensor, b: DelegateTensor, enhanced: bool = False) -> str | None:
    """``CheckAddMulBroadcastCompatibility`` with ``GpuCompatibilityFlags::kStandard`` (what the classic
    delegate passes): inputs of different ranks, both above 1, broadcast only 3-D to 4-D with batch 1, 2-D
    [1, 1] to 4-D with batch 1, or 2-D [b, c] to 4-D [b, x, y, c]. ``enhanced``
    (``kEnhancedBroadcast``, what ML Drift's ElementwiseOperationParser passes): any numpy-style broadcast."""
    if a.rank <= 1 or b.rank <= 1 or a.rank == b.rank:
        return None
    long, short = (a.shape, b.shape) if a.rank >= b.rank else (b.shape, a.shape)
    if enhanced:
        ok = broadcastable(long, short)
    else:
        ok = ((len(long) == 4 and len(short) == 3 and long[0] == 1)
              or (len(long) == 4 and len(short) == 2 and long[0] == 1 and short[0] == 1 and short[1] == 1)
              or (len(long) == 4 and len(short) == 2 and long[0] == short[0] and long[3] == short[1]))
    if not ok:
        return reason(CATEGORY_SHAPE, f"broadcast of {list(a.shape)} and {list(b.shape)} (the GPU delegate "
                                      f"broadcasts only 3-D or 2-D to 4-D)")
    return None


# ML Drift's type classes (ml_drift_delegate/tflite/model_builder.cc)
_DRIFT_INTS = ("INT8", "INT16", "INT32")  # add_int_types
_DRIFT_UINTS = ("UINT8", "UINT16", "UINT32")  # add_uint_types
_DRIFT_LOGICAL = frozenset({"LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "BITWISE_XOR"})  # IsLogicalOpCode
_DRIFT_BF16 = frozenset({"ABS", "ADD", "ATAN2", "STABLEHLO_CBRT", "CEIL", "STABLEHLO_CLAMP", "CONV_2D", "COS", "DIV",
                         "EXP", "FLOOR", "GATHER", "LOG", "LOGISTIC", "MAXIMUM", "MINIMUM", "MUL", "NEG", "POW",
                         "ROUND", "RSQRT", "SIGN", "SIN", "SQRT", "SUB", "TANH"})  # IsBf16SupportedOp
_DRIFT_INT_OPS = frozenset({"ABS", "ADD", "ATAN2", "COS", "DIV", "FLOOR_DIV", "FLOOR_MOD", "MAXIMUM", "MINIMUM", "MUL",
                            "NEG", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "RIGHT_SHIFT", "SIGN", "SIN",
                            "STABLEHLO_CLAMP", "SUB", "SUM", "STABLEHLO_REMAINDER", "TILE"})  # IsIntSupportedOp
_DRIFT_ALL_PRECISION = frozenset({"STABLEHLO_BROADCAST_IN_DIM", "BITCAST", "CAST", "CONCATENATION",
                                  "DYNAMIC_UPDATE_SLICE", "GATHER", "PACK", "PAD", "PADV2", "RESHAPE", "REVERSE_V2",
                                  "SELECT", "SELECT_V2", "SLICE", "STRIDED_SLICE", "TRANSPOSE"})  # SupportAllPrecisionOp
# CustomOperationParserFactory (ml_drift_delegate/delegate/composite/custom_parsers.cc): the composite or custom
# names that take int32 inputs (SupportsIntegerTypes) and bool tensors (SupportsBoolTypes)
DRIFT_INT_COMPOSITES = frozenset({"odml.cache_update", "odml.runtime_bmm", "moe", "odml.rope", "odml.sdpa_transposed"})
_DRIFT_BOOL_COMPOSITES = frozenset({"odml.sdpa_transposed"})


def _composite_name(op: DelegateOp) -> str | None:
    """The name a composite or custom op goes by in ML Drift's parser factory."""
    if op.op_type == "STABLEHLO_COMPOSITE":
        return str(op.opt("name") or "")
    return op.op_type[7:] if op.op_type.startswith("CUSTOM:") else None


def _drift_allowed_types(op: DelegateOp) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The types ML Drift's ``GetOpsToReplaceWithOptions`` allows for the op's non-constant tensors, in its order
    (``allow_quant_ops`` and ``allow_bool_tensors`` true, as every LiteRT accelerator calls it)."""
    kind = op.op_type
    ins = [*_GPU_FLOATS, "BOOL", "INT2", "INT4", "INT8", "UINT8"]
    outs = [*_GPU_FLOATS, "INT8", "UINT8"]
    if kind == "ARG_MAX":
        outs = ["INT32"]
    if kind in ("REDUCE_ALL", "REDUCE_ANY"):
        ins, outs = ["BOOL"], ["BOOL"]
    if kind in ("EMBEDDING_LOOKUP", "ONE_HOT", "DYNAMIC_UPDATE_SLICE"):
        ins.append("INT32")
    if kind in _GPU_COMPARISONS:
        ins += [*_DRIFT_INTS, *_DRIFT_UINTS]
        outs.append("BOOL")
    if kind in _DRIFT_LOGICAL:
        ins, outs = ["BOOL", *_DRIFT_INTS], ["BOOL", *_DRIFT_INTS]
    if kind == "TOPK_V2":
        outs.append("INT32")
    if kind in _DRIFT_BF16:
        ins.append("BFLOAT16")
        outs.append("BFLOAT16")
    if kind in _DRIFT_INT_OPS:
        ins += _DRIFT_INTS
        outs += _DRIFT_INTS
    name = _composite_name(op)
    if kind == "STABLEHLO_COMPOSITE" and name in _DRIFT_BOOL_COMPOSITES:
        ins.append("BOOL")
        outs.append("BOOL")
    if name in DRIFT_INT_COMPOSITES:
        ins.append("INT32")
    if kind in _DRIFT_ALL_PRECISION:
        ins += [*_DRIFT_INTS, *_DRIFT_UINTS, "BOOL", "BFLOAT16"]
        outs += [*_DRIFT_INTS, *_DRIFT_UINTS, "BOOL", "BFLOAT16"]
    if kind == "STABLEHLO_SHIFT_LEFT":
        ins += _DRIFT_INTS
        outs += _DRIFT_INTS
    return tuple(ins), tuple(outs)


def gpu_allowed_types(op: DelegateOp) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The types ``GetOpsToReplace`` allows for the op's non-constant inputs and outputs (ML Drift's
    ``GetOpsToReplaceWithOptions`` under :data:`~tflite_flops.settings.GPU_ML_DRIFT`)."""
    if gpu_drift(op):
        return _drift_allowed_types(op)
    ins: list[str] = list(_GPU_FLOATS)
    outs: list[str] = list(_GPU_FLOATS)
    if op.config.gpu_quant_ops:
        ins += ["INT8", "UINT8"]
        outs += ["INT8", "UINT8"]
    kind = op.op_type
    if kind in _GPU_COMPARISONS:
        outs.append("BOOL")
    if kind == "CAST":
        ins += ["BOOL", "INT32"]
        outs += ["INT32", "BOOL"]
    if kind in ("ONE_HOT", "GATHER"):
        ins.append("INT32")
    if kind in ("SELECT", "SELECT_V2"):
        ins.append("BOOL")
    if kind == "LOGICAL_AND":
        ins.append("BOOL")
        outs.append("BOOL")
    return tuple(ins), tuple(outs)


def gpu_allowed_tensors(op: DelegateOp) -> str | None:
    """``IsAllAllowedTensors`` as ``GetOpsToReplace`` calls it on inputs then outputs: no tensor of rank 5
    or more (constants included), and every non-constant tensor of an allowed type."""
    key = (op.op_type, op.config.gpu_quant_ops, op.config.gpu_delegate,  # all that gpu_allowed_types reads
           op.opt("name") if op.op_type == "STABLEHLO_COMPOSITE" else None)
    allowed_types = _ALLOWED_TYPES.get(key)
    if allowed_types is None:
        allowed_types = _ALLOWED_TYPES[key] = gpu_allowed_types(op)
    ins, outs = allowed_types
    for where, tensors, allowed in (("input", op.inputs, ins), ("output", op.outputs, outs)):
        for i, t in enumerate(tensors):
            if t is None:
                continue
            if len(t.shape) > GPU_MAX_RANK:
                return reason(CATEGORY_SHAPE, f"{where} {i + 1} has rank {t.rank} (the GPU delegate takes rank "
                                              f"{GPU_MAX_RANK} at most)")
            if not t.static and t.dtype not in allowed:
                shown = [d for d in dict.fromkeys(allowed) if d != "INT2"]  # no tensor type of the schema we read
                return reason(CATEGORY_DTYPE, f"{where} {i + 1} is {t.dtype} (the GPU delegate takes "
                                              f"{', '.join(shown)} for {op.op_type})")
    return None


# gpu_allowed_types per (op type, config.gpu_quant_ops, config.gpu_delegate, composite name): the same for every
# op of a type
_ALLOWED_TYPES: dict[tuple[str, bool, str, Any], tuple[tuple[str, ...], tuple[str, ...]]] = {}


def gpu_comparison_types() -> frozenset[str]:
    """The comparison op types (``IsLogicalCode``)."""
    return _GPU_COMPARISONS


def gpu_comparison_feeds_select(op: DelegateOp) -> str | None:
    """``ElementwiseOperationParser::IsSupported`` for a comparison: its bool output has one reader, a
    CAST, SELECT or SELECT_V2 whose output is float (then ``CheckGpuDelegateCompatibility`` is skipped)."""
    y = op.outputs[0] if op.outputs else None
    if y is None or len(y.readers) != 1:
        n = 0 if y is None else len(y.readers)
        return reason(CATEGORY_INPUTS, f"its output has {n} readers (the GPU delegate takes a comparison only "
                                       f"when one CAST or SELECT reads it)")
    kind, dtype = y.readers[0]
    if kind not in ("CAST", "SELECT", "SELECT_V2") or dtype not in _GPU_FLOATS:
        return reason(CATEGORY_INPUTS, f"its output feeds {kind} with a {dtype} output (the GPU delegate wants a "
                                       f"CAST or SELECT to float)")
    return None
