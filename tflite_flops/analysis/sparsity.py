"""Sparsity: effective MACs over the non-zero weights of contractions.

A weight stored sparse (SparsityParameters) holds only its non-zero values; a dense constant
weight is counted from its values. Ops registered with ``sparse_weights`` (every contraction,
see :func:`~tflite_flops.ops.registry.register_traits`) whose weights are sparse or mostly zero
get a weight density and effective MACs = MACs × density.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from ..reader.model import Model, Subgraph, Tensor
from ..ops.registry import INIT_ON_CONSTANT_OPS, SPARSE_WEIGHT_OPS, OpContext, join_notes as _join
from .shapes import SubgraphTensors
from ..units import DTYPE_BITS

COUNT_ZEROS_AUTO_LIMIT = 64 * 1024 * 1024  # bytes: dense weights of bigger files are not read by default
MOSTLY_ZERO = 0.5  # dense weights with more than this fraction of zeros are reported as sparse
_UNKNOWN = object()  # not counted yet


class WeightZeros:
    """Non-zero counts of the constant weights of one analysis, each counted once."""

    def __init__(self, model: Model, count_zeros: bool) -> None:
        self.model = model
        self.count_zeros = count_zeros  # read dense weights (else only sparse-encoded ones are seen)
        # (subgraph, tensor) -> (non-zeros, elements, stored sparse, exact) or None (no readable values);
        # not exact: at least that many non-zeros, enough to tell the weight is not mostly zero
        self.nonzeros: dict[tuple[int, int], tuple[int, int, bool, bool] | None] = {}
        self.init_sources: dict[int, dict[int, int]] = {}  # see _init_sources

    def count_batch(self, weighted: Iterable[tuple[Subgraph, SubgraphTensors, str, tuple[int, ...], Any]]) -> None:
        """Count the non-zeros of every dense stored weight that :meth:`fill` will look at, in one batch.

        :meth:`Model.count_nonzeros` counts weights lying together in the file in one NumPy pass.
        A weight counted alone stops once half of it is found non-zero (a dense float weight: after
        its first half), since then it cannot be mostly zero; :meth:`fill` counts it whole only when
        its op's weights together might still be. ``weighted``: (subgraph, tensors, op type,
        weights, entry with ``cost``) as :meth:`fill` takes them.
        """
        if not self.count_zeros:
            return
        wanted: dict[tuple[int, int], tuple[Tensor, int]] = {}  # (subgraph, tensor) -> (tensor, elements)
        for sg, tensors, _op_type, weights, entry in weighted:
            if not entry.cost.macs:
                continue
            constant, numel = tensors.constant, tensors.numel
            for index in weights:
                if constant[index]:
                    t = sg.tensors[index]
                    if t.sparsity is None:
                        wanted[(sg.index, index)] = (t, numel[index])
        enough = [_not_mostly_zero(numel) for _, numel in wanted.values()]
        counts = self.model.count_nonzeros([(t, 0 if t.quantization is None else _weight_zero(t))
                                            for t, _ in wanted.values()], enough=enough)
        nonzeros = self.nonzeros
        for (key, (_, numel)), nnz, bound in zip(wanted.items(), counts, enough):
            nonzeros[key] = _dense_count(nnz, numel, exact=nnz is None or nnz < bound)

    def fill(self, sg: Subgraph, tensors: SubgraphTensors, op_type: str, weights: tuple[int, ...], entry: Any) -> None:
        """Weight density and effective MACs of a contraction with sparse or mostly-zero constant weights.

        ``weights``: the op's constant inputs of rank >= 2 (biases and peepholes excluded), as
        :func:`weight_inputs` picks them. Reported when a weight is stored sparse, or when more
        than half of the weights are zeros: sets ``entry.weight_nnz``, ``entry.weight_numel``
        and completes ``entry.note``.
        """
        if op_type not in SPARSE_WEIGHT_OPS or not entry.cost.macs:
            return
        counts = [self._weight_nonzeros(sg, tensors, index) for index in weights]
        if None in counts or not _reported(counts):  # (a count stopped at half only hides a dense weight)
            return
        if not all(c[3] for c in counts):  # reported: every count must be exact
            counts = [self._weight_nonzeros(sg, tensors, index, exact=True) for index in weights]
            if None in counts or not _reported(counts):
                return
        nnz, numel = sum(c[0] for c in counts), sum(c[1] for c in counts)
        stored_sparse = any(c[2] for c in counts)
        entry.weight_nnz, entry.weight_numel = nnz, numel
        kind = "sparse-encoded weights" if stored_sparse else "mostly-zero weights"
        entry.note = _join(entry.note, f"{kind}: density {nnz / numel:.1%}, effective MACs = MACs × density")

    def _weight_nonzeros(self, sg: Subgraph, tensors: SubgraphTensors, index: int, depth: int = 0,
                         exact: bool = False) -> tuple[int, int, bool, bool] | None:
        """(non-zeros, elements, stored sparse, exact) of a constant weight tensor, or None when unknown.

        A tensor with SparsityParameters stores only its non-zero values (and the zeros inside dense
        blocks, which the kernel multiplies too): non-zeros = stored values. A dense constant is
        counted from its values (zero = the zero point of per-tensor asymmetric weights). Weights
        made at init by DENSIFY / DEQUANTIZE of a constant are traced back to their source.
        ``exact``: count again a weight :meth:`count_batch` stopped counting at half.
        """
        key = (sg.index, index)
        known = self.nonzeros.get(key, _UNKNOWN)
        if known is not _UNKNOWN and (not exact or known is None or known[3]):
            return known
        t = sg.tensors[index]
        constant, numel = tensors.constant[index], tensors.numel[index]  # = t.is_constant, t.num_elements
        result = None
        if t.sparsity is not None and constant:
            bits = DTYPE_BITS.get(t.dtype, 0)
            if bits:
                result = (min(t.data_size * 8 // bits, numel), numel, True, True)
        elif constant and self.count_zeros:
            result = _dense_count(self.model.count_nonzero(t, _weight_zero(t)), numel)
        elif depth < 3:
            source = self._init_sources(sg).get(index)
            if source is not None:
                result = self._weight_nonzeros(sg, tensors, source, depth + 1, exact)
        self.nonzeros[key] = result
        return result

    def _init_sources(self, sg: Subgraph) -> dict[int, int]:
        """{tensor: input 0 of the first DEQUANTIZE / DENSIFY that outputs it}, built once per subgraph
        (not a scan of every op per weight: that was quadratic in big models)."""
        sources = self.init_sources.get(sg.index)
        if sources is None:
            sources = self.init_sources[sg.index] = {}
            for op in sg.operators:
                if op.op_type in INIT_ON_CONSTANT_OPS and op.inputs and op.inputs[0] >= 0:
                    for o in op.outputs:
                        sources.setdefault(o, op.inputs[0])
        return sources


def weight_inputs(ctx: OpContext) -> tuple[int, ...]:
    """The weights :meth:`WeightZeros.fill` counts: the op's constant inputs (stored or made from a
    constant at init) of rank >= 2, in input order."""
    return tuple(t.index for t in ctx.inputs if t is not None and t.is_constant and len(t.shape) >= 2)


def _dense_count(nnz: int | None, numel: int, exact: bool = True) -> tuple[int, int, bool, bool] | None:
    """:meth:`WeightZeros._weight_nonzeros` of a dense weight with ``nnz`` counted non-zeros (None:
    its values cannot be read); ``numel``: the size of the array ``Model.constant`` returns."""
    return (nnz, numel, False, exact) if nnz is not None and numel else None


def _reported(counts: list[tuple[int, int, bool, bool]]) -> bool:
    """Whether an op's weights (their :meth:`WeightZeros._weight_nonzeros`) are stored sparse or mostly zero."""
    numel = sum(c[1] for c in counts)
    return bool(numel) and (any(c[2] for c in counts) or sum(c[0] for c in counts) < (1 - MOSTLY_ZERO) * numel)


def _not_mostly_zero(numel: int) -> int:
    """The fewest non-zeros that make a weight of ``numel`` elements not mostly zero (see ``MOSTLY_ZERO``)."""
    return math.ceil((1 - MOSTLY_ZERO) * numel)


def _weight_zero(t: Tensor) -> int:
    """The value that stands for 0 in a weight: the zero point of per-tensor asymmetric weights, else 0."""
    q = t.quantization
    return q.zero_point if q is not None and q.kind == "per_tensor" and q.zero_point else 0
