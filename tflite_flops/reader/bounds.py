"""Bounds on the work a model's content may ask for, each in proportion to the file (issue: hostile inputs).

The reader's own bounds (tables, subgraphs, operators and decoded vector elements per byte) are in
:mod:`tflite_flops.reader.columnar`; the bundle's (sections) in :mod:`tflite_flops.reader.bundle`. Here:

* the call graph (:func:`check_call_graph`): no cycle, nesting at most :data:`MAX_NESTING` deep, and a
  walk of at most :func:`walk_limit` operator visits (:data:`WALK_VISITS`);
* ``--all-signatures`` (:func:`check_signature_work`): signatures × operators within :data:`SIGNATURE_WORK`.

Each refusal is one :class:`~tflite_flops.errors.ModelFormatError` line.
"""

from __future__ import annotations

from ..errors import ModelFormatError
from .model import Model, calls_subgraphs


# The analysis walks a called subgraph once per call site, recursing through each control-flow op.
# A call graph is refused when its subgraphs nest deeper than MAX_NESTING (every recursion over
# subgraphs -- the walk, the memory plans, TFLM's -- stays far inside Python's stack), or when the
# walk would visit more operators than WALK_VISITS allows: a base plus two per operator of the model
# (a real model visits each op about once; a diamond chain, IF then=s+1 else=s+1, doubles per level).
# The operators themselves are bounded by the file's size (columnar.TYPE_LIMITS, DISTINCT_LIMITS), so the walk is too.
MAX_NESTING = 64
WALK_VISITS = (16_384, 2)  # (base, per operator of the model)


def _callees(model: Model) -> list[list[int]]:
    """Per subgraph, the subgraphs its ops name (once per reference, in op order)."""
    return [[ref for op in filter(calls_subgraphs, sg.operators) for ref in op.subgraph_refs.values()]
            for sg in model.subgraphs]


def walk_limit(model: Model) -> int:
    """The most operator visits one walk of ``model`` may make (:data:`WALK_VISITS`)."""
    base, per_op = WALK_VISITS
    return base + per_op * sum(len(sg.operators) for sg in model.subgraphs)


def check_call_graph(model: Model, entry: int = 0) -> None:
    """Refuse subgraph references that form a cycle, nest too deep, or expand into an absurd walk.

    Args:
        model: a parsed model whose subgraph references are already range-checked.
        entry: the subgraph the analysis starts at (a signature's; the check at load uses 0).

    Raises:
        ModelFormatError: a cycle (``0 -> 1 -> 0``), subgraphs nested more than :data:`MAX_NESTING`
            levels deep, or a walk from ``entry`` (then of every subgraph it does not reach, in order,
            as :func:`tflite_flops.analysis.walk.walk_model` does) that visits more operators than
            :func:`walk_limit`.
    """
    n = len(model.subgraphs)
    callees = _callees(model)
    if not any(callees):
        return
    limit = walk_limit(model)
    # Iterative depth-first search with colours: 0 new, 1 on the stack, 2 done.
    colour = [0] * n
    visits = [0] * n  # ops visited by a walk that starts at this subgraph (capped at limit + 1)
    depth = [0] * n  # subgraphs on the longest call chain that starts here
    for start in range(n):
        if colour[start]:
            continue
        stack = [(start, 0)]
        colour[start] = 1
        while stack:
            node, i = stack[-1]
            if i < len(callees[node]):
                stack[-1] = (node, i + 1)
                child = callees[node][i]
                if colour[child] == 1:
                    path = [s for s, _ in stack]
                    loop = path[path.index(child):] + [child]
                    raise ModelFormatError("subgraph references form a cycle: "
                                           + " -> ".join(map(str, loop)))
                if colour[child] == 0:
                    colour[child] = 1
                    stack.append((child, 0))
                continue
            stack.pop()
            colour[node] = 2
            visits[node] = min(limit + 1, len(model.subgraphs[node].operators) + sum(visits[c] for c in callees[node]))
            depth[node] = 1 + max((depth[c] for c in callees[node]), default=0)
            if depth[node] > MAX_NESTING:
                raise ModelFormatError(f"subgraphs nest more than {MAX_NESTING} levels deep through control flow "
                                       f"(from subgraph {node}); refusing a call graph this deep")
    # The walk: the entry, then each subgraph nothing walked so far (with all it calls).
    reached = [False] * n
    total = 0
    for start in [entry, *range(n)]:
        if reached[start]:
            continue
        total += visits[start]
        todo = [start]
        reached[start] = True
        while todo:
            for child in callees[todo.pop()]:
                if not reached[child]:
                    reached[child] = True
                    todo.append(child)
    if total > limit:
        raise ModelFormatError(f"subgraph references expand into a walk over more than {limit:,} operators "
                               f"({WALK_VISITS[0]:,} + {WALK_VISITS[1]} per operator of the model); "
                               "refusing a call graph this deep")


# ``--all-signatures`` analyses the model once per signature, and each analysis walks every subgraph (the
# ones its signature does not reach are listed): its work is the signatures times (the model's operators
# + a fixed cost of about 100 operator visits). That product is bounded by the file's size: base + size // bytes.
# (A real multi-signature model is large: 10 signatures over 10,000 ops come with hundreds of MB of weights.)
SIGNATURE_WORK = (65_536, 32)
SIGNATURE_FIXED_COST = 100  # an analysis's fixed cost, in operator visits


def check_signature_work(model: Model) -> None:
    """Refuse analysing every signature of ``model`` when that work is out of proportion to its file
    (:data:`SIGNATURE_WORK`); raises :class:`ModelFormatError`, one line."""
    ops = sum(len(sg.operators) for sg in model.subgraphs)
    work = len(model.signatures) * (ops + SIGNATURE_FIXED_COST)
    base, per = SIGNATURE_WORK
    limit = base + model.size_bytes // per
    if work > limit:
        raise ModelFormatError(f"{len(model.signatures):,} signatures over {ops:,} operators: analysing every one "
                               f"would visit {work:,} operators, more than {limit:,} for a {model.size_bytes:,}-byte "
                               f"file ({base:,} + one per {per} bytes)")
