"""The memory figures as rows that every renderer shows the same way (label, human value, exact)."""

from __future__ import annotations

from ..report import LatencyStats, MemorySummary
from ..units import grouped, human_bytes


def memory_rows(memory: MemorySummary) -> list[tuple[str, str, str]]:
    """(label, value, exact) for each figure of :class:`MemorySummary`, in reading order."""
    peak_where = f" at op {memory.peak_op}" if memory.peak_op else ""
    rows = [("Arena (TFLite planner)", memory.arena_bytes, ""),
            ("Peak live activations", memory.peak_live_bytes, peak_where),
            ("Activations, no reuse", memory.activations_total_bytes, ""),
            ("Weights (in the file)", memory.weights_bytes, "")]
    if memory.persistent_arena_bytes:
        rows.insert(1, ("Persistent arena", memory.persistent_arena_bytes, " variables, init-time weights"))
    runtime = memory.runtime
    if runtime is not None:
        config = f"{runtime.threads} thread{'s' if runtime.threads != 1 else ''}, XNNPACK {'on' if runtime.xnnpack else 'off'}"
        rows[:0] = [(f"LiteRT arena ({config})", runtime.arena_bytes, " tensors + kernel temporaries"),
                    ("  largest temporaries of one op", runtime.temporaries_bytes, ""),
                    ("  persistent arena", runtime.persistent_arena_bytes, " + persistent temporaries")]
        if runtime.delegate_bytes is not None:
            rows.insert(3, ("  delegate", runtime.delegate_bytes, ""))
        rows.insert(len([r for r in rows if r[0].startswith(("LiteRT", "  "))]),
                    ("  total", runtime.total_bytes, ""))
        rows = [(("Arena, tensors only (lower bound)" if label == "Arena (TFLite planner)" else label), value, extra)
                for label, value, extra in rows]
    on = memory.runtime_xnnpack
    if on is not None:
        at = len([r for r in rows if r[0].startswith(("LiteRT", "  "))])
        rows[at:at] = [(f"LiteRT arena ({on.threads} thread{'s' if on.threads != 1 else ''}, XNNPACK on)", on.arena_bytes,
                        " partition boundaries + kept ops"),
                       ("  persistent arena", on.persistent_arena_bytes, ""),
                       (f"  XNNPACK's own{f' (target {memory.target})' if memory.target else ''}", on.delegate_bytes or 0,
                        " (estimate)"),
                       *[(f"    {label}", value, "") for label, value in (
                           ("workspace", on.delegate_workspace_bytes), ("packed weights", on.delegate_weights_bytes),
                           ("structures, indirection", on.delegate_structures_bytes)) if value is not None],
                       ("  total", on.total_bytes, "")]
    rows[-1:-1] = _tflm_rows(memory)
    return [(label, human_bytes(value), f"{grouped(value)}{extra}") for label, value, extra in rows]


def _tflm_rows(memory: MemorySummary) -> list[tuple[str, int, str]]:
    """TFLite Micro's arena: the size to give MicroInterpreter, its head and tail, and the tensors alone."""
    if memory.tflm_arena_size_bytes is None or memory.tflm_head_bytes is None or memory.tflm_tail_bytes is None:
        return [("Arena (TFLite Micro)", memory.tflm_arena_bytes, " + scratch, structs")]  # a report of an earlier version
    peak = memory.tflm_allocation_peak_bytes or 0
    above = peak > memory.tflm_head_bytes + memory.tflm_tail_bytes  # AllocateTensors needs more than it keeps
    rows = [(f"TFLite Micro arena ({8 * (memory.tflm_pointer_bytes or 4)}-bit)", memory.tflm_arena_size_bytes,
             f" {'the peak' if above else 'head + tail'}: give MicroInterpreter this"),
            ("  head: tensors + kernel scratch", memory.tflm_head_bytes, ""),
            ("  tail: structs, op data", memory.tflm_tail_bytes, ""),
            ("  tensors only", memory.tflm_arena_bytes, "")]
    if above:
        rows.insert(3, ("  peak while allocating", peak, " tail + temporary structs"))
    if memory.tflm_unmodelled_ops:
        n = len(memory.tflm_unmodelled_ops)
        rows[0] = (*rows[0][:2], f"{rows[0][2]} (low: {n} op type{'s' if n != 1 else ''} not modelled)")
    return rows


def memory_caveat(memory: MemorySummary) -> str:
    """The line that goes under the figures."""
    per_sg = f" over {len(memory.subgraphs)} subgraph arenas" if len(memory.subgraphs) > 1 else ""
    text = f"activation memory{per_sg}; " + (
        "the LiteRT figures include its builtin kernels' temporaries (heap ones aside); with XNNPACK its own "
        "bytes are an estimate (every signature's weights, packed)" if memory.runtime is not None
        else "kernel scratch buffers and delegates' memory come on top")
    if not memory.complete:
        text += "; SOME SHAPES ARE PLACEHOLDERS (dynamic dims unresolved), so are these figures"
    return text


def rss_line(latency: LatencyStats | None, memory: MemorySummary | None) -> str | None:
    """The resident memory a ``--latency`` run added, next to the prediction for its configuration
    (XNNPACK on or off: ``memory.runtime_xnnpack`` or ``memory.runtime``, plus the weights, whose
    mapped pages the runtime touches). None when the run recorded no RSS."""
    if latency is None or latency.rss_load_bytes is None:
        return None
    measured = [("load", latency.rss_load_bytes), ("first invoke", latency.rss_first_invoke_bytes),
                ("peak", latency.rss_peak_bytes)]
    text = "RSS added: " + ", ".join(f"{label} {human_bytes(value)}" for label, value in measured if value is not None)
    figure = None if memory is None else memory.runtime_xnnpack if latency.xnnpack else memory.runtime
    if figure is not None:
        text += (f"; predicted {human_bytes(figure.total_bytes)} (LiteRT, XNNPACK {'on' if figure.xnnpack else 'off'})"
                 f" + {human_bytes(memory.weights_bytes)} of weights")  # type: ignore[union-attr]
    return text
