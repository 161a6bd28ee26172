"""What LiteRT itself did with a model: the ops XNNPACK replaced and its partitions (the reference for placement).

After the delegate is applied, each partition is one DELEGATE node appended to the primary
subgraph's nodes, with the partition's input and output tensors. The ops a DELEGATE node replaced
are recovered from those: walking back from its outputs through the producers, stopping at its
inputs, reaches the ops of the partition (a partition's inputs are every tensor it reads from
outside) whose results are used outside it. Ops whose results are not (an ASSIGN_VARIABLE) are
placed from the tensors they read (:func:`_add_sinks`); an op the tensors cannot place (one with
neither inputs nor outputs, such as a CALL_ONCE) is reported in ``ambiguous``. Only the primary
subgraph's nodes are visible through the Python interpreter.
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
    ambiguous: frozenset[int] = frozenset()  # ops (with no output read) the DELEGATE nodes' tensors cannot place


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
    delegates = [n for n in nodes if n["op_name"] == "DELEGATE"]
    found_sets: list[set[int]] = []
    for n in delegates:
        boundary = {int(t) for t in np.asarray(n["inputs"]) if t >= 0}
        found: set[int] = set()
        stack = [int(t) for t in n["outputs"]]
        while stack:
            t = stack.pop()
            if t in boundary or t not in producer or producer[t] in found:
                continue
            found.add(producer[t])
            stack.extend(inputs_of[producer[t]])
        found_sets.append(found)
    graph_outputs = {int(d["index"]) for d in interp.get_output_details()}
    ambiguous = _add_sinks(delegates, found_sets, originals, inputs_of, graph_outputs)
    partitions = [frozenset(f) for f in found_sets]
    delegated = frozenset().union(*partitions) if partitions else frozenset()
    return LiteRTPlan(tuple(partitions), delegated, len(originals), ambiguous)


def _add_sinks(delegates: list[dict], found_sets: list[set[int]], originals: list[dict],
               inputs_of: dict[int, list[int]], graph_outputs: set[int]) -> frozenset[int]:
    """Add to each partition the ops the walk back from its outputs cannot reach: ops whose results
    leave no trace outside it (an ASSIGN_VARIABLE, or an op read only by one).

    Such an op X belongs to partition P when every tensor X reads is available in P (P's inputs or
    produced in P), none it writes is an input of P, and either X reads a tensor produced in P that
    P does not output (a kept op would need it as an output), or X reads an input of P no op found in
    P reads (P's inputs are exactly what its ops read from outside). Repeated until nothing is added.
    Returns the ops left that could still belong to a partition (all they read available in it,
    nothing they write read anywhere): the tensors cannot tell whether they were replaced.
    """
    outputs_of = {int(n["index"]): [int(t) for t in n["outputs"] if t >= 0] for n in originals}
    claimed = set().union(*found_sets) if found_sets else set()
    changed = True
    while changed:
        changed = False
        for n, found in zip(delegates, found_sets):
            p_inputs = {int(t) for t in np.asarray(n["inputs"]) if t >= 0}
            p_outputs = {int(t) for t in np.asarray(n["outputs"]) if t >= 0}
            made = {t for i in found for t in outputs_of[i]}
            read = {t for i in found for t in inputs_of[i]}
            for i, ins in inputs_of.items():
                if i in claimed or not all(t in p_inputs or t in made for t in ins) or any(
                        t in p_inputs for t in outputs_of[i]):
                    continue
                internal = any(t in made and t not in p_outputs for t in ins)
                unexplained = any(t in p_inputs and t not in read for t in ins)
                if internal or unexplained:
                    found.add(i)
                    claimed.add(i)
                    made.update(outputs_of[i])
                    read.update(ins)
                    changed = True
    read_anywhere = {t for ins in inputs_of.values() for t in ins}
    read_anywhere |= graph_outputs
    ambiguous = set()
    for n, found in zip(delegates, found_sets):
        p_inputs = {int(t) for t in np.asarray(n["inputs"]) if t >= 0}
        made = {t for i in found for t in outputs_of[i]}
        for i, ins in inputs_of.items():
            if i not in claimed and all(t in p_inputs or t in made for t in ins) and not any(
                    t in p_inputs or t in read_anywhere for t in outputs_of[i]):
                ambiguous.add(i)
    return frozenset(ambiguous)
