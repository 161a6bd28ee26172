"""TensorFlow Lite Micro's arena: the tensors' lifetimes as its allocator marks them, planned by
``GreedyMemoryPlanner`` (tflite/micro/micro_allocation_info.cc: one timeline over the entry
subgraph and the subgraphs its IF / WHILE / CALL_ONCE ops run, sizes rounded up to 16 bytes,
largest first, first fit).
"""
from __future__ import annotations

from itertools import compress
from operator import itemgetter
from typing import Mapping, Sequence

from ..reader.model import Model
from .planner import TFLM_ALIGNMENT, first_fit_arena


def tflm_arena(model: Model, entry: int, sizes: Mapping[int, Sequence[int]], constant: Mapping[int, Sequence[bool]],
               entry_buffers: list[tuple[int, int, int]] | None = None) -> int:
    """The head of TFLM's arena by GreedyMemoryPlanner, for the tensors of every subgraph.

    Lifetimes follow ``AllocationInfoBuilder::MarkAllocationLifetimes`` from ``entry``: one scope
    count per op, the subgraphs of IF / WHILE / CALL_ONCE nested inside their caller's scope.
    Tensors no op reaches keep TFLM's "uninitialized" lifetime (-1, -1), as TFLM plans them too.
    ``entry_buffers``: the entry's buffers as the memory pass makes them when the entry calls no
    subgraph (its scopes are then its ops' own), which spares a second walk of the entry.
    """
    first = {sg.index: [-1] * len(sg.tensors) for sg in model.subgraphs}  # -1: TFLM's "uninitialized"
    last = {sg.index: [-1] * len(sg.tensors) for sg in model.subgraphs}
    scope = 0

    def mark(index: int, depth: int) -> None:
        nonlocal scope
        sg, firsts, lasts = model.subgraphs[index], first[index], last[index]
        for t in sg.inputs:
            if t >= 0:
                if firsts[t] < 0:
                    firsts[t] = scope
                lasts[t] = scope
        for op in sg.operators:
            scope += 1
            if op.subgraph_refs and depth < 64:
                for t in op.outputs:
                    if t >= 0 and firsts[t] < 0:
                        firsts[t] = scope
                for key in _TFLM_CALLS.get(op.op_type, ()):
                    if key in op.subgraph_refs:
                        scope += 1
                        mark(op.subgraph_refs[key], depth + 1)
            for t in op.inputs:
                if t >= 0:
                    lasts[t] = scope
            for t in op.outputs:  # (first use here too, unless a called subgraph moved the scope on)
                if t >= 0:
                    if firsts[t] < 0:
                        firsts[t] = scope
                    lasts[t] = scope
        for t in sg.outputs:
            if t >= 0:
                if firsts[t] < 0:
                    firsts[t] = scope
                lasts[t] = scope

    if entry_buffers is None:
        mark(entry, 0)
    mark = None  # type: ignore[assignment]  # a recursive closure: its cycle would keep the model alive
    if entry_buffers is not None:
        scope = len(model.subgraphs[entry].operators)
    buffers = []  # (size, first use, last use), the lifetimes shifted by one: -1 ("never used") -> step 0
    for sg in model.subgraphs:
        if sg.index == entry and entry_buffers is not None:
            buffers += entry_buffers
            continue
        tensors, size_of, constant_of, firsts, lasts = (sg.tensors, sizes[sg.index], constant[sg.index],
                                                        first[sg.index], last[sg.index])
        for t in compress(range(min(len(tensors), len(size_of), len(constant_of))), size_of):
            if not constant_of[t] and not tensors[t].is_variable:
                buffers.append((-(-size_of[t] // TFLM_ALIGNMENT) * TFLM_ALIGNMENT, firsts[t] + 1, lasts[t] + 1))
    buffers.sort(key=itemgetter(0), reverse=True)  # stable: equal sizes keep their tensor order
    return first_fit_arena(buffers, scope + 2)


# The subgraphs TFLM's allocator nests inside an op's lifetime scope, in its order.
_TFLM_CALLS = {"IF": ("then_subgraph_index", "else_subgraph_index"), "CALL_ONCE": ("init_subgraph_index",),
               "WHILE": ("cond_subgraph_index", "body_subgraph_index")}
