"""The lines every renderer shows about ops the totals leave out: no cost formula, or compiled for an accelerator."""

from __future__ import annotations

from typing import Callable

from ..report import Report


def not_counted_line(report: Report, quote: Callable[[str], str] = str) -> str | None:
    """"N op(s) of T type(s): TYPE ×n, ..." for the ops with no cost formula, else None; ``quote``
    escapes each op type for the format (Markdown)."""
    if not report.unsupported:
        return None
    n = sum(report.unsupported.values())
    listing = ", ".join(f"{quote(k)} ×{v}" for k, v in sorted(report.unsupported.items()))
    return f"{n} op(s) of {len(report.unsupported)} type(s): {listing}"


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
