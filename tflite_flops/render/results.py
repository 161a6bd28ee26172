"""What ``calibrate --from-results`` prints: the profile written, its factors by op class, and each model's
leave-one-model-out prediction beside the one-scale fit's (:class:`tflite_flops.latency.results.Fit`)."""

from __future__ import annotations

import statistics
from typing import Any

from ..units import printable
from .text import text_table


def _signed(pred: float | None, measured: float) -> str:
    return "-" if pred is None else f"{(pred / measured - 1) * 100:+.1f}%"


def _median_signed(pairs: list[tuple[float | None, float]]) -> str:
    errors = [p / m - 1 for p, m in pairs if p is not None]
    return f"{statistics.median(errors) * 100:+.1f}%" if errors else "-"


def _nodes(f: Any) -> str:
    r = f.result
    if r is None or r.nodes_total is None:
        return f"{f.ops}"
    mark = "" if r.nodes_total == f.ops else "  (differs)"
    return f"{f.ops} / {r.nodes_total}{mark}"


def fit_lines(output: str, fit: Any) -> list[str]:
    """The lines printed for ``fit`` (written to ``output``)."""
    from ..latency.results import thin_classes, within

    p, fitted = fit.profile, fit.fitted
    m = p.machine
    n = len(fitted)
    by_class = [(f.loo_ms, f.measured_ms) for f in fitted]
    by_scale = [(f.loo_scale_ms, f.measured_ms) for f in fitted]
    lines = [f"device profile {output}: {printable(m.cpu)} ({m.target or 'no CPU target'}), fitted from {n} "
             f"whole-model times on a base profile's laws",
             "  factors by op class (device time / base time): "
             + ", ".join(f"{c} ×{v:.3g}" for c, v in fit.factors.items())
             + f"; one scale ×{fit.scale:.3g}",
             f"  leave-one-model-out (each model predicted by a fit on the others): "
             f"{within(*zip(*by_class))} of {n} within ±10%, median signed {_median_signed(by_class)}; "
             f"one scale: {within(*zip(*by_scale))} of {n}, {_median_signed(by_scale)}",
             ]
    thin = thin_classes(fitted)
    if thin:
        lines.append(f"  ! factors that rest on one model (leaving it out cannot check them): {', '.join(thin)}")
    lines.append("")
    rows = [[f.file, f"{f.measured_ms:,.3g}", f"{f.loo_ms:,.3g}", _signed(f.loo_ms, f.measured_ms),
             _signed(f.loo_scale_ms, f.measured_ms), _nodes(f)] for f in fitted]
    lines += ["  " + line for line in text_table(
        ["model", "measured ms", "predicted ms", "error", "one scale", "ops / device nodes"], rows,
        [False, True, True, True, True, True])]
    return lines
