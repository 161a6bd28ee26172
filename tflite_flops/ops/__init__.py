"""Per-op cost formulas, output shapes and constant folding, by family.

Importing this package registers every family; :func:`supported_ops` is derived from them.
"""

from . import (accelerator, control_flow, conv, custom, elementwise, layout, matmul, misc, pool, recurrent,  # noqa: F401
               reduce, stablehlo)  # (registration)
from .registry import (Cost, OpContext, OpSpec, TensorInfo, lookup, lookup_shape, lookup_value, register_cost,
                       register_shape, supported_ops)

__all__ = ["Cost", "OpContext", "OpSpec", "TensorInfo", "lookup", "lookup_shape", "lookup_value",
           "register_cost", "register_shape", "supported_ops"]
