"""Control flow: the ops themselves cost nothing; the analysis costs the subgraphs they call.

WHILE (body × trips, cond × trips+1), IF (costlier branch, an upper bound), CALL_ONCE (init-time),
CALL and STABLEHLO_COMPOSITE (the called / decomposition subgraph). See analysis.py.
"""

from __future__ import annotations

from .registry import OpContext, Shape, register_zero, shape_fn

register_zero(["WHILE", "STABLEHLO_WHILE"], "cost is in its cond/body subgraphs (× trip count)",
              bytes_model="alias", reference="this tool (control flow)")
register_zero(["IF", "STABLEHLO_CASE"], "cost is in its branch subgraphs (costlier branch counted)",
              bytes_model="alias", reference="this tool (control flow)")
register_zero("CALL_ONCE", "its subgraph runs once at init", bytes_model="alias",
              reference="this tool (control flow)")
register_zero(["CALL", "STABLEHLO_COMPOSITE"], "cost is in the called (decomposition) subgraph",
              bytes_model="alias", reference="this tool (control flow)")


@shape_fn(["WHILE", "STABLEHLO_WHILE"])
def _loop_shape(ctx: OpContext) -> list[Shape]:
    return [t.shape for t in ctx.inputs if t is not None][:len(ctx.outputs)]
