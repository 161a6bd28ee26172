"""``roofline MODEL``: peak compute and bandwidth of this machine, and where every op sits."""

from __future__ import annotations

import argparse

from . import analyze as analyze_cmd

HELP = "measure peak FLOP/s and memory bandwidth here and classify every op (times ops with --per-op)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``analyze``; --roofline is implied."""
    analyze_cmd.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    """``analyze --roofline``."""
    args.roofline = True
    return analyze_cmd.run(args)
