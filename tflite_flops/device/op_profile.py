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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable

from ..errors import ModelFormatError
from ..files import MiB, read_capped
from ..report import LatencyStats, Report

DEVICE_FILE_CAP = 512 * MiB  # benchmark_model's op profiles and runtime details, read whole

_BANNER = re.compile(r"^=+\s*(.*?)\s*=+\s*$")
_SUBGRAPH = re.compile(r"Subgraph \(index:\s*(\d+)")


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
    try:
        return float(text.strip().rstrip("%"))
    except ValueError:
        return None


def parse_profile(text: str) -> list[ProfileRow]:
    """Rows of every "Run Order" section of the inference profile (text or CSV mode)."""
    rows: list[ProfileRow] = []
    section = ""
    in_init = False
    subgraph = 0
    header: list[str] | None = None
    csv_mode = False
    for raw in text.splitlines():
        line = raw.rstrip("\n")
        stripped = line.strip()
        if not stripped:
            continue
        if "Profiling Info for Benchmark Initialization" in stripped:
            in_init = True
        elif "Profiling Info for Benchmark" in stripped or "Operator-wise Profiling Info for Regular Benchmark" in stripped:
            in_init = False
        m = _SUBGRAPH.search(stripped)
        if m:
            subgraph = int(m.group(1))
        elif "Primary graph" in stripped:
            subgraph = 0
        banner = _BANNER.match(stripped)
        if banner:
            section, header = banner.group(1), None
            continue
        if section != "Run Order" or in_init:
            continue
        if header is None:
            cells = re.findall(r"\[([^\]]+)\]", stripped)
            if cells:
                header, csv_mode = [c.strip().lower() for c in cells], False
            elif "," in stripped and "node type" in stripped.lower():
                header, csv_mode = [c.strip().lower() for c in stripped.split(",")], True
            continue
        row = _row(stripped, header, csv_mode, subgraph)
        if row is not None:
            rows.append(row)
    return rows


def _row(line: str, header: list[str], csv_mode: bool, subgraph: int) -> ProfileRow | None:
    if csv_mode:
        parts = [p.strip() for p in line.split(",", len(header) - 1)]
        if len(parts) < len(header):
            return None
        cells = dict(zip(header, parts))
    else:
        m = re.match(r"^(.*?)\[(.*)\]\s*$", line)
        if not m:
            return None
        values = m.group(1).split()
        if len(values) < len(header) - 1:
            return None
        # the node type may contain spaces in rare cases: the numeric columns are the last ones
        n_num = len(header) - 2
        cells = dict(zip(header[1:-1], values[-n_num:]))
        cells[header[0]] = " ".join(values[:-n_num])
        cells[header[-1]] = m.group(2)
    avg = _num(cells.get("avg ms", cells.get("avg_ms", "")))
    if avg is None:
        return None
    return ProfileRow(subgraph, cells.get("node type", "").strip(), avg, _num(cells.get("first", "")),
                      _num(cells.get("times called", "")), cells.get("name", "").strip())


def join_profile(report: Report, rows: Iterable[ProfileRow], source: str = "benchmark_model op profile") -> Report:
    """Report with ``latency_ms`` per op from a device profile (by output tensor name, then run order)."""
    rows = list(rows)
    if not rows:
        raise ModelFormatError("no per-op rows found in the profile (was it run with --enable_op_profiling=true?)")
    records = list(report.ops)
    by_name: dict[tuple[int, str], int] = {}
    for pos, r in enumerate(records):
        by_name.setdefault((r.subgraph, r.name), pos)
    taken: set[int] = set()
    unmatched: list[ProfileRow] = []
    for row in rows:
        pos = by_name.get((row.subgraph, row.name))
        if pos is None or pos in taken:
            pos = next((i for i, r in enumerate(records) if i not in taken and r.subgraph == row.subgraph
                        and r.op_type == row.node_type), None)
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
    return parse_profile(read_profile_text(path))


def read_profile_text(path: str) -> str:
    """The text of a profile file."""
    try:
        return read_capped(path, DEVICE_FILE_CAP, "r", encoding="utf-8", errors="replace")
    except OSError as exc:
        from ..errors import ModelLoadError

        raise ModelLoadError(f"{path}: cannot read ({exc.strerror or exc})") from exc


_GRAPH = re.compile(r"^(?:.*?[\s:])?Graph:\s*\[(.*)\]\s*$", re.M)  # bare, "INFO: Graph: [..]" or a logcat line


def profile_graph(text: str) -> str | None:
    """The ``Graph: [model.tflite]`` that benchmark_model logs before the profile (text mode; newer versions
    prefix ``INFO: ``, a logcat capture its own columns), else None."""
    m = _GRAPH.search(text)
    return m.group(1).strip() if m else None


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
    for sg, sg_rows in sorted(by_subgraph.items()):
        ours = [_op_type(o.op_type) for o in sorted(report.ops, key=lambda o: o.index) if o.subgraph == sg]
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

