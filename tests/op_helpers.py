"""Helpers for formula tests: build a shape-resolved op by hand and call its registered functions."""

from __future__ import annotations

import numpy as np

from tflite_flops.ops.registry import OpContext, TensorInfo, lookup, lookup_shape


def t(shape, dtype="FLOAT32", value=None, const=False) -> TensorInfo:
    """A tensor of ``shape``; constant when ``const`` or when ``value`` is given."""
    return TensorInfo(0, "", dtype, tuple(shape), is_constant=const or value is not None,
                      value=None if value is None else np.asarray(value))


def ctx(op_type, inputs, outputs=(), **options) -> OpContext:
    """An op with these inputs, outputs and options."""
    return OpContext(op_type, options, tuple(inputs), tuple(outputs))


def cost(c: OpContext):
    """The registered cost of the op."""
    return lookup(c.op_type).cost(c)


def shape(c: OpContext):
    """The registered output shapes of the op."""
    return list(lookup_shape(c.op_type)(c))
