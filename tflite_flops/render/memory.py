"""The memory figures as rows that every renderer shows the same way (label, human value, exact).

The section leads with what the model's runtime really uses (:mod:`tflite_flops.report.headline`): for a phone
model LiteRT's default configuration (XNNPACK on, at the analysed threads) with its total (arena, XNNPACK's own
bytes, the weights mapped from the file), for an MCU model TFLite Micro's arena; the other configurations
follow as labelled alternatives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..report import MemorySummary, Report
from ..report.headline import MCU, PHONE, runtime_total, target_class
from ..units import grouped, human_bytes

if TYPE_CHECKING:
    from ..report.measured import LatencyStats

ALTERNATIVES = "Other configurations"  # the label of the row that opens the alternatives


def _threads(n: int) -> str:
    return f"{n} thread{'s' if n != 1 else ''}"


def memory_title(report: Report) -> str:
    """The memory section's heading: the configuration it leads with (the model's target class's runtime)."""
    memory = report.memory
    if memory is None:
        return "Memory at run time"
    if target_class(report)[0] == MCU:
        return f"Memory at run time (TFLite Micro, {tflm_build(memory)}: an MCU model)"
    total = runtime_total(memory)
    cpu = f", CPU target {memory.target}" if memory.target else ""  # every figure below is the target's
    return "Memory at run time" if total is None else f"Memory at run time ({total.config}{cpu})"


def class_guess(report: Report) -> str:
    """One line when the user named no CPU (no ``--target``): the device class the section leads with is a guess
    from the model (issue 45), and the options that name the device; ``""`` when a CPU was named."""
    if report.memory is None or (report.settings or {}).get("cpu_target"):
        return ""
    cls, why = target_class(report)
    if cls == MCU:
        return (f"a guess (no --target): {why}; name the device with --target NAME (a phone's CPU: LiteRT's memory "
                "leads) or --tflm-target NAME (an MCU's TFLite Micro build)")
    cpu = f", figures for this CPU ({report.memory.target})" if report.memory.target else ""
    return (f"a guess (no --target): a phone model, {why}{cpu}; name the device's CPU with --target NAME "
            "(tflite_flops targets lists them)")


def memory_rows(memory: MemorySummary, target: str = PHONE, every: bool = False) -> list[tuple[str, str, str]]:
    """(label, value, exact) for the figures of :class:`MemorySummary`, in reading order: the configuration
    the model's ``target`` class runs first (a phone model: LiteRT's default, XNNPACK on, its parts and their
    total; an MCU model: TFLite Micro's arena), then, under :data:`ALTERNATIVES`, the other configurations,
    each labelled. The rows of the other class (TFLite Micro for a phone model, LiteRT for an MCU one) are
    left out unless ``every`` (the JSON keeps every figure)."""
    default, off = _litert_rows(memory)
    tflm = _tflm_rows(memory)
    generic = [("Arena, tensors only (lower bound)" if memory.runtime is not None else "Arena (TFLite planner)",
                memory.arena_bytes, "")]
    if memory.persistent_arena_bytes and memory.runtime is None:
        generic.append(("Persistent arena", memory.persistent_arena_bytes, " variables, init-time weights"))
    peak_where = f" at op {memory.peak_op}" if memory.peak_op else ""
    generic += [("Peak live activations", memory.peak_live_bytes, peak_where),
                ("Activations, no reuse", memory.activations_total_bytes, "")]
    weights = [("Weights (in the file)", memory.weights_bytes, "")]
    if target == MCU:
        lead = tflm + [("Weights (in flash)", memory.weights_bytes, " read in place from the model array")]
        rest = default[:1] + generic + (default[1:] + off if every else [])  # the memory headline, always shown
    elif default:
        lead, rest = default, off + generic + (tflm if every else [])
    else:  # a report of an earlier version, without the XNNPACK figures: every row, as it was
        lead, rest = off, generic + tflm + weights
    rows: list[tuple[str, int | None, str]] = [*lead, *([(ALTERNATIVES, None, "")] if rest and lead else []), *rest]
    return [(label, "" if value is None else human_bytes(value), "" if value is None else f"{grouped(value)}{extra}")
            for label, value, extra in rows]


def _litert_rows(memory: MemorySummary) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    """LiteRT's two configurations as row blocks: the default (XNNPACK on: its total, then its parts: the
    arena, XNNPACK's own bytes, the weights mapped from the file; empty without those figures) and
    XNNPACK off (its arena, temporaries, persistent arena, total)."""
    default: list[tuple[str, int, str]] = []
    total, on = runtime_total(memory), memory.runtime_xnnpack
    if total is not None and on is not None:
        default = [(f"Total ({total.config})", total.total_bytes,
                    " arena + XNNPACK + interpreter + weights mapped" if total.interpreter_bytes
                    else " arena + XNNPACK + weights mapped"),
                   ("  LiteRT arena (XNNPACK on)", total.arena_bytes, " partition boundaries + kept ops"),
                   *([("    persistent arena", on.persistent_arena_bytes, "")] if on.persistent_arena_bytes else []),
                   (f"  XNNPACK's own{f' (target {memory.target})' if memory.target else ''}", total.xnnpack_bytes,
                    " (estimate)"),
                   *[(f"    {label}", value, "") for label, value in (
                       ("workspace", on.delegate_workspace_bytes), ("packed weights", on.delegate_weights_bytes),
                       ("structures, indirection", on.delegate_structures_bytes)) if value is not None],
                   *([("  interpreter's own structures", total.interpreter_bytes, " tensors, nodes, quantization "
                                                                                     "(estimate)")]
                     if total.interpreter_bytes else []),
                   ("  weights mapped from the file", total.weights_mapped_bytes, "")]
    off: list[tuple[str, int, str]] = []
    runtime = memory.runtime
    if runtime is not None:
        config = f"{_threads(runtime.threads)}, XNNPACK {'on' if runtime.xnnpack else 'off'}"
        off = [(f"LiteRT arena ({config})", runtime.arena_bytes, " tensors + kernel temporaries"),
               ("  largest temporaries of one op", runtime.temporaries_bytes, ""),
               ("  persistent arena", runtime.persistent_arena_bytes, " + persistent temporaries")]
        if runtime.delegate_bytes is not None:
            off.append(("  delegate", runtime.delegate_bytes, ""))
        off.append(("  total", runtime.total_bytes, ""))
    return default, off


def tflm_build(memory: MemorySummary, long: bool = False) -> str:
    """The TFLite Micro build the tflm_* figures are for: its TFLM_TARGETS name (``long``: with what it is,
    ``cortex-m (32-bit MCU, reference kernels)``), or the pointer size of a report that names none."""
    from ..settings import TFLM_TARGETS

    found = TFLM_TARGETS.get(memory.tflm_target or "")
    if found is None:
        return f"{8 * (memory.tflm_pointer_bytes or 4)}-bit"
    return f"{memory.tflm_target} ({found.name})" if long else str(memory.tflm_target)


def _tflm_rows(memory: MemorySummary) -> list[tuple[str, int, str]]:
    """TFLite Micro's arena: the size to give MicroInterpreter, its head and tail, and the tensors alone."""
    if memory.tflm_arena_size_bytes is None or memory.tflm_head_bytes is None or memory.tflm_tail_bytes is None:
        return [("Arena (TFLite Micro)", memory.tflm_arena_bytes, " + scratch, structs")]  # a report of an earlier version
    peak = memory.tflm_allocation_peak_bytes or 0
    above = peak > memory.tflm_head_bytes + memory.tflm_tail_bytes  # AllocateTensors needs more than it keeps
    rows = [(f"TFLite Micro arena ({tflm_build(memory)})", memory.tflm_arena_size_bytes,
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


def memory_caveat(memory: MemorySummary, target: str = PHONE) -> str:
    """The line that goes under the figures (``target``: the model's class, whose runtime the rows lead with)."""
    per_sg = f" over {len(memory.subgraphs)} subgraph arenas" if len(memory.subgraphs) > 1 else ""
    if target == MCU and memory.runtime is not None:
        text = (f"activation memory{per_sg}; TFLite Micro for {tflm_build(memory, long=True)}, the weights read in "
                "place (--tflm-target); "
                "LiteRT's figures (XNNPACK on and off) are in the JSON: an MCU model (integer ops, small weights "
                "and arena)")
    else:
        text = f"activation memory{per_sg}; " + (
            "the LiteRT figures include its builtin kernels' temporaries (heap ones aside); with XNNPACK its own "
            "bytes are an estimate (every signature's weights, packed)" if memory.runtime is not None
            else "kernel scratch buffers and delegates' memory come on top")
        if memory.runtime_xnnpack is not None:
            text += "; TFLite Micro's figures are in the JSON (memory.tflm_*)"
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
