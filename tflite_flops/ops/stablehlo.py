"""STABLEHLO_* builtins not covered by the elementwise family, and the deprecated REDUCE_WINDOW.

The schema warns that most STABLEHLO ops have no TFLite runtime kernel ("WARNING: No runtime
support"); the ones that run are listed in :data:`RUNTIME_SUPPORTED`. The others are still
costed from their shapes where the work is well defined (a model may be analysed without being
run), and their note says that the runtime cannot execute them.

Reductions, windows and scatters apply a body subgraph per element; the count assumes one
binary op in the body (the usual add/max/min), as the analysis does not cost those bodies.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..units import FLOPS_PER_MAC, num_elements
from .facts import register_facts
from .registry import (Cost, OpContext, Shape, register, register_not_costed, register_traits, register_zero,
                       same_as_input, shape_fn)

# STABLEHLO ops that the schema does not mark "No runtime support".
RUNTIME_SUPPORTED = frozenset({"STABLEHLO_ADD", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_MINIMUM",
                               "STABLEHLO_SCATTER", "STABLEHLO_PAD", "STABLEHLO_REDUCE_WINDOW",
                               "STABLEHLO_GATHER", "STABLEHLO_RNG_BIT_GENERATOR", "STABLEHLO_SHIFT_LEFT",
                               "STABLEHLO_CASE", "STABLEHLO_COMPOSITE"})
NO_RUNTIME = "no TFLite runtime kernel (schema)"


register_zero(["STABLEHLO_RESHAPE", "STABLEHLO_CONCATENATE", "STABLEHLO_BROADCAST_IN_DIM", "STABLEHLO_SLICE",
               "STABLEHLO_DYNAMIC_SLICE", "STABLEHLO_DYNAMIC_UPDATE_SLICE", "STABLEHLO_IOTA",
               "STABLEHLO_TRANSPOSE", "STABLEHLO_CONVERT", "STABLEHLO_SELECT"],
              "data movement: no arithmetic; " + NO_RUNTIME)
register_zero(["STABLEHLO_PAD", "STABLEHLO_GATHER"], "data movement: no arithmetic")
register_zero("STABLEHLO_RNG_BIT_GENERATOR", "random bit generation is not counted as arithmetic (as onnx-tool)",
              reference="onnx-tool (0)")
register_not_costed("STABLEHLO_CUSTOM_CALL", "an opaque call target: its work is unknown; " + NO_RUNTIME)
register_not_costed("STABLEHLO_SORT", "cost depends on its comparator subgraph and the data; " + NO_RUNTIME)

shape_fn("STABLEHLO_CONVERT")(same_as_input)


@shape_fn("STABLEHLO_TRANSPOSE")
def _transpose_shape(ctx: OpContext) -> list[Shape]:
    x = ctx.input(0).shape
    perm = [int(p) for p in ctx.opt("permutation", ()) or ()]
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"STABLEHLO_TRANSPOSE: permutation {perm} does not fit rank {len(x)}")
    return [tuple(x[p] for p in perm)]


register_traits(["STABLEHLO_CONVOLUTION", "STABLEHLO_DOT_GENERAL"], sparse_weights=True)


# STABLEHLO_CONVOLUTION: each output element is a dot product over the kernel's spatial window
# and its input-feature dim (= C_in / feature_group_count):
#   MACs = n(out) · Π(kernel spatial dims) · kernel[input feature dim]; FLOPs = 2·MACs.
@register("STABLEHLO_CONVOLUTION", "MACs = n(out)·Π(K spatial)·Ci/G; FLOPs = 2·MACs",
          reference="generic conv rule (PyTorch flop_counter, fvcore)")
def convolution(ctx: OpContext) -> Cost:
    """StableHLO general convolution."""
    kernel = ctx.input(1).shape
    spatial = [int(d) for d in ctx.opt("kernel_spatial_dimensions", ()) or ()]
    feature = int(ctx.opt("kernel_input_feature_dimension", len(kernel) - 2))
    if not kernel or any(not 0 <= d < len(kernel) for d in [*spatial, feature]):
        raise ShapeError(f"STABLEHLO_CONVOLUTION: kernel {kernel} does not fit its dimension numbers")
    macs = ctx.output(0).n * num_elements(kernel[d] for d in spatial) * kernel[feature]
    return Cost(macs, FLOPS_PER_MAC * macs, note=NO_RUNTIME)


# STABLEHLO_DOT_GENERAL: MACs = n(out) · Π(lhs contracting dim sizes); FLOPs = 2·MACs.
@register("STABLEHLO_DOT_GENERAL", "MACs = n(out)·Π(contracting dims); FLOPs = 2·MACs",
          reference="PyTorch bmm / fvcore einsum logic")
def dot_general(ctx: OpContext) -> Cost:
    """StableHLO general dot product (batched matmul / einsum)."""
    lhs = ctx.input(0).shape
    dims = [int(d) for d in ctx.opt("lhs_contracting_dimensions", ()) or ()]
    if any(not 0 <= d < len(lhs) for d in dims):
        raise ShapeError(f"STABLEHLO_DOT_GENERAL: contracting dims {dims} do not fit lhs {lhs}")
    macs = ctx.output(0).n * num_elements(lhs[d] for d in dims)
    return Cost(macs, FLOPS_PER_MAC * macs, note=NO_RUNTIME)


@shape_fn("STABLEHLO_DOT_GENERAL")
def _dot_general_shape(ctx: OpContext) -> list[Shape]:
    lhs, rhs = ctx.input(0).shape, ctx.input(1).shape
    lb = [int(d) for d in ctx.opt("lhs_batching_dimensions", ()) or ()]
    rb = [int(d) for d in ctx.opt("rhs_batching_dimensions", ()) or ()]
    lc = [int(d) for d in ctx.opt("lhs_contracting_dimensions", ()) or ()]
    rc = [int(d) for d in ctx.opt("rhs_contracting_dimensions", ()) or ()]
    batch = tuple(lhs[d] for d in lb)
    lfree = tuple(d for i, d in enumerate(lhs) if i not in lb and i not in lc)
    rfree = tuple(d for i, d in enumerate(rhs) if i not in rb and i not in rc)
    return [batch + lfree + rfree]


# STABLEHLO_REDUCE: inputs are k operands then k init values; one body op per reduced element
# of each operand: FLOPs = Σ_operands (n(in) − n(out)).
@register("STABLEHLO_REDUCE", "FLOPs = n(in) − n(out) per operand (one body op)",
          reference="TF profiler Sum (n(in) − n(out))")
def reduce(ctx: OpContext) -> Cost:
    """StableHLO reduce over dimensions."""
    ins = ctx.present_inputs
    k = max(len(ins) // 2, 1)
    flops = sum(max(ins[i].n - ctx.output(min(i, len(ctx.outputs) - 1)).n, 0) for i in range(k))
    return Cost(0, flops, note="assumes one op in the reduction body; " + NO_RUNTIME)


@shape_fn("STABLEHLO_REDUCE")
def _reduce_shape(ctx: OpContext) -> list[Shape]:
    dims = {int(d) for d in ctx.opt("dimensions", ()) or ()}
    x = ctx.input(0).shape
    return [tuple(d for i, d in enumerate(x) if i not in dims)] * len(ctx.outputs)


# STABLEHLO_REDUCE_WINDOW: one body op per window tap: FLOPs = Π(window)·n(out), as the pools.
@register("STABLEHLO_REDUCE_WINDOW", "FLOPs = Π(window)·n(out)", reference="as AvgPool/MaxPool (TF profiler)")
def reduce_window(ctx: OpContext) -> Cost:
    """StableHLO windowed reduction."""
    window = [int(d) for d in ctx.opt("window_dimensions", ()) or ()]
    if not window:
        raise ShapeError("STABLEHLO_REDUCE_WINDOW: window_dimensions are missing")
    return Cost(0, num_elements(window) * sum(o.n for o in ctx.outputs if o is not None),
                note="assumes one op in the reduction body")


# REDUCE_WINDOW (deprecated builtin 205): inputs 0 x, 1 init value, 2 window shape, 3 strides,
# 4 dilations; FLOPs = Π(window)·n(out).
@register("REDUCE_WINDOW", "FLOPs = Π(window)·n(out)", reference="as AvgPool/MaxPool (TF profiler)")
def reduce_window_builtin(ctx: OpContext) -> Cost:
    """Windowed reduction (deprecated builtin)."""
    value = ctx.input(2).value
    if value is None:
        raise ShapeError("REDUCE_WINDOW: window shape is not a known constant")
    window = [int(d) for d in value.reshape(-1).tolist()]
    return Cost(0, num_elements(window) * ctx.output(0).n,
                note=f"reduce function {ctx.opt('reduce_function', '?')}")


# STABLEHLO_SCATTER: inputs 0 operand, 1 indices, 2 updates; the update computation combines
# each update element with the operand: FLOPs = n(updates) (one body op, e.g. add).
@register("STABLEHLO_SCATTER", "FLOPs = n(updates) (one body op)", reference="onnx-tool ScatterND-like (1/update)")
def scatter(ctx: OpContext) -> Cost:
    """StableHLO scatter with an update computation."""
    return Cost(0, ctx.input(2).n, note="assumes one op in the update body")


shape_fn("STABLEHLO_SCATTER")(same_as_input)


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
register_facts("STABLEHLO_DOT_GENERAL", law_group="matmul")
