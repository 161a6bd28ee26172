"""Renderers: one function per format (report in, ``str`` out) and the table that picks them.

The format of ``-o FILE`` is chosen from the file's extension through the same table as
``--format``. Files are written atomically (temporary file + rename): a failure leaves no
half-written report.
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable

from ..errors import OutputFormatError
from ..report import Report
from .csv import render_csv
from .formats import FORMATS, format_from_extension, renderer_table  # noqa: F401 (re-exported)
from .html import render_html
from .json import render_json
from .markdown import render_markdown
from .model_explorer import render_model_explorer
from .table import render_table

Renderer = Callable[[Report], str]

# format name -> (renderer, file extensions from FORMATS)
RENDERERS: dict[str, tuple[Renderer, tuple[str, ...]]] = renderer_table({
    "table": render_table,
    "json": render_json,
    "csv": render_csv,
    "md": render_markdown,
    "html": render_html,
    "model-explorer": render_model_explorer,
})


def formats() -> list[str]:
    """Names accepted by ``--format``."""
    return list(RENDERERS)


def format_for_path(path: str) -> str:
    """The report format a file extension selects; raises OutputFormatError for an unknown one."""
    return format_from_extension(path, RENDERERS)


def render(report: Report, fmt: str) -> str:
    """Render a report in format ``fmt``."""
    try:
        renderer = RENDERERS[fmt][0]
    except KeyError:
        raise OutputFormatError(f"unknown format {fmt!r} (known: {', '.join(RENDERERS)})") from None
    return renderer(report)


def write(report: Report, path: str, fmt: str | None = None) -> str:
    """Render ``report`` in ``fmt`` (default: the format ``path``'s extension selects, as ``-o``),
    write it to ``path`` atomically and return the text.

    Raises:
        OutputFormatError: an unknown extension or format, or a file that cannot be written.
    """
    text = render(report, fmt or format_for_path(path))
    write_atomic(path, text)
    return text


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tflite_flops-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputFormatError(f"{path}: cannot write ({exc.strerror or exc})") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report gets the usual permissions
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OutputFormatError(f"{path}: cannot write ({exc.strerror or exc})") from exc
        raise
