"""Renderers: every output of every command, and the table that picks a report's format.

The report's formats are the modules of :mod:`tflite_flops.render.formats` (one per format); the
other commands' renderers are ``render/compare.py``, ``batch.py``, ``sweep.py`` and ``catalog.py``.

The format of ``-o FILE`` is chosen from the file's extension through the same table as
``--format``. Files are written atomically (temporary file + rename): a failure leaves no
half-written report.
"""

from __future__ import annotations

import os
import tempfile

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
        # backslashreplace: a model path that is not UTF-8 (surrogate-escaped by Python) is written as \udcff
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
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
