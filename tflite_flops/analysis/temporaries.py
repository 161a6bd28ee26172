"""The temporaries LiteRT's builtin kernels add in Prepare, per op, from the facts registered next to the
formulas (:func:`~tflite_flops.ops.registry.register_temporaries`): what the memory pass plans in the arena
beside the tensors (:mod:`~tflite_flops.analysis.memory`)."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..ops.facts import fact_failed
from ..ops.registry import HYBRID_ONLY_TEMPORARIES, HYBRID_WEIGHT_DTYPES, TEMPORARIES, KernelSetup, OpContext, Temporary
from ..reader.model import Model
from .shapes import SubgraphShapes, subgraph_tensors


def kernel_temporaries(model: Model, states: Mapping[int, SubgraphShapes], reached: Sequence[int],
                       threads: int = 1, warnings: list[str] | None = None
                       ) -> dict[tuple[int, int], tuple[Temporary, ...]]:
    """The temporaries LiteRT's builtin kernels (XNNPACK off, ``threads`` threads) add in Prepare, per
    op of the reached subgraphs: ``{(subgraph, op): temporaries}`` for the ops that have any.

    Each op type's facts are registered next to its formula (:func:`~tflite_flops.ops.registry.register_temporaries`).
    An op whose kernel's facts raise (shapes that do not fit them, unresolved or malformed, or a bug in
    the fact) is left out, with a line in ``warnings`` (:func:`~tflite_flops.ops.facts.fact_failed`).
    """
    out: dict[tuple[int, int], tuple[Temporary, ...]] = {}
    for index in reached:
        sg, state = model.subgraphs[index], states[index]
        ops = [op for op in sg.operators if op.op_type in TEMPORARIES]
        if not ops:
            continue
        tensors = subgraph_tensors(sg, state)
        stored = sg.tensors
        setups: dict[int, KernelSetup] = {}
        for op in ops:
            inputs = op.inputs
            hybrid = HYBRID_ONLY_TEMPORARIES.get(op.op_type)
            if hybrid is not None:  # no temporaries unless a float32 activation meets an integer weight
                act, weight = hybrid
                if (len(inputs) <= max(act, weight) or inputs[act] < 0 or inputs[weight] < 0
                        or stored[inputs[act]].dtype != "FLOAT32"
                        or stored[inputs[weight]].dtype not in HYBRID_WEIGHT_DTYPES):
                    continue
            weight_index = inputs[1] if len(inputs) > 1 and inputs[1] >= 0 else None
            quant = stored[weight_index].quantization if weight_index is not None else None
            scales = quant.num_scales if quant is not None else 0
            if scales > 1 and quant.uniform_scales:  # type: ignore[union-attr]
                scales = 1
            setup = setups.get(scales)
            if setup is None:
                setup = setups[scales] = KernelSetup(threads, scales)
            infos = tensors.infos_of(state, inputs + op.outputs)
            ctx = OpContext(op.op_type, op.options, infos[:len(inputs)], infos[len(inputs):], index, op.index)
            try:
                found = TEMPORARIES[op.op_type](ctx, setup)
            except Exception as exc:  # any failing fact: a warning, never a silent 0 nor a crash
                if warnings is not None:
                    warnings.append(fact_failed("LiteRT kernel temporaries", op.op_type, index, op.index, exc))
                continue
            if found:
                out[(index, op.index)] = found
    return out
