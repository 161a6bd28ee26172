"""Read the per-op profile of TFLite's ``benchmark_model --enable_op_profiling=true`` and join it to a Report.

Both output modes are read:

* text (stdout): ``============ Run Order ============`` sections with a header of ``[column]`` cells
  (``[node type] [start] [first] [avg ms] [%] [cdf%] [mem KB] [times called] [Name]``; ``[start]`` is
  absent in older versions) and tab-separated rows whose last cell is ``[output tensor name]``;
* CSV (``--op_profiling_output_mode=csv`` or ``--profiling_output_csv_file``): the same columns
  joined with ``", "``; names are not quoted and may themselves contain commas.

The "Benchmark Initialization" block is skipped. Multi-subgraph profiles say ``Subgraph (index: i)``
before a block. Rows are joined to our ops by output tensor name, then by run order among ops
of the same type. Delegate partitions (``TfLiteXNNPackDelegate`` …) cannot be attributed to ops
and are reported apart.

Each row's times are checked (finite, at least 0: benchmark_model prints a fast op as ``0.000``) and its
"times called" is a count; a row that is no number at all (a header repeated, a title) is not a row. Names
and node types are made safe for every output (:func:`~tflite_flops.device.schema.name`). The text is read
under :data:`~tflite_flops.device.schema.TEXT_CAP` and :data:`~tflite_flops.device.schema.MAX_LINES` lines, each
line scanned in linear time, and joined to the report in time linear in rows and ops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable

from ..errors import ModelFormatError
from ..files import read_capped
from ..report import LatencyStats, Report
from . import schema
from .schema import refuse

DEVICE_FILE_CAP = schema.TEXT_CAP  # benchmark_model's op profiles and logs, read whole

_SUBGRAPH = re.compile(r"Subgraph \(index:\s*(-?\d+)")
_CELL = re.compile(r"\[([^\]]+)\]")
MAX_ROWS = schema.MAX_ELEMENTS  # rows of one profile (a real one: one per op and section)


@dataclass(frozen=True)
class ProfileRow:
    """One node of a benchmark_model op profile."""

    subgraph: int
    node_type: str
    avg_ms: float
    first_ms: float | None
    times_called: float | None
    name: str


def _num(text: str) -> float | None:
    """The number a cell holds (None: no number at all); a cell too long to be one is no number."""
    s = text.strip().rstrip("%")
    if len(s) > schema.NUMBER_CHARS:
        return None
    try:
        return float(s)
    except ValueError:
        return None


MAX_HEADER = 64  # columns of a header: benchmark_model writes 9


def _banner(stripped: str) -> str | None:
    """The title of a ``===== Title =====`` line, else None (string operations: no backtracking)."""
    if len(stripped) < 2 or stripped[0] != "=" or stripped[-1] != "=":
        return None
    return stripped.strip("=").strip()


def parse_profile(text: str, path: str = "profile") -> list[ProfileRow]:
    """Rows of every "Run Order" section of the inference profile (text or CSV mode).

    Raises:
        ModelFormatError: a row's time or count out of range, a subgraph index that is no count, or more than
            :data:`MAX_ROWS` rows or :data:`~tflite_flops.device.schema.MAX_LINES` lines.
    """
    rows: list[ProfileRow] = []
    section = ""
    in_init = False
    subgraph = 0
    header: list[str] | None = None
    csv_mode = False
    for number, line in enumerate(schema.lines(text, path), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if "Profiling Info for Benchmark Initialization" in stripped:
            in_init = True
        elif "Profiling Info for Benchmark" in stripped or "Operator-wise Profiling Info for Regular Benchmark" in stripped:
            in_init = False
        m = _SUBGRAPH.search(stripped)
        if m:
            subgraph = schema.count(m.group(1), path, f"line {number}: the subgraph index")
        elif "Primary graph" in stripped:
            subgraph = 0
        banner = _banner(stripped)
        if banner is not None:
            section, header = banner, None
            continue
        if section != "Run Order" or in_init:
            continue
        if header is None:
            cells = _CELL.findall(stripped)
            if cells:
                header, csv_mode = [c.strip().lower() for c in cells[:MAX_HEADER]], False
            elif "," in stripped and "node type" in stripped.lower():
                header, csv_mode = [c.strip().lower() for c in stripped.split(",", MAX_HEADER)[:MAX_HEADER]], True
            continue
        row = _row(stripped, header, csv_mode, subgraph, path, number)
        if row is not None:
            if len(rows) >= MAX_ROWS:
                raise refuse(path, f"more than {MAX_ROWS:,} op rows (the most read from a profile)")
            rows.append(row)
    return rows


def _row(line: str, header: list[str], csv_mode: bool, subgraph: int, path: str = "profile",
         number: int = 0) -> ProfileRow | None:
    n = len(header)
    if n < 2:
        return None
    if csv_mode:
        parts = line.split(",", n - 1)
        if len(parts) < n:
            return None
        cells = dict(zip(header, parts))
    else:
        # "cells... [name]": the name is between the line's first "[" and its last character, "]"
        if not line.endswith("]") or "[" not in line:
            return None
        start = line.index("[")
        values = line[:start].split()
        if len(values) < n - 1:
            return None
        # the node type may contain spaces in rare cases: the numeric columns are the last ones
        n_num = n - 2
        cells = dict(zip(header[1:-1], values[-n_num:] if n_num else []))
        cells[header[0]] = " ".join(values[:-n_num] if n_num else values)
        cells[header[-1]] = line[start + 1:-1]
    avg_key = "avg ms" if "avg ms" in cells else "avg_ms"
    avg = _num(cells.get(avg_key, ""))
    if avg is None:
        return None
    first = _num(cells.get("first", ""))
    called = _num(cells.get("times called", ""))
    if not (0.0 <= avg < _INF and (first is None or 0.0 <= first < _INF) and (called is None or 0.0 <= called < _INF)):
        at = f"line {number}: " if number else ""  # which one is out of range: its check raises
        schema.time_value(avg, path, f"{at}{avg_key}")
        if first is not None:
            schema.time_value(first, path, f"{at}first")
        schema.time_value(called, path, f"{at}times called", "a count")
    return ProfileRow(subgraph, schema.name(cells.get("node type", "").strip()), avg, first, called,
                      schema.name(cells.get("name", "").strip()))


_INF = float("inf")


def join_profile(report: Report, rows: Iterable[ProfileRow], source: str = "benchmark_model op profile") -> Report:
    """Report with ``latency_ms`` per op from a device profile (by output tensor name, then run order)."""
    rows = list(rows)
    if not rows:
        raise ModelFormatError("no per-op rows found in the profile (was it run with --enable_op_profiling=true?)")
    records = list(report.ops)
    by_name: dict[tuple[int, str], int] = {}
    by_type: dict[tuple[int, str], list[int]] = {}  # the positions of each (subgraph, op type), last first
    for pos, r in enumerate(records):
        by_name.setdefault((r.subgraph, schema.name(r.name)), pos)  # the rows' names are made printable too
        by_type.setdefault((r.subgraph, r.op_type), []).append(pos)
    for positions in by_type.values():
        positions.reverse()
    taken: set[int] = set()
    unmatched: list[ProfileRow] = []
    for row in rows:
        pos = by_name.get((row.subgraph, row.name))
        if pos is None or pos in taken:
            # the first op of the row's type not yet taken, in run order (each position is popped once)
            queue = by_type.get((row.subgraph, row.node_type), [])
            while queue and queue[-1] in taken:
                queue.pop()
            pos = queue.pop() if queue else None
        if pos is None:
            unmatched.append(row)
            continue
        taken.add(pos)
        records[pos] = replace(records[pos], latency_ms=row.avg_ms)
    matched = [records[i] for i in sorted(taken)]
    total = sum(r.avg_ms for r in rows)
    latency = replace(
        report.latency or LatencyStats(), source=source, per_op_sum_ms=sum(r.latency_ms or 0.0 for r in matched),
        per_op_timed=len(matched), profile_rows=len(rows), profile_total_ms=total,
        unmatched_rows=tuple(f"{r.node_type} [{r.name}] {r.avg_ms:.3f} ms" for r in unmatched),
        per_op_note=("device per-op averages from benchmark_model; rows of delegate partitions "
                     "(e.g. TfLiteXNNPackDelegate) cover several ops and are listed as unmatched"))
    warnings = report.warnings
    if unmatched:
        warnings = warnings + (f"{len(unmatched)} profile row(s) matched no op (delegate partitions or a different "
                               f"model): {', '.join(r.node_type for r in unmatched[:5])}",)
    return replace(report, ops=tuple(records), latency=latency, warnings=warnings)


def read_profile(path: str) -> list[ProfileRow]:
    """Parse a profile file."""
    return parse_profile(read_profile_text(path), path)


def read_profile_text(path: str) -> str:
    """The text of a profile file."""
    try:
        return read_capped(path, DEVICE_FILE_CAP, "r", encoding="utf-8", errors="replace")
    except OSError as exc:
        from ..errors import ModelLoadError

        raise ModelLoadError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def profile_graph(text: str) -> str | None:
    """The ``Graph: [model.tflite]`` that benchmark_model logs before the profile (text mode; newer versions
    prefix ``INFO: ``, a logcat capture its own columns), else None. Only the lines that hold ``Graph:`` are
    looked at, each once."""
    pos = text.find("Graph:")
    while pos >= 0:
        start, end = text.rfind("\n", 0, pos) + 1, text.find("\n", pos)
        end = len(text) if end < 0 else end
        found = schema.bracketed(text[start:end], "Graph")
        if found is not None:
            return schema.name(found.strip())
        pos = text.find("Graph:", end)
    return None


def _is_delegate(node_type: str) -> bool:
    return "delegate" in node_type.lower()


def _op_type(op_type: str) -> str:
    return op_type[len("CUSTOM:"):] if op_type.startswith("CUSTOM:") else op_type  # the profile names custom ops bare


def profile_mismatches(report: Report, rows: Iterable[ProfileRow], graph: str | None = None) -> list[str]:
    """Why a profile does not come from the report's model; empty when it does.

    Checked: the graph file name benchmark_model logged (when the profile has it) against the
    model's file name, and per subgraph the op types of the profile's rows, in run order, against
    the model's ops in execution order. Rows of delegate partitions cover several ops: the other
    rows must then appear in the model's order (a subsequence); without delegates the sequences
    must be equal.
    """
    import os

    problems = []
    model_name = os.path.basename(report.model.path) if report.model.path else None
    if graph and model_name and os.path.basename(graph) != model_name:
        problems.append(f"the profile was taken of {os.path.basename(graph)!r}, not {model_name!r}")
    by_subgraph: dict[int, list[ProfileRow]] = {}
    for row in rows:
        by_subgraph.setdefault(row.subgraph, []).append(row)
    model_ops: dict[int, list[str]] = {}  # the model's op types per subgraph, in execution order: built once
    for o in sorted(report.ops, key=lambda o: (o.subgraph, o.index)):
        model_ops.setdefault(o.subgraph, []).append(_op_type(o.op_type))
    for sg, sg_rows in sorted(by_subgraph.items()):
        ours = model_ops.get(sg, [])
        theirs = [r.node_type for r in sg_rows if not _is_delegate(r.node_type)]
        delegated = len(theirs) < len(sg_rows)
        where = f"subgraph {sg}: " if len(by_subgraph) > 1 or sg else ""
        if not ours:
            problems.append(f"{where}the model has no subgraph {sg}" if where else "the model has no ops")
            continue
        if delegated:
            it = iter(ours)
            missing = next((t for t in theirs if not any(t == o for o in it)), None)
            if missing is not None:
                problems.append(f"{where}profile op {missing} does not follow the model's op order")
            continue
        if theirs == ours:
            continue
        first = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
        got = theirs[first] if first < len(theirs) else "(end)"
        want = ours[first] if first < len(ours) else "(end)"
        problems.append(f"{where}{len(theirs)} profiled op(s) against {len(ours)} in the model; run position "
                        f"{first} is {got} in the profile, {want} in the model")
    return problems

