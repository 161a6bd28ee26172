"""``ops``: every op type with its formula and status."""

from __future__ import annotations

import argparse
import sys

HELP = "list every op type with its formula and status"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``ops``."""
    p.add_argument("--format", "-f", choices=["table", "csv", "md"], default="table")


def run(args: argparse.Namespace) -> int:
    """Print the op catalog."""
    from ..ops.catalog import render_catalog

    sys.stdout.write(render_catalog(args.format))
    return 0
