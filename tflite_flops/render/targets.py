"""The CPU targets as text or JSON (``tflite_flops targets``): name, ISA, what was measured, the sources."""

from __future__ import annotations

import json
from typing import Sequence

from ..settings import DEFAULT_TFLM_TARGET, TFLM_TARGETS
from ..targets import SOURCE_GROUPS, CpuTarget

# where the TFLite Micro targets' facts come from (docs/memory.md, "TensorFlow Lite Micro")
_TFLM_SOURCES = {"reference": "tflite-micro 90b983c, kernels/*.cc (checked against the tflite-micro package)",
                 "cmsis_nn": "tflite-micro 90b983c kernels/cmsis_nn/*.cc and CMSIS-NN 99f736a arm_*_get_buffer_size "
                             "(not checked here: no Cortex-M build runs)"}


def _tflm_targets() -> list[dict]:
    """The TFLite Micro targets (--tflm-target) as records."""
    return [{"name": key, "build": t.name, "pointer_bytes": t.pointer_bytes, "kernels": t.kernels,
             "features": t.features or None, "default": key == DEFAULT_TFLM_TARGET,
             "source": _TFLM_SOURCES.get(t.kernels, "")} for key, t in TFLM_TARGETS.items()]


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
             "builtin_heap": t.builtin_heap} for t in found], "tflm_targets": _tflm_targets()}, indent=2) + "\n"
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
    tflm = _tflm_targets()
    width = max(len(t["name"]) for t in tflm) + 2
    lines.append(f"TFLite Micro targets (--tflm-target NAME; default {DEFAULT_TFLM_TARGET})")
    lines.append("")
    for t in tflm:
        lines.append(f"{t['name']:<{width}}{t['build']}")
        lines.append(f"{'':<{width}}{t['source']}")
    lines.append("")
    if note:
        lines.append(f"note: {note}")
    return "\n".join(lines).rstrip("\n") + "\n"
