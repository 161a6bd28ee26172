"""The memory figures as rows that every renderer shows the same way (label, human value, exact)."""

from __future__ import annotations

from ..report import MemorySummary
from ..units import grouped, human_bytes


def memory_rows(memory: MemorySummary) -> list[tuple[str, str, str]]:
    """(label, value, exact) for each figure of :class:`MemorySummary`, in reading order."""
    peak_where = f" at op {memory.peak_op}" if memory.peak_op else ""
    rows = [("Arena (TFLite planner)", memory.arena_bytes, ""),
            ("Peak live activations", memory.peak_live_bytes, peak_where),
            ("Activations, no reuse", memory.activations_total_bytes, ""),
            ("Arena (TFLite Micro)", memory.tflm_arena_bytes, " + scratch, structs"),
            ("Weights (in the file)", memory.weights_bytes, "")]
    if memory.persistent_arena_bytes:
        rows.insert(1, ("Persistent arena", memory.persistent_arena_bytes, " variables, init-time weights"))
    return [(label, human_bytes(value), f"{grouped(value)}{extra}") for label, value, extra in rows]


def memory_caveat(memory: MemorySummary) -> str:
    """The line that goes under the figures."""
    per_sg = f" over {len(memory.subgraphs)} subgraph arenas" if len(memory.subgraphs) > 1 else ""
    text = f"activation memory{per_sg}; kernel scratch buffers and delegates' memory come on top"
    if not memory.complete:
        text += "; SOME SHAPES ARE PLACEHOLDERS (dynamic dims unresolved), so are these figures"
    return text
