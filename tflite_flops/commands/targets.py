"""``targets``: the CPU targets ``--target`` takes, with their ISA, what was measured and the sources."""

from __future__ import annotations

import argparse

HELP = "list the CPU targets (--target) with their ISA, what was measured and where each constant came from"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``targets``."""
    p.add_argument("--format", "-f", choices=("table", "json"), default="table", help="output format (default table)")


def run(args: argparse.Namespace) -> int:
    """Print the targets, the host's marked."""
    import sys

    from ..render.targets import render_targets
    from ..targets import host, targets

    found, note = host()
    sys.stdout.write(render_targets(list(targets().values()), found.name, note, args.format))
    return 0
