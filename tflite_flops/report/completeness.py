"""Whether a report's totals are complete, said in one sentence that every renderer shows, and
the one definition of what ``--strict`` refuses (:func:`strict_findings`), used by the library
(``analyze(..., strict=True)``) and by the CLI alike.

Totals are partial when some per-inference ops have shapes that propagation could not resolve
(they are costed at their stored or placeholder shapes, so their numbers are not those of the
requested input), when some ops have no cost formula (they count as nothing), or when an
accelerator-compiled op hides the work of the graph inside it.
"""

from __future__ import annotations

from typing import Any

from ..errors import ModelFormatError, RuntimeUnavailableError, ShapeError, TfliteFlopsError, UnsupportedOpError


def formula_errors(report: Any, phases: tuple[str, ...] = ("inference",)) -> int:
    """Ops of ``phases`` whose cost formula raised (status ``error``): counted as nothing. The
    per-inference ones make the totals partial; ``--strict`` also refuses the init-phase ones."""
    return sum(1 for o in report.ops if o.status == "error" and o.phase in phases)


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
    """The warning to print next to a latency figure: taken on a graph with inconsistent shapes, or noisy."""
    if latency is None:
        return None
    flags = []
    if latency.shapes_consistent is False:
        flags.append(str(latency.shape_warning or "timed a graph whose shapes are inconsistent"))
    if getattr(latency, "noisy", None):
        flags.append(f"NOISY measurement: {latency.noisy}; do not gate on it, measure again on a quiet machine")
    return "; ".join(flags) or None


def _count_problems(unsupported: Any, totals: Any) -> list[tuple[type[TfliteFlopsError], str]]:
    """Ops not counted (no formula, accelerator-compiled) and partial totals, from a summary's counts."""
    found: list[tuple[type[TfliteFlopsError], str]] = []
    if unsupported:
        listing = ", ".join(f"{k} ×{v}" for k, v in sorted(unsupported.items()))
        found.append((UnsupportedOpError, f"{sum(unsupported.values())} op(s) have no cost formula: {listing}"))
    unresolved = int(getattr(totals, "unresolved_ops", 0) or 0)
    if unresolved:
        found.append((ShapeError, f"the totals are partial: {unresolved} op(s) have unresolved shapes"))
    opaque = int(getattr(totals, "opaque_ops", 0) or 0)
    if opaque:
        found.append((UnsupportedOpError, f"{opaque} op(s) compiled for an accelerator hide their work"))
    return found


def _section_problems(bundle: Any) -> list[tuple[type[TfliteFlopsError], str]]:
    """The model sections of a bundle (``--all-sections``) that could not be analysed (one finding naming them
    all, with the first one's reason), and those whose totals show problems of their own."""
    if bundle is None:
        return []
    found: list[tuple[type[TfliteFlopsError], str]] = []
    broken = [s for s in bundle.sections if s.error is not None]
    if broken:
        names = ", ".join(f"#{s.index}" + (f" ({s.model_type})" if s.model_type else "") for s in broken)
        found.append((ModelFormatError, f"{len(broken)} model section(s) could not be analysed: {names} "
                                        f"(#{broken[0].index}: {broken[0].error})"))
    for s in bundle.sections:
        if s.totals is not None and not s.analysed:  # (the analysed section's totals are the report's own)
            problems = _count_problems({}, s.totals)
            if not problems and not s.totals.complete:
                problems = [(UnsupportedOpError, "the totals are partial: some ops are not counted")]
            found += [(cls, f"section #{s.index}: {why}") for cls, why in problems]
    return found


def strict_findings(report: Any) -> list[tuple[type[TfliteFlopsError], str]]:
    """What ``--strict`` (and ``analyze(..., strict=True)``) refuses in a finished report, in this order:

    * ops with no cost formula (status ``unsupported``, any phase);
    * partial totals: per-inference ops whose shapes could not be resolved;
    * accelerator-compiled ops that hide their work (status ``opaque``);
    * ops whose cost formula raised (status ``error``, inference or init phase);
    * the same for every other signature analyzed (``all_signatures``), named by its key;
    * the model sections of a bundle that ``all_sections`` could not analyse, or whose totals are partial;
    * a latency measurement that was skipped;
    * a partial prediction (``--predict``): ops the profile has no law for.

    Returns:
        (error class, one-line reason) per problem; the error class is what the library raises
        when the problem comes first (:func:`check_strict`).
    """
    found = _count_problems(report.unsupported, report.totals)
    errors = formula_errors(report, ("inference", "init"))
    if errors:
        found.append((UnsupportedOpError, f"{errors} op(s) not counted because their cost formula raised"))
    entry = (report.settings or {}).get("entry_subgraph", 0)
    for key, sig in (report.signatures or {}).items():
        if sig.subgraph == entry:
            continue  # the report's own entry: checked above
        problems = _count_problems(sig.unsupported, sig.totals)
        if not problems and not getattr(sig.totals, "complete", True):
            problems = [(UnsupportedOpError, "the totals are partial: a cost formula raised")]
        found += [(cls, f"signature {key!r}: {why}") for cls, why in problems]
    found += _section_problems(getattr(report, "bundle", None))
    skipped = report.latency.skipped if report.latency is not None else None
    if skipped:
        found.append((RuntimeUnavailableError, f"latency skipped: {skipped}"))
    prediction = getattr(report, "prediction", None)
    if prediction is not None and not prediction.complete:
        missing = ", ".join(f"{k} ×{v}" for k, v in prediction.ops_not_predicted.items())
        found.append((UnsupportedOpError, f"the prediction is partial: {missing} not predicted"))
    return found


def strict_problems(report: Any) -> list[str]:
    """The reasons of :func:`strict_findings`, one line each (empty: ``--strict`` accepts the report)."""
    return [why for _, why in strict_findings(report)]


def check_strict(report: Any) -> None:
    """Raise when ``--strict`` refuses ``report``: the error class of the first problem, every reason in the message.

    The CLI calls this after printing the report (so the report is never lost) and prints the
    message; ``analyze(..., strict=True)`` calls it on the report it would return.

    Raises:
        UnsupportedOpError: ops not counted (no formula, accelerator-compiled, a formula that raised).
        ShapeError: the totals are partial (unresolved shapes).
        RuntimeUnavailableError: latency was skipped.
    """
    found = strict_findings(report)
    if found:
        raise found[0][0]("--strict: " + "; ".join(why for _, why in found))
