"""Per-op cost formulas, output shapes and constant folding, by family.

Importing this package registers every family; :func:`supported_ops` is derived from them.
"""

from . import (accelerator, control_flow, conv, custom, elementwise, layout, layout_placement,
               matmul, misc, pool, recurrent, reduce, stablehlo)  # noqa: F401  # (registration)
from .registry import (Cost, OpContext, OpSpec, TensorInfo, lookup, lookup_shape, lookup_value, register_cost,
                       register_shape, supported_ops)

__all__ = ["Cost", "OpContext", "OpSpec", "TensorInfo", "lookup", "lookup_shape", "lookup_value",
           "register_cost", "register_shape", "supported_ops"]
