"""The one line every renderer shows when a model holds accelerator-compiled (opaque) ops."""

from __future__ import annotations

from ..report import Report


def opaque_line(report: Report) -> str | None:
    """"N op(s) compiled for an accelerator (...): ..." for the per-inference opaque ops, else None.

    The details of each op (payload size, constant inputs) are in its record's note and in the
    report's warnings.
    """
    n = report.totals.opaque_ops
    if not n:
        return None
    types: dict[str, int] = {}
    for o in report.ops:
        if o.status == "opaque" and o.phase == "inference":
            types[o.op_type] = types.get(o.op_type, 0) + 1
    listing = ", ".join(f"{k} ×{v}" for k, v in sorted(types.items()))
    return (f"{n} op(s) compiled for an accelerator ({listing}); the ops inside are not visible and their work "
            "is NOT in the totals (they are not 0, they are unknown)")
