"""Each op type's facts in one record: :class:`OpFacts`, reachable by op type with :func:`facts_of`.

An op type's facts are registered in its family module (``tflite_flops/ops/<family>.py``), next to its
cost formula. The registration functions each write their part of the one record:

* :func:`~.registry.register` (and ``register_zero``, ``register_not_costed``, ``register_opaque``,
  ``register_cost``): the cost entry; :func:`~.registry.shape_fn`, :func:`~.registry.value_fn`: the
  output shapes and constant folding;
* :func:`~.registry.register_traits`, :func:`~.registry.register_memory`,
  :func:`~.registry.register_temporaries`: the traits, LiteRT's memory facts and kernel temporaries;
* :func:`~.tflm.register_tflm`: TFLM's arena facts; :func:`~.placement.register_placement`: the
  placement rule per delegate;
* :func:`register_facts`: everything else the analysis needs of an op type: XNNPACK's operator size,
  weight packing, reshape-time buffers and workspace (:class:`XnnpackFacts`), the fusion roles, the
  latency law's group and features, the control-flow, weight-unpacking and resource-variable kinds, and
  the inputs of an op that updates a slice of its operand, and those of an op that reads rows of a table.

A fact that is a function of the op (a reshape-time buffer's size) is held as a *kind key* (a string
constant below) that the analysis module dispatches on: the op-type to kind mapping lives here, in the
record, never in an analysis module. The registries the passes loop over (``MEMORY_FACTS``,
``TEMPORARIES``, ``TFLM_KERNELS``, the trait sets) are fast views written by the same registrations.

A fact an op type lacks falls back to a *default* where one exists (:data:`DEFAULTS`: each with its
reason); :func:`missing_facts` lists, per op type, which facts it lacks and which defaults it takes
(``tests/op_facts_missing.txt`` holds that list, reviewed; ``python tests/op_facts_missing.py --update``
regenerates it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

# XNNPACK weight roles (XnnpackFacts.weights): how an op's filter (input 1) is packed at init.
CONV = "conv"  # a convolution's [Cout, kh, kw, Cin] filter, run by the GEMM kernels through an indirection
DEPTHWISE = "depthwise"  # a depthwise convolution's [1, kh, kw, C] filter
FULLY_CONNECTED = "fully_connected"  # a fully connected op's [Cout, Cin] weights
TRANSPOSED_CONV = "transposed_conv"  # a transposed convolution's filter, one sub-kernel per output phase
GEMM_WEIGHTS = frozenset({CONV, DEPTHWISE, FULLY_CONNECTED})  # the GEMM kernels' filters (hybrid, fp16 filters)

# XNNPACK reshape-time buffer kinds (XnnpackFacts.reshape_buffers).
GEMM_INDIRECTION = "gemm_indirection"  # a pointer per tap and output pixel, pixels rounded up to the GEMM rows
DEPTHWISE_INDIRECTION = "depthwise_indirection"  # per output row: the first pixel's taps, then new columns
POOL_INDIRECTION = "pool_indirection"  # as depthwise, the window from the options, a window less one of slack
AVERAGE_POOL_BUFFERS = "average_pool"  # accumulators, one row's indirection per row pattern, multipliers
TRANSPOSED_INDIRECTION = "transposed_indirection"  # a pointer per tap and output pixel
BILINEAR_WEIGHTS = "bilinear"  # four pointers and two weights per output pixel
REDUCTION_ACCUMULATORS = "reduction"  # an output-sized accumulator when the last axis is kept

# XNNPACK workspace kinds (XnnpackFacts.workspace): what an op asks of the workspace while it runs.
PACKED_OPERAND = "packed_operand"  # a computed second operand packed per batch (batch matmul)
INT8_ACCUMULATORS = "int8_accumulators"  # an int8 sum or mean accumulates in int32

# XNNPACK copy operators per part (XnnpackFacts.copies_per).
PER_INPUT = "input"
PER_OUTPUT = "output"

# Fusion roles (OpFacts.fusion): what XNNPACK's subgraph optimizer does with the op (xnn_subgraph_optimize).
CLAMP = "clamp"  # defined as an XNNPACK clamp node: merges into the producer's output clamp
MIN_MAX_CLAMP = "min_max_clamp"  # a clamp when one operand is a constant scalar
OUTPUT_CLAMP = "output_clamp"  # an XNNPACK node with an output clamp of its own (has_clamp)
ABSORBS_PAD = "absorbs_pad"  # a convolution a zero padding before it folds into
ZERO_PAD = "zero_pad"  # a constant padding that may fold into the convolution after it
RESHAPE_IN_PLACE = "reshape_in_place"  # a reshape whose copy is skipped between two nodes of one partition
UNARY_NODE = "unary_node"  # an XNNPACK unary element-wise node (clamp, convert, sigmoid...): may join an 8-bit lookup table
BINARY_NODE = "binary_node"  # an XNNPACK binary element-wise node: unary with a constant scalar operand, or inside a chain

# Control-flow kinds (OpFacts.control_flow): how the walk (analysis/walk.py) follows the subgraphs the op names.
IF_ELSE = "if"  # then/else branches: the costlier counts (an upper bound, flagged)
CASE_BRANCHES = "case"  # a vector of branches (STABLEHLO_CASE): the costlier counts, as IF
WHILE_LOOP = "while"  # TFLite's WHILE: cond × (trips + 1), body × trips
STABLEHLO_LOOP = "stablehlo_while"  # the same walk; the memory and latency passes model only WHILE_LOOP
CALL_ONCE_INIT = "call_once"  # its subgraph runs once, at init
CALL_SUBGRAPH = "call"  # the called (decomposition) subgraph runs once per call
# The roles in a WHILE loop's counter that the trip-count inference reads (OpFacts.loop_counter).
COUNTER_BELOW, COUNTER_ABOVE, COUNTER_STEP = "below", "above", "step"  # x < bound, bound > x, x + step
# Weight unpacking (OpFacts.weight_unpacking), resource-variable roles (OpFacts.resource_variable).
DEQUANTIZE_WEIGHTS, DENSIFY_WEIGHTS = "dequantize", "densify"
VARIABLE_HANDLE, VARIABLE_READ, VARIABLE_ASSIGN = "handle", "read", "assign"

DELEGATE_NODE = "DELEGATE"  # the node LiteRT puts in place of a delegated partition (no model op of this type)
XNNPACK = "xnnpack"  # the delegates whose placement rules a record holds (ops/placement.py)
GPU = "gpu"
DELEGATES = (XNNPACK, GPU)

COPY_OPERATOR_BYTES = 696  # an XNNPACK copy operator (reshape, one per concatenated input or split output) and its context


@dataclass(frozen=True)
class Default:
    """A fact's value for an op type that has none registered, with the reason it stands in."""

    fact: str
    value: Any
    reason: str


XNNPACK_OPERATOR_DEFAULT = Default(
    "xnnpack.operator_bytes", COPY_OPERATOR_BYTES,
    "a node whose operator size was not read off the allocation tracer is counted as a copy operator")
LAW_GROUP_DEFAULT = Default(
    "law.group", "*", "an op type in no group is predicted by the generic law (per precision and placement)")
MEMORY_DEFAULT = Default(
    "memory", "plain", "an op type without LiteRT memory facts neither shares its input's buffer nor folds")
CALIBRATION_DEFAULT = Default(
    "calibration", "group law", "an op type without a point in the calibration suite has no law of its own: "
    "its group's law (or the generic one) predicts it")
DEFAULTS: Mapping[str, Default] = MappingProxyType({d.fact: d for d in (
    XNNPACK_OPERATOR_DEFAULT, LAW_GROUP_DEFAULT, MEMORY_DEFAULT, CALIBRATION_DEFAULT)})


@dataclass(frozen=True)
class XnnpackFacts:
    """What the XNNPACK memory estimate needs of an op type the delegate takes (:mod:`~tflite_flops.analysis.xnnpack_memory`).

    ``operator_bytes``: the ``xnn_operator`` and the compute contexts its create function allocates
    (None: :data:`XNNPACK_OPERATOR_DEFAULT`); ``copies_per``: the op is one copy operator per input
    (:data:`PER_INPUT`) or per output (:data:`PER_OUTPUT`) instead; ``weights``: the role of the filter
    it packs at init (:data:`CONV`, ...; "" when it packs none); ``pointwise_as``: the op type whose
    operator a 1x1 instance runs as; ``reshape_buffers``, ``workspace``: kind keys (module constants);
    ``lookup_table_bytes``: the table an int8 instance builds; ``depthwise_as``: the op type whose kernel
    (XNNPACK's depthwise microkernels) an instance runs as when each of its groups takes one input channel and
    makes one output channel and its kernel fits them (a CONV_2D with groups = channels); ``gemm_as``: the op
    type whose kernel (XNNPACK's GEMM, once per group) an instance runs as when it does not (a depthwise
    convolution wider than the depthwise kernels' taps, or of depth multiplier over 1; a transposed convolution
    that XNNPACK does not split into sub-convolutions, ``latency.kernels.deconv_subconv``). The latency laws
    follow the kernel (``latency.features.conv_kernel``).
    """

    operator_bytes: int | None = None
    copies_per: str = ""
    weights: str = ""
    pointwise_as: str = ""
    reshape_buffers: str = ""
    workspace: str = ""
    lookup_table_bytes: int = 0
    depthwise_as: str = ""
    gemm_as: str = ""

    @property
    def gemm(self) -> bool:
        """Run by XNNPACK's GEMM kernels with its filter as input 1 (convolutions, fully connected)."""
        return self.weights in GEMM_WEIGHTS


NO_XNNPACK_FACTS = XnnpackFacts()

# XNNPACK's depthwise (dwconv) microkernels read at most 25 taps (5x5) in one pass, on every ISA (XNNPACK
# src/configs/dwconv-config.c: tiles of 3, 4, 9 and 25 taps; the multipass kernels were removed).
DWCONV_MAX_TAPS = 25


def conv_groups(role: str, x: Sequence[int], w: Sequence[int]) -> tuple[int, int, int, int] | None:
    """(groups, input channels per group, output channels per group, kernel taps) of a 2-D convolution of weight
    role ``role`` (``XnnpackFacts.weights``): CONV, a [Cout, kh, kw, Cin / groups] filter; DEPTHWISE, a
    [1, kh, kw, C x multiplier] filter (C groups of one input channel); from its input ``x`` and filter ``w``
    shapes. None for another role or shapes it cannot read."""
    if role not in (CONV, DEPTHWISE) or len(x) != 4 or len(w) != 4:
        return None
    c, dims = int(x[3]), [int(d) for d in w]
    if c <= 0 or min(dims) <= 0:
        return None
    if role == CONV:
        groups = max(c // dims[3], 1)
        return groups, dims[3], max(dims[0] // groups, 1), dims[1] * dims[2]
    return c, 1, max(dims[3] // c, 1), dims[1] * dims[2]


def runs_dwconv(groups: tuple[int, int, int, int], dynamic: bool) -> bool:
    """Whether XNNPACK runs a convolution of ``groups`` (:func:`conv_groups`) with its depthwise (dwconv) kernel
    (src/operators/convolution-nhwc.c, ``select_microkernel_type``): one input and one output channel per group,
    at most DWCONV_MAX_TAPS taps, and not ``dynamic`` (dynamically quantized: the qd8 convolution has no dwconv
    kernel). Otherwise it runs its GEMM (igemm) kernel once per group, each group's channels padded to its tiles."""
    _, per_in, per_out, taps = groups
    return per_in == 1 and per_out == 1 and taps <= DWCONV_MAX_TAPS and not dynamic
_NO_PLACEMENT: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class OpFacts:
    """Every registered fact of one op type (see the module docstring for who writes each field).

    Fields left at their default mean "not registered"; :func:`missing_facts` lists them.
    """

    op_type: str
    spec: Any = None  # the cost entry (registry.OpSpec): status, formula, bytes model
    shape: Any = None  # output-shape function
    value: Any = None  # constant folding of small integer tensors
    traits: frozenset[str] = frozenset()  # contraction, sparse_weights, calls_subgraphs, init_on_constant
    not_isolated: str = ""  # why per-op timing cannot run it alone
    memory: Any = None  # registry.MemoryFacts; None: MEMORY_DEFAULT
    temporaries: Any = None  # its LiteRT kernel's temporaries function
    hybrid_only: tuple[int, int] | None = None  # (activation, weight) inputs when temporaries are hybrid-only
    tflm: Any = None  # its TFLM reference kernel's arena facts function
    placement: Mapping[str, Any] = field(default_factory=lambda: _NO_PLACEMENT)  # delegate -> its placement rule
    xnnpack: XnnpackFacts | None = None  # XNNPACK's memory facts (None: NO_XNNPACK_FACTS and the defaults)
    fusion: frozenset[str] = frozenset()  # fusion roles in XNNPACK's subgraph optimizer
    law_group: str = ""  # the latency law group ("": LAW_GROUP_DEFAULT)
    law_features: tuple[str, ...] = ()  # its own law's features, when not its group's
    law_as: str = ""  # the op type whose law predicts it: a custom op a runtime runs by a builtin's kernel
    taps_weight: int | None = None  # input position of its [Cout, kh, kw, Cin] weights (the ``taps`` feature)
    tiled_macs: bool = False  # the ``tiled_macs`` feature: MACs with the output channels tiled
    control_flow: str = ""  # IF_ELSE, CASE_BRANCHES, WHILE_LOOP, STABLEHLO_LOOP, CALL_ONCE_INIT, CALL_SUBGRAPH
    loop_counter: str = ""  # COUNTER_BELOW, COUNTER_ABOVE, COUNTER_STEP: read by the trip-count inference
    precision_from_weight: bool = False  # its precision is its weight's (a lookup table), not its activation's
    side_effects: bool = False  # partitioning chains it in order with the other side-effect ops
    weight_unpacking: str = ""  # DEQUANTIZE_WEIGHTS, DENSIFY_WEIGHTS: unpacks constant weights
    resource_variable: str = ""  # VARIABLE_HANDLE, VARIABLE_READ, VARIABLE_ASSIGN
    slice_update: tuple[int, int] | None = None  # (operand, update) inputs: writes the update into a slice
    # of the operand (how a generative model writes its KV cache: the signatures study reads its length)
    row_lookup: tuple[int, int] | None = None  # (table, ids) inputs: reads only the rows of the table the ids
    # name (an embedding lookup: the signatures study counts those rows, not the table, in the bytes per token)
    # What the TFLite converter writes for it (the what-if of another precision, studies/what_if.py; versions
    # from tflite/tools/versioning/op_version.cc): the constant weights it quantizes to int8, each (input,
    # per-channel axis); the bias input that becomes int32 in a full-integer model; the version of its
    # dynamic-range (hybrid) kernel (0: none, its weights stay float in a dynamic-range model); the version of
    # its int8 kernel (0: the float version is kept).
    quantized_weights: tuple[tuple[int, int], ...] = ()
    quantized_bias: int | None = None
    hybrid_version: int = 0
    int8_version: int = 0
    dequantized_output: bool = False  # in dynamic range it has no hybrid kernel: it reads its int8 weight and
    # writes int8, and a DEQUANTIZE after it gives its readers float32 (an embedding lookup's GATHER)
    float_in_int8: bool = False  # a full-integer model keeps its float32 tensors: a DEQUANTIZE before each float
    # input, a QUANTIZE after each float output (the converter quantizes no CAST)


_FIELDS = frozenset(f.name for f in fields(OpFacts)) - {"op_type"}
_RECORDS: dict[str, dict[str, Any]] = {}
_BUILT: dict[str, OpFacts] = {}
_PACKAGE: set[str] = set()  # op types the package itself registers (not only users, through register_cost)


def record(op_type: str, *, override: bool = False, user: bool = False, **facts: Any) -> None:
    """Write ``facts`` into the record of ``op_type`` (the registration functions' one writer).

    A fact already registered raises unless ``override`` (the public overrides of users' formulas);
    ``user``: written by a user's registration (``register_cost``, ``register_shape``), not the package's.
    """
    unknown = set(facts) - _FIELDS
    if unknown:
        raise TypeError(f"unknown op facts {sorted(unknown)}")
    fields_ = _RECORDS.setdefault(op_type, {})
    if not override:
        twice = sorted(k for k in facts if k in fields_)
        if twice:
            raise ValueError(f"{', '.join(twice)} of {op_type} registered twice")
    fields_.update(facts)
    _BUILT.pop(op_type, None)
    if not user:
        _PACKAGE.add(op_type)


def register_facts(op_types: str | Iterable[str], **facts: Any) -> None:
    """Register the facts of op types that the analysis reads beyond their formulas (module docstring):
    ``xnnpack=XnnpackFacts(...)``, ``fusion=``, ``law_group=``, ``law_features=``, ``law_as=``, ``taps_weight=``,
    ``tiled_macs=``, ``control_flow=``, ``loop_counter=``, ``precision_from_weight=``, ``side_effects=``,
    ``weight_unpacking=``, ``resource_variable=``, ``slice_update=``, ``row_lookup=``, ``quantized_weights=``,
    ``quantized_bias=``, ``hybrid_version=``, ``int8_version=``, ``dequantized_output=``,
    ``float_in_int8=``. Each fact once per op type."""
    if "fusion" in facts:
        facts["fusion"] = frozenset(facts["fusion"])
    for name in [op_types] if isinstance(op_types, str) else op_types:
        record(name, **facts)


def add_placement(op_type: str, delegate: str, rule: Any) -> None:
    """Write one delegate's placement rule into the record of ``op_type``."""
    current = dict(_RECORDS.get(op_type, {}).get("placement", {}))
    current[delegate] = rule
    record(op_type, override=True, placement=MappingProxyType(current))


def facts_of(op_type: str) -> OpFacts:
    """The record of ``op_type`` (an empty one when nothing is registered for it)."""
    built = _BUILT.get(op_type)
    if built is None:
        built = _BUILT[op_type] = OpFacts(op_type, **_RECORDS.get(op_type, {}))
    return built


def xnnpack_facts(op_type: str) -> XnnpackFacts:
    """The XNNPACK facts of ``op_type`` (:data:`NO_XNNPACK_FACTS` when none are registered)."""
    return facts_of(op_type).xnnpack or NO_XNNPACK_FACTS


def fact_failed(fact: str, op_type: str, subgraph: int, index: int, exc: BaseException) -> str:
    """The warning for a per-op fact function (temporaries, TFLM, ...) that raised on one op: the figures
    that fact feeds leave that op's part out, and say so (never a silent 0, never a crash of the analysis)."""
    return (f"op {subgraph}:{index} {op_type}: {fact} not counted ({type(exc).__name__}: {exc}); "
            "the figures leave this op's part out")


def op_types() -> tuple[str, ...]:
    """Every op type with a record, sorted."""
    return tuple(sorted(_RECORDS))


def with_fact(name: str) -> dict[str, Any]:
    """``{op type: the value of fact name}`` for the op types that registered it (e.g. ``law_group``)."""
    return {op: f[name] for op, f in sorted(_RECORDS.items()) if name in f}


def missing_facts(builtins: Iterable[str] = (), calibrated: Iterable[str] | None = None
                  ) -> dict[str, tuple[str, ...]]:
    """Which facts each op type lacks, and which defaults it takes: ``{op type: (entries...)}``.

    The op types: every record the package registers (not a user's own op), and ``builtins`` (the schema's
    builtin op names). The facts checked:

    * ``cost``: no cost entry (the op is *unsupported*); ``shape``: no output-shape function;
    * ``tflm``: no TFLM arena facts (TFLM figures are then low); ``placement.<delegate>``: no rule
      (the delegate never takes it);
    * ``memory=default``: no LiteRT memory facts (:data:`MEMORY_DEFAULT`);
    * for an op type XNNPACK takes: ``xnnpack.operator_bytes=default`` (:data:`XNNPACK_OPERATOR_DEFAULT`);
    * for an op type with a cost entry: ``law.group=default`` (:data:`LAW_GROUP_DEFAULT`), and, when
      ``calibrated`` (the op types the calibration suite has points of) is given and it is not among
      them, ``calibration=default`` (:data:`CALIBRATION_DEFAULT`).

    Facts whose absence is itself the answer (no temporaries, no trait, no fusion role) are not listed.
    """
    out: dict[str, tuple[str, ...]] = {}
    for op in sorted(_PACKAGE | set(builtins)):
        f = facts_of(op)
        lacks = []
        if f.spec is None:
            lacks.append("cost")
        if f.shape is None:
            lacks.append("shape")
        if f.tflm is None:
            lacks.append("tflm")
        lacks += [f"placement.{d}" for d in DELEGATES if d not in f.placement]
        if f.memory is None:
            lacks.append("memory=default")
        x = f.xnnpack or NO_XNNPACK_FACTS
        if XNNPACK in f.placement and x.operator_bytes is None and not x.copies_per:
            lacks.append("xnnpack.operator_bytes=default")
        if f.spec is not None and not f.law_group and not f.law_features and not f.law_as:
            lacks.append("law.group=default")
        if f.spec is not None and calibrated is not None and (f.law_as or op) not in calibrated:
            lacks.append("calibration=default")
        if lacks:
            out[op] = tuple(lacks)
    return out
