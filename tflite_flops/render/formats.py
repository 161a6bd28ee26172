"""The one table of output formats: a format's name (``--format``) and the file extensions that
select it (``-o FILE``), for every command.

Each command lists the renderers it has by format name (:func:`renderer_table`); the extensions
always come from :data:`FORMATS`, so ``-o report.md`` means Markdown in ``analyze``, ``compare``,
``batch`` and ``sweep`` alike. Adding a format is one entry here plus its renderers.
"""

from __future__ import annotations

from typing import Callable, Mapping, TypeVar

from ..errors import OutputFormatError

# format name -> file extensions (the first one is the usual one)
FORMATS: dict[str, tuple[str, ...]] = {
    "table": (".txt",),
    "json": (".json",),
    "csv": (".csv",),
    "md": (".md", ".markdown"),
    "html": (".html", ".htm"),
    "model-explorer": (".me.json",),
}

R = TypeVar("R", bound=Callable[..., str])


def renderer_table(renderers: Mapping[str, R]) -> dict[str, tuple[R, tuple[str, ...]]]:
    """``{format: (renderer, extensions)}`` for a command's ``{format: renderer}``; raises KeyError
    for a format that is not in :data:`FORMATS`."""
    return {name: (fn, FORMATS[name]) for name, fn in renderers.items()}


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
