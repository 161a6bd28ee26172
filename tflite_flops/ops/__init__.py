"""Per-op cost formulas, output shapes and constant folding, by family.

Importing this package registers every family; :func:`supported_ops` is derived from them.
"""

from . import (accelerator, cmsis_nn, control_flow, conv, custom, elementwise, layout,  # noqa: F401  # (registration)
               layout_placement, matmul, misc, pool, recurrent, reduce, stablehlo)
from .registry import (Cost, OpContext, OpSpec, TensorInfo, lookup, lookup_shape, lookup_value, register_cost,
                       register_shape, supported_ops)

__all__ = ["Cost", "OpContext", "OpSpec", "TensorInfo", "lookup", "lookup_shape", "lookup_value",
           "register_cost", "register_shape", "supported_ops"]
