"""What LiteRT itself did with a model: the ops XNNPACK replaced and its partitions (the reference for placement).

After the delegate is applied, each partition is one DELEGATE node appended to the primary
subgraph's nodes, with the partition's input and output tensors. The ops a DELEGATE node replaced
are recovered from those: walking back from its outputs through the producers, stopping at its
inputs, reaches exactly the ops of the partition (a partition's inputs are every tensor it reads
from outside). Only the primary subgraph's nodes are visible through the Python interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LiteRTPlan:
    """The primary subgraph after delegation."""

    partitions: tuple[frozenset[int], ...]  # the op indices each DELEGATE node replaced
    delegated: frozenset[int]
    ops: int  # the model's ops in the primary subgraph


def litert_plan(model_path: str, *, xnnpack: bool = True, input_shapes: dict[int, list[int]] | None = None,
                num_threads: int = 1) -> LiteRTPlan:
    """Apply LiteRT's default delegate (XNNPACK) the way ``allocate_tensors`` does, and read the plan."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    resolver = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    interp = Interpreter(model_path=model_path, experimental_op_resolver_type=resolver, num_threads=num_threads)
    for index, shape in (input_shapes or {}).items():
        interp.resize_tensor_input(index, shape)
    interp.allocate_tensors()
    nodes = interp._get_ops_details()
    producer: dict[int, int] = {}
    originals = [n for n in nodes if n["op_name"] != "DELEGATE"]
    for n in originals:
        for t in n["outputs"]:
            producer[int(t)] = int(n["index"])
    inputs_of = {int(n["index"]): [int(t) for t in n["inputs"] if t >= 0] for n in originals}
    partitions = []
    for n in nodes:
        if n["op_name"] != "DELEGATE":
            continue
        boundary = {int(t) for t in np.asarray(n["inputs"]) if t >= 0}
        found: set[int] = set()
        stack = [int(t) for t in n["outputs"]]
        while stack:
            t = stack.pop()
            if t in boundary or t not in producer or producer[t] in found:
                continue
            found.add(producer[t])
            stack.extend(inputs_of[producer[t]])
        partitions.append(frozenset(found))
    delegated = frozenset().union(*partitions) if partitions else frozenset()
    return LiteRTPlan(tuple(partitions), delegated, len(originals))
