"""Budget gate for deployment pipelines: limits on MACs, FLOPs, params and latency.

Library::

    from tflite_flops.report.budget import check_budget
    violations = check_budget(report, max_macs=200_000_000, max_latency_ms=15)
    # ['macs 300.8 M > 200 M']

CLI (wired into ``analyze``): ``--max-macs 200M``, ``--max-flops 1.2G``, ``--max-params 3.5M``,
``--max-latency-ms 15``, ``--max-arena 2MiB`` and ``--budget FILE.toml``. Counts accept K/M/G/T suffixes (decimal).
The command exits with code 3 and prints one ``budget exceeded: ...`` line per violated limit
on stderr. A budget file holds the same keys, at the top level or in a ``[budget]`` table::

    [budget]
    max_macs = "300M"
    max_flops = 6.5e8
    max_params = "3.6M"
    max_latency_ms = 25.0
    max_arena = "2MiB"

Options given on the command line override the file. A latency limit on a report without a
latency measurement is a violation (an unmeasured latency cannot be shown to be in budget).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Mapping

from ..errors import InputSpecError
from .records import Report
from ..units import human, human_bytes, parse_bytes, parse_count

EXIT_BUDGET = 3

# budget key -> (what is measured, is a count)
LIMITS: dict[str, tuple[str, bool]] = {
    "max_macs": ("macs", True),
    "max_flops": ("flops", True),
    "max_params": ("params", True),
    "max_latency_ms": ("latency_ms", False),
    "max_arena": ("arena_bytes", True),  # TFLite's arena (report.memory.runtime, else .arena_bytes), in bytes
}


def _limit_value(key: str, value: Any) -> int | float:
    """A limit from a file or the library: an int, a float, or a string with a K/M/G/T suffix."""
    is_count = LIMITS[key][1]
    if isinstance(value, bool):
        raise InputSpecError(f"budget {key}: expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise InputSpecError(f"budget {key}: expected a non-negative number, got {value!r}")
        return int(value) if is_count else float(value)
    if isinstance(value, str):
        if key == "max_arena":
            return parse_bytes(value)
        if is_count:
            return parse_count(value)
        try:
            v = float(value.strip().removesuffix("ms").strip())
        except ValueError:
            raise InputSpecError(f"budget {key}: cannot read {value!r} as milliseconds") from None
        if not math.isfinite(v) or v < 0:
            raise InputSpecError(f"budget {key}: expected a non-negative number, got {value!r}")
        return v
    raise InputSpecError(f"budget {key}: expected a number, got {value!r}")


def check_budget(report: Report, *, max_macs: int | str | None = None, max_flops: int | str | None = None,
                 max_params: int | str | None = None, max_latency_ms: float | str | None = None,
                 max_arena: int | str | None = None) -> list[str]:
    """The violated limits of ``report``, one message each (empty when within budget).

    Args:
        report: a :class:`~tflite_flops.report.Report`.
        max_macs, max_flops, max_params: count limits (ints, or strings such as ``"300M"``).
        max_latency_ms: limit on the median latency; needs a latency measurement in the report.
        max_arena: limit on TFLite's arena as LiteRT allocates it, kernel temporaries included
            (``report.memory.runtime.arena_bytes``; the tensors-only ``report.memory.arena_bytes`` for a
            report without it): an int, or a string such as ``"2MiB"`` or ``"512K"``.

    Returns:
        Messages such as ``"macs 300.8 M > 200 M"``.

    Raises:
        InputSpecError: a limit that is not a non-negative number.
    """
    given = {"max_macs": max_macs, "max_flops": max_flops, "max_params": max_params,
             "max_latency_ms": max_latency_ms, "max_arena": max_arena}
    out = []
    for key, raw in given.items():
        if raw is None:
            continue
        limit = _limit_value(key, raw)
        what = LIMITS[key][0]
        if what == "latency_ms":
            median = report.latency.median_ms if report.latency is not None else None
            if median is None:
                out.append(f"latency_ms not measured (limit {limit:g} ms; run with --latency)")
            elif median > limit:
                out.append(f"latency_ms {median:.3f} > {limit:g}")
            continue
        if what == "arena_bytes":
            memory = report.memory
            if memory is None:
                out.append(f"arena not analysed (limit {human_bytes(int(limit))})")
                continue
            # the arena as LiteRT allocates it (kernel temporaries included) when the report has it
            arena, which = ((memory.runtime.arena_bytes, f" (LiteRT, {memory.runtime.threads} thread(s), XNNPACK off)")
                            if memory.runtime is not None else (memory.arena_bytes, " (tensors only)"))
            if arena > limit:
                out.append(f"arena{which} {human_bytes(arena)} > {human_bytes(int(limit))} "
                           f"({arena:,} > {int(limit):,} bytes)")
            continue
        value = getattr(report.totals, what)
        if value > limit:
            out.append(f"{what} {human(value)} > {human(limit)}")
    return out


# ---- budget files ------------------------------------------------------------------------------


def load_budget_file(path: str) -> dict[str, int | float]:
    """Read the limits of a TOML budget file (keys at top level or under ``[budget]``).

    Raises:
        InputSpecError: unreadable file, invalid TOML, or an unknown key.
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise InputSpecError(f"--budget {path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputSpecError(f"--budget {path}: not UTF-8 text") from None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the same module, published as tomli before it joined the standard library
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputSpecError(f"--budget {path}: invalid TOML ({exc})") from None
    table = data.get("budget", data) if isinstance(data.get("budget"), Mapping) else data
    limits: dict[str, int | float] = {}
    for key, value in table.items():
        name = key if key.startswith("max_") else f"max_{key}"
        if name not in LIMITS:
            raise InputSpecError(f"--budget {path}: unknown key {key!r} (known: {', '.join(LIMITS)})")
        limits[name] = _limit_value(name, value)
    return limits


# ---- CLI ---------------------------------------------------------------------------------------


def _count_arg(text: str) -> int:
    try:
        return parse_count(text)
    except InputSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _bytes_arg(text: str) -> int:
    try:
        return parse_bytes(text)
    except InputSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _ms_arg(text: str) -> float:
    try:
        return float(_limit_value("max_latency_ms", text))
    except InputSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """--max-macs, --max-flops, --max-params, --max-latency-ms and --budget FILE.toml."""
    g = parser.add_argument_group("budget (exit code 3 when exceeded)")
    g.add_argument("--max-macs", type=_count_arg, metavar="N", help="limit on MACs per inference (e.g. 300M)")
    g.add_argument("--max-flops", type=_count_arg, metavar="N", help="limit on FLOPs per inference (e.g. 1.2G)")
    g.add_argument("--max-params", type=_count_arg, metavar="N", help="limit on parameters (e.g. 3.5M)")
    g.add_argument("--max-latency-ms", type=_ms_arg, metavar="MS", help="limit on the median latency (needs --latency)")
    g.add_argument("--max-arena", type=_bytes_arg, metavar="BYTES",
                   help="limit on LiteRT's arena, kernel temporaries included, at --threads (e.g. 512K, 2MiB)")
    g.add_argument("--budget", metavar="FILE.toml", help="read limits from a TOML file (options above override it)")


def budget_limits(args: argparse.Namespace) -> dict[str, int | float]:
    """The limits in force: the ``--budget`` file, overridden by the ``--max-*`` options."""
    limits: dict[str, int | float] = {}
    if getattr(args, "budget", None):
        limits.update(load_budget_file(args.budget))
    for key in LIMITS:
        value = getattr(args, key, None)
        if value is not None:
            limits[key] = value
    return limits


def budget_exit_code(report: Report, args: argparse.Namespace) -> int:
    """Check the budget options; print one ``budget exceeded:`` line per violation on stderr.

    Returns:
        3 when a limit is exceeded, else 0.
    """
    violations = check_budget(report, **budget_limits(args))
    for v in violations:
        print(f"budget exceeded: {v}", file=sys.stderr)
    return EXIT_BUDGET if violations else 0
