"""The output formats: one module per format in this package, found at import.

A format module writes one renderer of a :class:`~tflite_flops.report.Report` (report in, ``str``
out) and registers it with :func:`register_format`: the format's name (what ``--format``
accepts), the file extensions that select it for ``-o FILE`` and its place among the choices.
:data:`FORMATS` (name -> extensions) is then the one table every command takes its extensions
from: the other commands (``compare``, ``batch``, ``sweep``, ``ops``) list the renderers they
have by format name in a :class:`RendererTable`, so ``-o report.md`` means Markdown everywhere.
Adding a format is one module here (see docs/contributing.md).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable, Generic, Mapping, TypeVar

from ...errors import OutputFormatError

T = TypeVar("T")
R = TypeVar("R", bound=Callable[..., str])

# format name -> file extensions (the first one is the usual one), in --format order once found
FORMATS: dict[str, tuple[str, ...]] = {}
# format name -> the renderer of a Report in that format
REPORT_RENDERERS: dict[str, Callable[..., str]] = {}
_ORDER: dict[str, int] = {}


def register_format(name: str, extensions: tuple[str, ...], order: int) -> Callable[[R], R]:
    """Decorator: ``fn(report) -> str`` renders a Report in format ``name``.

    Args:
        name: the ``--format`` value.
        extensions: lower-case file extensions that select it for ``-o`` (the longest match wins,
            so ``.me.json`` selects ``model-explorer`` before ``.json`` selects ``json``).
        order: its place among the ``--format`` choices (lowest first).
    """
    if name in FORMATS:
        raise ValueError(f"output format {name!r} registered twice")
    taken = {ext: other for other, exts in FORMATS.items() for ext in exts}
    for ext in extensions:
        if ext != ext.lower() or not ext.startswith(".") or ext in taken:
            raise ValueError(f"output format {name!r}: extension {ext!r} is not lower-case, dotted and unique")

    def register(fn: R) -> R:
        FORMATS[name] = tuple(extensions)
        REPORT_RENDERERS[name] = fn
        _ORDER[name] = order
        return fn

    return register


def format_from_extension(path: str, table: Mapping[str, tuple[object, tuple[str, ...]]], what: str = "") -> str:
    """The format of ``table`` (name -> (renderer, extensions)) that a file's extension selects.

    The longest matching extension wins (``.me.json`` before ``.json``). Raises OutputFormatError
    for an unknown one; ``what`` names the command in that message.
    """
    lower = path.lower()
    matches = [(len(ext), name) for name, (_, exts) in table.items() for ext in exts if lower.endswith(ext)]
    if matches:
        return max(matches)[1]
    known = ", ".join(e for _, exts in table.values() for e in exts)
    raise OutputFormatError(f"{path}: unknown output extension{' for ' + what if what else ''} (known: {known})")


class RendererTable(dict, Generic[T]):  # type: ignore[type-arg]
    """A command's renderers: ``{format: (renderer, extensions)}``, the extensions from :data:`FORMATS`.

    The same table drives ``--format`` (its keys) and ``-o FILE`` (:meth:`for_path`).
    """

    def __init__(self, what: str, renderers: Mapping[str, Callable[[T], str]]):
        super().__init__((name, (fn, FORMATS[name])) for name, fn in renderers.items())
        self.what = what

    def for_path(self, path: str) -> str:
        """The format an output file's extension selects; raises OutputFormatError for an unknown one."""
        return format_from_extension(path, self, self.what)

    def render(self, data: T, fmt: str, **options: Any) -> str:
        """Render ``data`` in ``fmt``; raises OutputFormatError for a format this table lacks."""
        try:
            renderer = self[fmt][0]
        except KeyError:
            raise OutputFormatError(f"unknown format {fmt!r} (known: {', '.join(self)})") from None
        return renderer(data, **options)


def _find_formats() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    for table in (FORMATS, REPORT_RENDERERS):
        ordered = sorted(table.items(), key=lambda item: _ORDER[item[0]])
        table.clear()
        table.update(ordered)


_find_formats()
