"""Options shared by several subcommands."""

from __future__ import annotations

import argparse
import sys


def add_shape_options(p: argparse.ArgumentParser) -> None:
    """--input-shape, --batch, --while-trips, --signature."""
    p.add_argument("--input-shape", action="append", metavar="SPEC", default=None,
                   help="input shape: NAME=1x224x224x3, INDEX=1x224x224x3, or a bare 1x224x224x3 for a "
                        "single-input model (repeatable)")
    p.add_argument("--batch", type=int, metavar="N",
                   help="set the leading dim of every input whose batch dim is dynamic or 1")
    p.add_argument("--while-trips", type=int, default=1, metavar="N",
                   help="trip count of WHILE loops whose bound cannot be inferred (default 1)")
    p.add_argument("--signature", metavar="KEY", help="analyze this signature's subgraph instead of subgraph 0")


def print_warnings(warnings) -> None:
    """Warnings go to stderr so that stdout stays clean JSON/CSV."""
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
