"""Per-op cost formulas, output shapes and constant folding, by family.

Importing this package registers every family; :func:`supported_ops` is derived from them.
"""

from . import control_flow, conv, elementwise, layout, matmul, pool, reduce  # noqa: F401  (registration)
from .registry import (Cost, OpContext, OpSpec, TensorInfo, lookup, lookup_shape, lookup_value, register_cost,
                       supported_ops)

__all__ = ["Cost", "OpContext", "OpSpec", "TensorInfo", "lookup", "lookup_shape", "lookup_value",
           "register_cost", "supported_ops"]
