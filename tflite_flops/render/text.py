"""Plain-text building blocks of every terminal output: one aligned table, one clip.

The report, compare, batch, sweep and ops-catalog tables are all drawn by :func:`text_table`
(the progress bar of the timing harness and the batch runner is :mod:`tflite_flops.measure.progress`).
"""

from __future__ import annotations

from typing import Sequence

from ..units import printable


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool], *,
               rule: bool = True, rstrip: bool = True) -> list[str]:
    """The lines of a table: columns two spaces apart, each as wide as its widest cell.

    Args:
        headers: one title per column.
        rows: the cells; cells beyond ``len(headers)`` are appended unpadded (notes at the end of a row).
        right: per column, True to right-align (numbers), False to left-align.
        rule: a ``---`` line under the headers.
        rstrip: strip the trailing spaces of every line.

    Returns:
        The lines, without newlines.
    """
    rows = [[printable(c) for c in r] for r in rows]  # a name's newline or escape sequence stays in its cell
    n = len(headers)
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells[:n], widths, right)]
        text = "  ".join(padded + list(cells[n:]))
        return text.rstrip() if rstrip else text

    return [line(headers)] + ([line(["-" * w for w in widths])] if rule else []) + [line(r) for r in rows]


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, keeping its end (``…`` marks the cut)."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def steadiness(latency: object) -> str | None:
    """How steady a measured latency was, beside its median: its spread (p90 over the median) and the process's
    CPU share per thread ("spread +4% (p90 over the median) · CPU share 99% per thread"); None when neither was
    measured (a device's log, an earlier version's report)."""
    spread, share = getattr(latency, "spread", None), getattr(latency, "cpu_share", None)
    parts = ([f"spread +{100 * spread:.0f}% (p90 over the median)"] if spread is not None else []) + \
        ([f"CPU share {100 * share:.0f}% per thread"] if share is not None else [])
    return " · ".join(parts) or None
