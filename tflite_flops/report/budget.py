"""Budget gate for deployment pipelines: limits on MACs, FLOPs, params and latency.

Library::

    from tflite_flops.report.budget import check_budget
    violations = check_budget(report, max_macs=200_000_000, max_latency_ms=15)
    # ['macs 300.8 M > 200 M']

CLI (wired into ``analyze``): ``--max-macs 200M``, ``--max-flops 1.2G``, ``--max-params 3.5M``,
``--max-latency-ms 15``, ``--max-predicted-ms 15`` (the point estimate of ``--predict``), ``--max-memory 40MiB`` (the
memory of LiteRT's default configuration: XNNPACK on, at ``--threads``: its arena, XNNPACK's own bytes and the
weights mapped from the file, ``memory.runtime_total_bytes``), ``--max-arena 2MiB`` (LiteRT's arena with XNNPACK
off), ``--max-tflm-arena 256KiB`` (TFLite Micro's arena), ``--max-partitions 1`` (XNNPACK's DELEGATE nodes),
``--fail-on-fallback xnnpack|gpu`` (any executed op kept off that delegate) and ``--budget FILE.toml``. Counts accept K/M/G/T suffixes (decimal).
The command exits with code 3 and prints one ``budget exceeded: ...`` line per violated limit
on stderr. A budget file holds the same keys, at the top level or in a ``[budget]`` table::

    [budget]
    max_macs = "300M"
    max_flops = 6.5e8
    max_params = "3.6M"
    max_latency_ms = 25.0
    max_predicted_ms = 25.0
    max_memory = "40MiB"
    max_arena = "2MiB"
    max_tflm_arena = "256KiB"
    max_partitions = 1
    fail_on_fallback = ["xnnpack"]

Options given on the command line override the file. A latency limit (option or file) turns ``--latency``
on; on a report without a latency measurement it is a violation (an unmeasured latency cannot be shown
to be in budget).

``max_predicted_ms`` gates the prediction's point estimate (``prediction.latency_ms``), not its high
end: the range comes from the laws' residual quantiles summed as if every op erred the same way
(docs/predict.md), so its high end is a pessimistic bound, and a gate on it would fail models the
device runs well within budget. The violation line shows the range, so a near miss reads as one. A
report without a prediction, or with a partial one (ops the profile has no law for are left out of
the figure, which then understates the time), is a violation, as an unmeasured latency is.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Mapping

from ..errors import InputSpecError
from ..ops.placement import DELEGATES
from .columns import reason
from .headline import runtime_total
from .records import Report
from ..files import MiB, read_capped
from ..units import human, human_bytes, parse_bytes, parse_count

BUDGET_FILE_CAP = 1 * MiB  # a budget is a few lines of TOML

EXIT_BUDGET = 3

# budget key -> (what is measured, is a count)
LIMITS: dict[str, tuple[str, bool]] = {
    "max_macs": ("macs", True),
    "max_flops": ("flops", True),
    "max_params": ("params", True),
    "max_latency_ms": ("latency_ms", False),
    "max_predicted_ms": ("predicted_ms", False),  # the predicted latency's point estimate (report.prediction)
    "max_memory": ("memory_bytes", True),  # LiteRT's default configuration, XNNPACK on: arena + XNNPACK + weights
    "max_arena": ("arena_bytes", True),  # TFLite's arena, XNNPACK off (report.memory.runtime, else .arena_bytes)
    "max_tflm_arena": ("tflm_arena_bytes", True),  # TFLite Micro's arena: what to give MicroInterpreter
    "max_partitions": ("partitions", True),  # XNNPACK's partitions (report.delegation), DELEGATE nodes
}
BYTE_LIMITS = ("max_memory", "max_arena", "max_tflm_arena")  # limits in bytes (K/M/G and KiB/MiB/GiB suffixes)
FALLBACK = "fail_on_fallback"  # delegates no executed op may be kept off (report.delegation)
DELEGATE_KEYS = DELEGATES


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
        if key in BYTE_LIMITS:
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


def _delegates(value: Any) -> tuple[str, ...]:
    """``fail_on_fallback``: a delegate name or a list of them."""
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise InputSpecError(f"budget {FALLBACK}: expected a delegate name or a list of them, got {value!r}")
    unknown = [n for n in names if n not in DELEGATE_KEYS]
    if unknown:
        raise InputSpecError(f"budget {FALLBACK}: unknown delegate {unknown[0]!r} (known: {', '.join(DELEGATE_KEYS)})")
    return tuple(dict.fromkeys(names))


def _fallback(report: Report, delegate: str) -> str | None:
    """One line naming the executed ops kept off ``delegate`` (None when every one is taken)."""
    if delegate not in report.delegation:
        return f"{delegate} placement not analysed"
    kept: dict[str, list[str]] = {}
    for o in report.ops:
        why = reason(o, delegate)
        if why is not None and o.phase != "not_executed":
            kept.setdefault(f"{o.op_type} ({why})", []).append(f"{o.subgraph}:{o.index}")
    if not kept:
        return None
    n = sum(len(v) for v in kept.values())
    groups = sorted(kept.items(), key=lambda kv: -len(kv[1]))
    shown = "; ".join(f"{what} at {', '.join(at[:3])}{' …' if len(at) > 3 else ''}" for what, at in groups[:4])
    more = f"; {len(groups) - 4} more kinds" if len(groups) > 4 else ""
    return f"fallback: {n} op(s) kept off {delegate}: {shown}{more}"


def _memory_limit(report: Report, what: str, limit: int) -> str | None:
    """The violation of a limit on the default runtime's memory or TFLite Micro's arena (None when within it)."""
    memory = report.memory
    name = "memory" if what == "memory_bytes" else "tflm_arena"
    if memory is None:
        return f"{name} not analysed (limit {human_bytes(limit)})"
    if what == "memory_bytes":
        total = runtime_total(memory)
        if total is None:
            return f"memory not analysed with XNNPACK on (limit {human_bytes(limit)})"
        own = f" + interpreter {human_bytes(total.interpreter_bytes)}" if total.interpreter_bytes else ""
        value, which = total.total_bytes, (f" ({total.config}: arena {human_bytes(total.arena_bytes)} + XNNPACK "
                                           f"{human_bytes(total.xnnpack_bytes)}{own} + weights "
                                           f"{human_bytes(total.weights_mapped_bytes)})")
    else:
        value = memory.tflm_arena_size_bytes if memory.tflm_arena_size_bytes is not None else memory.tflm_arena_bytes
        which = " (TFLite Micro)"
    if value > limit:
        return f"{name}{which} {human_bytes(value)} > {human_bytes(limit)} ({value:,} > {limit:,} bytes)"
    return None


def _predicted(report: Report, limit: float) -> str | None:
    """The violation of a limit on the predicted latency's point estimate (None when within it)."""
    p = report.prediction
    if p is None:
        return f"predicted_ms not predicted (limit {limit:g} ms; run with --predict PROFILE)"
    if not p.complete:
        listing = ", ".join(f"{k} ×{v}" for k, v in p.ops_not_predicted.items())
        return (f"predicted_ms partial: {p.latency_ms:.3f} ms leaves out op(s) the profile has no law for "
                f"({listing}); it cannot be shown to be within {limit:g} ms")
    if p.latency_ms > limit:
        rate = "" if p.profile.range_rate is None else f"{100 * p.profile.range_rate:.0f}% "
        return f"predicted_ms {p.latency_ms:.3f} > {limit:g} ({rate}range {p.low_ms:.3f} – {p.high_ms:.3f} ms)"
    return None


def check_budget(report: Report, *, max_macs: int | str | None = None, max_flops: int | str | None = None,
                 max_params: int | str | None = None, max_latency_ms: float | str | None = None,
                 max_arena: int | str | None = None, max_partitions: int | str | None = None,
                 max_predicted_ms: float | str | None = None, fail_on_fallback: str | tuple[str, ...] | list[str] | None = None,
                 max_memory: int | str | None = None, max_tflm_arena: int | str | None = None) -> list[str]:
    """The violated limits of ``report``, one message each (empty when within budget).

    Args:
        report: a :class:`~tflite_flops.report.Report`.
        max_macs, max_flops, max_params: count limits (ints, or strings such as ``"300M"``).
        max_latency_ms: limit on the median latency; needs a latency measurement in the report.
        max_predicted_ms: limit on the predicted latency's point estimate (``report.prediction.latency_ms``,
            not its high end); needs a complete prediction in the report (``analyze(predict=PROFILE)``).
        max_memory: limit on the memory of LiteRT's default configuration (XNNPACK on, at the analysed
            threads): its arena, XNNPACK's own bytes and the weights mapped from the file
            (``report.memory.runtime_total_bytes`` in the JSON; :func:`tflite_flops.report.headline.runtime_total`):
            an int, or a string such as ``"40MiB"``.
        max_arena: limit on TFLite's arena as LiteRT allocates it with XNNPACK off, kernel temporaries included
            (``report.memory.runtime.arena_bytes``; the tensors-only ``report.memory.arena_bytes`` for a
            report without it): an int, or a string such as ``"2MiB"`` or ``"512K"``.
        max_tflm_arena: limit on TFLite Micro's arena, the size to give MicroInterpreter
            (``report.memory.tflm_arena_size_bytes``).
        max_partitions: limit on the partitions XNNPACK cuts the graph into (DELEGATE nodes).
        fail_on_fallback: a delegate ("xnnpack", "gpu") or several: any executed op kept off one is a violation.

    Returns:
        Messages such as ``"macs 300.8 M > 200 M"``.

    Raises:
        InputSpecError: a limit that is not a non-negative number.
    """
    given = {"max_macs": max_macs, "max_flops": max_flops, "max_params": max_params,
             "max_latency_ms": max_latency_ms, "max_arena": max_arena, "max_partitions": max_partitions,
             "max_predicted_ms": max_predicted_ms, "max_memory": max_memory, "max_tflm_arena": max_tflm_arena}
    out = []
    for delegate in _delegates(fail_on_fallback) if fail_on_fallback is not None else ():
        line = _fallback(report, delegate)
        if line:
            out.append(line)
    for key, raw in given.items():
        if raw is None:
            continue
        limit = _limit_value(key, raw)
        what = LIMITS[key][0]
        if what == "latency_ms":
            median = report.latency.median_ms if report.latency is not None else None
            noisy = getattr(report.latency, "noisy", None)
            if median is None:
                out.append(f"latency_ms not measured (limit {limit:g} ms; run with --latency)")
            elif noisy:  # neither a pass nor a fail: the gate says so, never silently
                out.append(f"latency_ms {median:.3f} was measured NOISY ({noisy}): it can neither pass nor fail the "
                           f"limit {limit:g} ms; measure again on a quiet machine")
            elif median > limit:
                out.append(f"latency_ms {median:.3f} > {limit:g}")
            continue
        if what == "predicted_ms":
            line = _predicted(report, limit)
            if line:
                out.append(line)
            continue
        if what in ("memory_bytes", "tflm_arena_bytes"):
            line = _memory_limit(report, what, int(limit))
            if line:
                out.append(line)
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
        if what == "partitions":
            placed = report.delegation.get("xnnpack")
            if placed is None:
                out.append(f"partitions not analysed (limit {int(limit)})")
            elif placed.partitions > limit:
                out.append(f"partitions {placed.partitions} > {int(limit)} (XNNPACK DELEGATE nodes)")
            continue
        value = getattr(report.totals, what)
        if value > limit:
            out.append(f"{what} {human(value)} > {human(limit)}")
    return out


# ---- budget files ------------------------------------------------------------------------------


def load_budget_file(path: str) -> dict[str, Any]:
    """Read the limits of a TOML budget file (keys at top level or under ``[budget]``).

    Raises:
        InputSpecError: unreadable file, invalid TOML, or an unknown key.
    """
    try:
        raw = read_capped(path, BUDGET_FILE_CAP)  # a regular file of at most 1 MiB: never a FIFO or /dev/zero
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
    except RecursionError:
        raise InputSpecError(f"--budget {path}: invalid TOML (nested too deeply)") from None
    table = data.get("budget", data) if isinstance(data.get("budget"), Mapping) else data
    limits: dict[str, Any] = {}
    for key, value in table.items():
        if key == FALLBACK:
            limits[FALLBACK] = _delegates(value)
            continue
        name = key if key.startswith("max_") else f"max_{key}"
        if name not in LIMITS:
            raise InputSpecError(f"--budget {path}: unknown key {key!r} (known: {', '.join([*LIMITS, FALLBACK])})")
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
    """--max-macs, --max-flops, --max-params, --max-latency-ms, --max-predicted-ms, --max-memory, ... and --budget FILE.toml."""
    g = parser.add_argument_group("budget (exit code 3 when exceeded)")
    g.add_argument("--max-macs", type=_count_arg, metavar="N", help="limit on MACs per inference (e.g. 300M)")
    g.add_argument("--max-flops", type=_count_arg, metavar="N", help="limit on FLOPs per inference (e.g. 1.2G)")
    g.add_argument("--max-params", type=_count_arg, metavar="N", help="limit on parameters (e.g. 3.5M)")
    g.add_argument("--max-latency-ms", type=_ms_arg, metavar="MS", help="limit on the median latency (turns --latency on)")
    g.add_argument("--max-predicted-ms", type=_ms_arg, metavar="MS",
                   help="limit on the predicted latency, its point estimate (needs --predict; a partial "
                        "prediction fails it)")
    g.add_argument("--max-memory", type=_bytes_arg, metavar="BYTES",
                   help="limit on the memory LiteRT's default configuration uses (XNNPACK on, at --threads): its "
                        "arena, XNNPACK's own bytes and the weights mapped from the file (e.g. 40MiB)")
    g.add_argument("--max-arena", type=_bytes_arg, metavar="BYTES",
                   help="limit on LiteRT's arena with XNNPACK off, kernel temporaries included, at --threads "
                        "(e.g. 512K, 2MiB)")
    g.add_argument("--max-tflm-arena", type=_bytes_arg, metavar="BYTES",
                   help="limit on TFLite Micro's arena, the size to give MicroInterpreter (e.g. 256KiB)")
    g.add_argument("--max-partitions", type=_count_arg, metavar="N",
                   help="limit on the partitions XNNPACK cuts the graph into (DELEGATE nodes)")
    g.add_argument("--fail-on-fallback", action="append", choices=DELEGATE_KEYS, metavar="DELEGATE",
                   help="fail when any executed op is kept off this delegate: xnnpack or gpu (repeatable)")
    g.add_argument("--budget", metavar="FILE.toml", help="read limits from a TOML file (options above override it)")


def budget_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The limits in force: the ``--budget`` file, overridden by the ``--max-*`` options."""
    limits: dict[str, Any] = {}
    if getattr(args, "budget", None):
        limits.update(load_budget_file(args.budget))
    for key in LIMITS:
        value = getattr(args, key, None)
        if value is not None:
            limits[key] = value
    if getattr(args, FALLBACK, None):
        limits[FALLBACK] = tuple(dict.fromkeys(getattr(args, FALLBACK)))
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
