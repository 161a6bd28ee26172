"""Plain-text building blocks of every terminal output: one aligned table, one clip, one progress bar.

The report, compare, batch, sweep and ops-catalog tables are all drawn by :func:`text_table`;
the timing harness and the batch runner both draw :func:`progress_bar`.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Sequence


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


def progress_bar(label: str = "", stream: Any = None, width: int = 30) -> Callable[..., None] | None:
    """A one-line progress bar on ``stream`` (stderr) when it is a terminal; None otherwise.

    The returned ``show(done, total, item="")`` redraws the line at most about 50 times per run
    (and always at the end, when it clears the line). ``item`` (a path) is shown after the count.
    """
    stream = stream or sys.stderr
    if not stream.isatty():
        return None
    prefix = f"{label} " if label else ""

    def show(done: int, total: int, item: str = "") -> None:
        if done % max(total // 50, 1) and done < total:
            return
        filled = min(width, width * done // max(total, 1))
        name = f" {os.path.basename(item)[-30:]:<30}" if item else ""
        stream.write(f"\r{prefix}[{'#' * filled}{'.' * (width - filled)}] {done}/{total}{name}")
        if done >= total:
            stream.write("\r" + " " * (len(prefix) + width + 52) + "\r")
        stream.flush()

    return show
