"""Renderers: every output of every command, and the table that picks a report's format.

The report's formats are the modules of :mod:`tflite_flops.render.formats` (one per format); the
other commands' renderers are ``render/compare.py``, ``batch.py``, ``sweep.py`` and ``catalog.py``.

The format of ``-o FILE`` is chosen from the file's extension through the same table as
``--format``. Files are written atomically (temporary file + rename): a failure leaves no
half-written report.
"""

from __future__ import annotations

from .. import files
from ..errors import OutputFormatError
from ..report import Report
from .formats import FORMATS, REPORT_RENDERERS, RendererTable, register_format  # noqa: F401 (re-exported)

# format name -> (renderer, file extensions): every format module in render/formats/
RENDERERS: RendererTable[Report] = RendererTable("", REPORT_RENDERERS)


def format_names() -> list[str]:
    """Names accepted by ``--format``."""
    return list(RENDERERS)


def format_for_path(path: str) -> str:
    """The report format a file extension selects; raises OutputFormatError for an unknown one."""
    return RENDERERS.for_path(path)


def render(report: Report, fmt: str) -> str:
    """Render a report in format ``fmt``."""
    return RENDERERS.render(report, fmt)


def write(report: Report, path: str, fmt: str | None = None, overwrite: bool | None = None) -> str:
    """Render ``report`` in ``fmt`` (default: the format ``path``'s extension selects, as ``-o``),
    write it to ``path`` atomically and return the text. ``overwrite``: replace a read-only file or a
    symbolic link (the link itself) too (default: the CLI's ``--overwrite``, else no); a device, a FIFO or
    a folder is never replaced.

    Raises:
        OutputFormatError: an unknown extension or format, or a file that cannot be written or replaced.
    """
    try:
        files.check_output(path, overwrite)  # refused before the rendering's work (and again at the write)
    except OSError as exc:
        raise OutputFormatError(f"{path}: cannot write ({exc.strerror or exc})") from None
    text = render(report, fmt or format_for_path(path))
    write_atomic(path, text, overwrite)
    return text


def write_atomic(path: str, text: str, overwrite: bool | None = None) -> None:
    """Write ``text`` to ``path`` whole or not at all, onto a new name or a regular file only
    (:func:`tflite_flops.files.write_atomic`).

    Raises:
        OutputFormatError: the file cannot be written, or is not replaced (a device, a FIFO, a folder; a
            read-only file or a symbolic link without ``overwrite``).
    """
    try:
        files.write_atomic(path, text, overwrite)
    except OSError as exc:
        raise OutputFormatError(f"{path}: cannot write ({exc.strerror or exc})") from exc
