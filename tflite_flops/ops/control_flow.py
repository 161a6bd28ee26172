"""Control flow: the ops themselves cost nothing; the analysis costs the subgraphs they call.

WHILE and STABLEHLO_WHILE (body × trips, cond × trips+1), IF and STABLEHLO_CASE (the costlier branch, an
upper bound), CALL_ONCE (init-time), CALL and STABLEHLO_COMPOSITE (the called / decomposition subgraph).
Each op's ``control_flow`` fact names how analysis/walk.py follows it; the ``loop_counter`` facts of
LESS, GREATER and ADD are what its WHILE trip-count inference reads.
"""

from __future__ import annotations

from .custom import SDPA, xnn_dot_attention
from .facts import (CALL_ONCE_INIT, CALL_SUBGRAPH, CASE_BRANCHES, COUNTER_ABOVE, COUNTER_BELOW, COUNTER_STEP,
                    IF_ELSE, STABLEHLO_LOOP, WHILE_LOOP, register_facts)
from .placement import (CATEGORY_OP_TYPE, DRIFT_INT_COMPOSITES, GPU, XNNPACK, DelegateOp, gpu_drift_only, reason,
                        register_placement)
from .registry import OpContext, Shape, register_traits, register_zero, shape_fn
from .tflm import c_struct, fixed, register_tflm

register_zero(["WHILE", "STABLEHLO_WHILE"], "cost is in its cond/body subgraphs (× trip count)",
              bytes_model="alias", reference="this tool (control flow)")
register_zero(["IF", "STABLEHLO_CASE"], "cost is in its branch subgraphs (costlier branch counted)",
              bytes_model="alias", reference="this tool (control flow)")
register_zero("CALL_ONCE", "its subgraph runs once at init", bytes_model="alias",
              reference="this tool (control flow)")
register_zero(["CALL", "STABLEHLO_COMPOSITE"], "cost is in the called (decomposition) subgraph",
              bytes_model="alias", reference="this tool (control flow)")
# The analysis walks the subgraphs these reference (other ops' bodies, e.g. STABLEHLO_REDUCE's, are
# not walked); per-op timing cannot run any of them alone.
register_traits(["WHILE", "IF", "CALL_ONCE", "CALL"], calls_subgraphs=True,
                not_isolated="control flow: runs other subgraphs")
register_traits(["STABLEHLO_WHILE", "STABLEHLO_COMPOSITE"], calls_subgraphs=True, not_isolated="control flow")
register_traits("STABLEHLO_CASE", calls_subgraphs=True, not_isolated="control flow")


@shape_fn(["WHILE", "STABLEHLO_WHILE"])
def _loop_shape(ctx: OpContext) -> list[Shape]:
    return [t.shape for t in ctx.inputs if t is not None][:len(ctx.outputs)]


# ---- XNNPACK placement (xnnpack_delegate.cc, VisitNode: kTfLiteBuiltinStablehloComposite) -------------------------
# The delegate takes one composite, ODML's scaled dot-product attention, by its name, checked as the custom op of
# the same name; every other composite runs its decomposition on the interpreter.


@register_placement(XNNPACK, "STABLEHLO_COMPOSITE",
                    source="xnnpack_delegate.cc VisitNode (kTfLiteBuiltinStablehloComposite), VisitDotAttentionNode")
def _xnn_composite(op: DelegateOp) -> str | None:
    """``odml.scaled_dot_product_attention`` as the attention custom op; any other composite is refused."""
    name = op.opt("name")
    if name != SDPA.split(":", 1)[1]:
        return reason(CATEGORY_OP_TYPE, f"XNNPACK has no kernel for the composite {name!r}")
    return xnn_dot_attention(op)


# ---- GPU placement: the LiteRT GPU accelerator (ml_drift_delegate/tflite/model_builder.cc NewOperationParser,
# kTfLiteBuiltinStablehloComposite) parses the composites it has kernels for by name, in place of their
# decomposition; the classic delegate parses none.
_DRIFT_COMPOSITES = frozenset({"odml.group_norm", "odml.rms_norm", "custom_call.rotary_positional_embedding",
                               "odml.scaled_dot_product_attention"}) | DRIFT_INT_COMPOSITES


@register_placement(GPU, "STABLEHLO_COMPOSITE",
                    source="ml_drift_delegate/tflite/model_builder.cc NewOperationParser "
                           "(kTfLiteBuiltinStablehloComposite), delegate/composite/custom_parsers.cc "
                           "CustomOperationParserFactory::Create")
def _gpu_composite(op: DelegateOp) -> str | None:
    """ML Drift only: the composites ``odml.group_norm``, ``odml.rms_norm``, ``odml.scaled_dot_product_attention``,
    ``custom_call.rotary_positional_embedding``, ``odml.cache_update``, ``odml.runtime_bmm``,
    ``odml.sdpa_transposed``, ``odml.rope`` and ``moe``; every other runs its decomposition on the CPU."""
    found = gpu_drift_only(op)
    if found:
        return found
    name = op.opt("name")
    if name not in _DRIFT_COMPOSITES:
        return reason(CATEGORY_OP_TYPE, f"the LiteRT GPU accelerator has no parser for the composite {name!r}")
    return None


# TensorFlow Lite Micro: while.cc WhileInit and if.cc IfInit allocate an OpData of two subgraph indices;
# TfLiteWhileParams / TfLiteIfParams hold the same two ints. call_once.cc CallOnceInit: OpData
# {init subgraph index, has_run}; TfLiteCallOnceParams: the index.
register_tflm(["WHILE", "IF"])(fixed(lambda t: c_struct(t, "ii"), lambda t: c_struct(t, "ii"),
                                     "micro/kernels/while.cc WhileInit, if.cc IfInit"))
register_tflm("CALL_ONCE")(fixed(lambda t: c_struct(t, "i"), lambda t: c_struct(t, "ib"),
                                 "micro/kernels/call_once.cc CallOnceInit"))


# The facts the analysis reads beyond the formulas (ops/facts.py): latency law group and features,
# XNNPACK fusion roles and memory (operator sizes: ai-edge-litert 2.3.0 on x86-64, read off the allocation
# tracer, see analysis/xnnpack_memory.py), control flow, weight unpacking, resource variables.
# A WHILE's own latency law (its cond and body ops have laws of their own): a constant per WHILE run, one per
# trip (invoking the cond and body subgraphs) and one per loop-variable element copied per trip
# (Eval_static / Eval_dynamic in LiteRT's tflite/kernels/while.cc copy the loop variables between the
# caller's, the cond's and the body's tensors every trip). A body whose op outputs change shape every
# trip adds a cost per trip (the dynamic loop's copies and re-allocation) and one per delegated op it
# re-prepares every trip (XNNPACK reshapes the partitions that run after such an op; latency.predict.loop_reprepare).
register_facts("WHILE", law_features=("1", "trips", "copied", "growing_trips", "reshaped"), control_flow=WHILE_LOOP,
               side_effects=True)
register_facts("IF", control_flow=IF_ELSE, side_effects=True)
register_facts("CALL_ONCE", control_flow=CALL_ONCE_INIT, side_effects=True)
register_facts("STABLEHLO_WHILE", control_flow=STABLEHLO_LOOP)
register_facts("STABLEHLO_CASE", control_flow=CASE_BRANCHES)
register_facts(["CALL", "STABLEHLO_COMPOSITE"], control_flow=CALL_SUBGRAPH)
# The converter's loop counter (walk.infer_trip_count): LESS(x, bound) or GREATER(bound, x) in the cond,
# ADD(x, step) in the body.
register_facts("LESS", loop_counter=COUNTER_BELOW)
register_facts("GREATER", loop_counter=COUNTER_ABOVE)
register_facts("ADD", loop_counter=COUNTER_STEP)
