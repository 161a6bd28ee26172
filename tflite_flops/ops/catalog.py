"""The op catalog: every BuiltinOperator code (and registered custom op) with its entry.

Used by ``python -m tflite_flops ops`` (rendered by :mod:`tflite_flops.render.catalog`), the
coverage test and docs/conventions.md.
"""

from __future__ import annotations

from ..reader import schema
from .registry import supported_ops


# What each bytes model of the registry counts (a formula may override it, e.g. gathers).
BYTES_MODELS = {"io": "R = Σ inputs, W = Σ outputs", "alias": "0 (shares its input buffer)",
                "metadata": "R = 0 (metadata), W = outputs"}


def catalog() -> list[dict[str, str]]:
    """One row per builtin op code, then per registered custom op: code, op, status, formula, bytes, reference, note."""
    specs = supported_ops()
    rows = []
    for code in sorted(schema.BUILTIN_OPS):
        name = schema.BUILTIN_OPS[code]
        spec = specs.get(name)
        rows.append({"code": str(code), "op": name, "status": spec.status if spec else "MISSING",
                     "formula": spec.formula if spec else "", "reference": spec.reference if spec else "",
                     "note": spec.note if spec else "", "bytes": _bytes(spec)})
    for name in sorted(k for k in specs if k.startswith("CUSTOM:")):
        spec = specs[name]
        rows.append({"code": "32", "op": name, "status": spec.status, "formula": spec.formula,
                     "reference": spec.reference, "note": spec.note, "bytes": _bytes(spec)})
    return rows


def _bytes(spec) -> str:
    if spec is None or spec.status == "not_costed":
        return ""
    return BYTES_MODELS.get(spec.bytes_model, spec.bytes_model)
