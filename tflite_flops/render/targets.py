"""The CPU targets as text or JSON (``tflite_flops targets``): name, ISA, what was measured, the sources."""

from __future__ import annotations

import json
from typing import Sequence

from ..targets import SOURCE_GROUPS, CpuTarget


def _status(target: CpuTarget) -> str:
    """"measured", "from source", or which groups were measured."""
    if set(SOURCE_GROUPS) <= set(target.measured):
        return "measured"
    if not target.measured:
        return "from source"
    return "measured: " + ", ".join(target.measured)


def render_targets(found: Sequence[CpuTarget], host: str, note: str | None, fmt: str = "table") -> str:
    """The targets ``found``, ``host`` (the detected one's name) marked, with the detection's ``note``."""
    if fmt == "json":
        return json.dumps({"host": host, "note": note, "targets": [
            {"name": t.name, "isa": t.isa, "cpus": t.cpus, "host": t.name == host, "status": _status(t),
             "measured": list(t.measured), "sources": {g: t.source(g) for g in SOURCE_GROUPS},
             "constants": {"float_rows": t.float_rows, "float_tile": t.float_tile, "float_nr2_tile": t.float_nr2_tile,
                           "float_gemm_tile": t.float_gemm_tile, "int8_rows": t.int8_rows,
                           "int8_tile": t.int8_tile, "int8_kr": t.int8_kr, "hybrid_rows": t.hybrid_rows,
                           "hybrid_tile": t.hybrid_tile, "hybrid_kr": t.hybrid_kr,
                           "hybrid_gemm_tile": t.hybrid_gemm_tile, "alignment": t.alignment},
             "builtin_heap": t.builtin_heap} for t in found]}, indent=2) + "\n"
    width = max(len(t.name) for t in found) + 2
    lines = [f"CPU targets (--target NAME; host = this CPU: {host})", ""]
    for t in found:
        mark = "  <- host" if t.name == host else ""
        lines.append(f"{t.name:<{width}}{t.isa} [{_status(t)}]{mark}")
        lines.append(f"{'':<{width}}CPUs: {t.cpus}")
        lines.append(f"{'':<{width}}GEMM mr x nr (kr): float {t.float_rows}x{t.float_tile} ({t.float_nr2_rows}x{t.float_nr2_tile} nr2), int8 {t.int8_rows}x"
                     f"{t.int8_tile} (kr {t.int8_kr}), dynamic range {t.hybrid_rows}x{t.hybrid_tile} (kr {t.hybrid_kr}),"
                     f" fully connected {t.hybrid_gemm_tile}; alignment {t.alignment}")
        for group in SOURCE_GROUPS:
            if t.source(group):
                lines.append(f"{'':<{width}}{group}: {t.source(group)}")
        lines.append("")
    if note:
        lines.append(f"note: {note}")
    return "\n".join(lines).rstrip("\n") + "\n"
