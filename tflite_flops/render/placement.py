"""Where the ops run, as lines every text renderer shows the same way: per delegate, the partitions and
the kept ops grouped by reason."""

from __future__ import annotations

from operator import attrgetter
from typing import Mapping

from ..ops.placement import GPU_MODELS, delegate_display
from ..report import DelegatePlacement, OpRecord, Report
from ..report import columns as declared

_MAX_GROUPS = 6  # distinct (op type, detail) pairs listed per reason category


def delegate_name(key: str, d: DelegatePlacement | None = None) -> str:
    """The display name of a delegation key, as a heading ("XNNPACK", "The LiteRT GPU accelerator (ML Drift:
    LITERT_CL, LITERT_METAL)", "The classic GPU delegate (TfLiteGpuDelegateV2)", "On the device"): a GPU
    figure always says whose rules it follows (``d.rules``)."""
    if key == "device":
        return "On the device"
    name = delegate_display(key, None if d is None else d.rules)
    return name[:1].upper() + name[1:]


# predicted placements no phone has confirmed (docs/placement.md): the classic delegate's were read off its source
# only; ML Drift's are held, where a Vulkan device exists, to the accelerator's own WebGPU build (tests/litert_gpu.py)
UNCHECKED = {"gpu": "never checked on a real GPU"}
UNCHECKED_RULES = {"ml_drift": "not checked on a phone's GPU"}


def placement_source(d: DelegatePlacement, key: str = "") -> str:
    """Where a placement comes from, as the reports say it; a prediction no runtime has checked says so (the
    GPU's: XNNPACK's is held to LiteRT's own plan by the tests)."""
    if d.source == "device":
        return "as measured on the device"
    caveat = UNCHECKED_RULES.get(d.rules or "", UNCHECKED.get(key)) if d.rules in GPU_MODELS or key in UNCHECKED \
        else None
    return "predicted from the delegate's rules" + (f"; {caveat}" if caveat else "")


def taken(o: OpRecord, key: str) -> bool | None:
    """Whether delegation ``key`` ("xnnpack", "gpu", "device") has the op on a delegate (None: not known)."""
    if key == "device":
        return None if o.device_placement is None else o.device_placement != "builtin"
    return declared.taken(o, key)


def why_kept(o: OpRecord, key: str) -> str | None:
    """The reason the op is kept off (None when taken or not known); the device gives no reasons."""
    if key == "device":
        return "ran on builtin kernels: the device's delegate did not take it" if o.device_placement == "builtin" else None
    return declared.reason(o, key)


def partition_of(o: OpRecord, key: str) -> int | None:
    """The op's partition under ``key`` (the device's: which DELEGATE node ran it; None on builtin kernels)."""
    if key == "device":
        return o.device_partition
    return declared.partition(o, key)


def subsets_text(d: DelegatePlacement) -> str | None:
    """``3 node subsets (benchmark_model's "partitions")``: every subset of TFLite's partitioning, the
    delegated ones and the runs left on the CPU (None when not known: a device's placement, an older report)."""
    if d.subsets is None:
        return None
    return f"{d.subsets} node subset{'s' if d.subsets != 1 else ''} (benchmark_model's \"partitions\")"


def placement_summary(report: Report, key: str) -> str:
    """One line: delegated ops, partitions, node subsets, kept ops."""
    d = report.delegation[key]
    total = d.delegated_ops + d.kept_ops
    where = "the CPU" if key == "gpu" else "builtin kernels"
    parts = f"{d.partitions} partition{'s' if d.partitions != 1 else ''}"
    subsets = subsets_text(d)
    return (f"{d.delegated_ops} of {total} ops delegated · {parts}" + (f" · {subsets}" if subsets else "")
            + f" · {d.kept_ops} kept on {where}")


def kept_groups(report: Report, key: str) -> list[tuple[str, list[tuple[str, str, list[OpRecord]]]]]:
    """The kept ops per reason category (most ops first), each as (op type, detail, ops) groups."""
    groups: dict[str, dict[tuple[str, str], list[OpRecord]]] = {}
    # why_kept(o, key): a delegate's reason field read straight (the device's reasons are made per op)
    reason_of = attrgetter(declared.DELEGATE_FIELDS[key].reason) if key in declared.DELEGATE_FIELDS else None
    for o in report.ops:
        why = why_kept(o, key) if reason_of is None else reason_of(o)
        if why is None:
            continue
        category, _, detail = why.partition(": ")
        groups.setdefault(category, {}).setdefault((o.op_type, detail), []).append(o)
    ordered = sorted(groups.items(), key=lambda kv: (-sum(len(v) for v in kv[1].values()), kv[0]))
    return [(cat, [(t, d, ops) for (t, d), ops in sorted(g.items(), key=lambda kv: (-len(kv[1]), kv[0]))])
            for cat, g in ordered]


def placement_lines(report: Report) -> list[str]:
    """The "Where it runs" section's lines (empty when the report has no placement)."""
    out: list[str] = []
    for key in report.delegation:
        d = report.delegation[key]
        source = placement_source(d, key)
        names = d.extra.get("delegates") if key == "device" else None
        by = f" by {', '.join(names)}" if names else ""
        out.append(f"{delegate_name(key, d)} ({source}{by}): {placement_summary(report, key)}")
        differ = d.extra.get("differs_from_xnnpack_prediction")
        if differ is not None:
            out.append(f"  against the XNNPACK prediction: {'the same placement' if not differ else ''}"
                       + (f"{len(differ)} op(s) differ: {', '.join(differ[:6])}{' …' if len(differ) > 6 else ''}"
                          if differ else ""))
        if len(d.partitions_by_subgraph) > 1:
            out.append(f"  partitions per subgraph: {_per_subgraph(d.partitions_by_subgraph)}")
        if len(d.subsets_by_subgraph) > 1:
            out.append(f"  node subsets per subgraph: {_per_subgraph(d.subsets_by_subgraph)}")
        for category, items in kept_groups(report, key):
            n = sum(len(ops) for _, _, ops in items)
            out.append(f"  kept, {category} ({n} op{'s' if n != 1 else ''}):")
            for op_type, detail, ops in items[:_MAX_GROUPS]:
                at = ", ".join(f"{o.subgraph}:{o.index}" for o in ops[:4]) + (" …" if len(ops) > 4 else "")
                out.append(f"    {op_type} ×{len(ops)} ({at}): {detail}")
            if len(items) > _MAX_GROUPS:
                out.append(f"    … {len(items) - _MAX_GROUPS} more kinds")
    return out


_MAX_SUBGRAPHS = 8  # subgraphs listed on the "partitions per subgraph" line; the others are summed


def _per_subgraph(partitions: Mapping[str, int]) -> str:
    """"subgraph 0: 3, subgraph 1: 3": the first subgraphs' counts (partitions, node subsets), folded for a model of
    many (an LLM bundle's 1,700-character line): the rest as one count."""
    items = list(partitions.items())
    shown = ", ".join(f"subgraph {s}: {n}" for s, n in items[:_MAX_SUBGRAPHS])
    rest = items[_MAX_SUBGRAPHS:]
    return shown + (f" … and {len(rest)} more subgraphs: {sum(n for _, n in rest)}" if rest else "")
