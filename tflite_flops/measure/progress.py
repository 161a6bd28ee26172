"""A one-line progress bar on a terminal, drawn by the timing harness, per-op timing and the batch runner."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable


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
