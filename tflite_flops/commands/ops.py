"""``ops``: every op type with its formula and status."""

from __future__ import annotations

import argparse

from .common import add_output_options, emit

HELP = "list every op type with its formula and status"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``ops``."""
    from ..render.catalog import CATALOG_RENDERERS

    add_output_options(p, CATALOG_RENDERERS, "also write the catalog")


def run(args: argparse.Namespace) -> int:
    """Print the op catalog (and write it to the ``-o`` files)."""
    from ..ops.catalog import catalog
    from ..render.catalog import catalog_format_for_path, render_catalog

    targets = [(path, catalog_format_for_path(path)) for path in args.output]
    rows = catalog()
    emit(lambda fmt: render_catalog(rows, fmt), args.format, targets)
    return 0
