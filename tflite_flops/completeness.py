"""Whether a report's totals are complete, said in one sentence that every renderer shows.

Totals are partial when some per-inference ops have shapes that propagation could not resolve
(they are costed at their stored or placeholder shapes, so their numbers are not those of the
requested input), when some ops have no cost formula (they count as nothing), or when an
accelerator-compiled op hides the work of the graph inside it.
"""

from __future__ import annotations

from typing import Any


def formula_errors(report: Any) -> int:
    """Per-inference ops whose cost formula raised (status ``error``): counted as nothing."""
    return sum(1 for o in report.ops if o.status == "error" and o.phase == "inference")


def partial_note(report: Any) -> str | None:
    """``"partial totals: ..."`` when ``report.totals`` is not complete, else None."""
    t = report.totals
    if getattr(t, "complete", True):
        return None
    unresolved = int(getattr(t, "unresolved_ops", 0) or 0)
    uncounted = int(sum(report.unsupported.values()))
    opaque = int(getattr(t, "opaque_ops", 0) or 0)
    errors = formula_errors(report)
    parts = []
    if unresolved:
        parts.append(f"{unresolved} op(s) with unresolved shapes, costed at stored or placeholder shapes")
    if uncounted:
        parts.append(f"{uncounted} op(s) not counted")
    if opaque:
        parts.append(f"{opaque} accelerator-compiled op(s) whose inner ops are not visible")
    if errors:
        parts.append(f"{errors} op(s) whose cost formula raised")
    return "partial totals: " + " and ".join(parts or ["some ops are not costed"]) + "; the real totals differ"


def latency_flag(latency: Any) -> str | None:
    """The warning to print next to a latency figure taken on a graph with inconsistent shapes."""
    if latency is None or latency.shapes_consistent is not False:
        return None
    return str(latency.shape_warning or "timed a graph whose shapes are inconsistent")


def strict_problems(report: Any) -> list[str]:
    """What ``--strict`` refuses in a finished report: uncounted ops (no formula, a formula that
    raised, accelerator-compiled), partial totals, skipped latency."""
    problems = []
    if report.unsupported:
        listing = ", ".join(f"{k} ×{v}" for k, v in sorted(report.unsupported.items()))
        problems.append(f"{sum(report.unsupported.values())} op(s) have no cost formula: {listing}")
    unresolved = int(getattr(report.totals, "unresolved_ops", 0) or 0)
    if unresolved:
        problems.append(f"the totals are partial: {unresolved} op(s) have unresolved shapes")
    opaque = int(getattr(report.totals, "opaque_ops", 0) or 0)
    if opaque:
        problems.append(f"{opaque} op(s) compiled for an accelerator hide their work")
    errors = formula_errors(report)
    if errors:
        problems.append(f"{errors} op(s) not counted because their cost formula raised")
    skipped = report.latency.skipped if report.latency is not None else None
    if skipped:
        problems.append(f"latency skipped: {skipped}")
    return problems
