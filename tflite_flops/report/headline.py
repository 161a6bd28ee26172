"""The memory a report leads with: what the default runtime really uses, and which runtime the model is for.

LiteRT runs XNNPACK by default, so the memory a phone app pays for one interpreter is, at ``--threads``:
LiteRT's arenas with XNNPACK on (the partitions' boundary tensors and the kept ops), XNNPACK's own bytes
(workspace, packed weights, structures), the interpreter's own structures (tensors, nodes, quantization
parameters: ``analysis/interpreter_memory.py``) and the weights mapped from the file (the runtime reads them
from the mapped file, and packing touches every page). :func:`runtime_total` adds these up; it is the
figure ``--max-memory`` gates and the JSON writes as ``memory.runtime_total_bytes`` with its parts.

:func:`target_class` says which runtime the model is built for, from the report alone (docs/reports.md):

* **mcu** (TFLite Micro): every op that runs per inference computes in integers (no float32, float16 or
  hybrid op), its weights fit :data:`MCU_MAX_WEIGHTS` and TFLite Micro's arena fits
  :data:`MCU_MAX_ARENA`: the size of the flash and SRAM of a microcontroller board; unless the user named a
  phone's CPU (``--target arm-*``, or a device profile made on one): then it is a phone model;
* **phone** (LiteRT, XNNPACK on): every other model.

The reports lead with the class's runtime; the rows of the other class stay in the JSON
(:func:`tflite_flops.render.memory.memory_rows` gives every row with ``every=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# (records imports this module, so the memory summary and the report are typed Any here: no import cycle)

MCU_MAX_WEIGHTS = 2 << 20  # 2 MiB of flash for the weights: larger boards' limit
MCU_MAX_ARENA = 512 << 10  # 512 KiB of SRAM for the arena
_FLOAT_PRECISIONS = ("float", "hybrid", "bfloat")  # a precision that computes in floating point
PHONE, MCU = "phone", "mcu"


@dataclass(frozen=True)
class RuntimeTotal:
    """The memory of LiteRT's default configuration (XNNPACK on, at ``threads``): its parts and their sum."""

    threads: int
    arena_bytes: int  # LiteRT's arenas with XNNPACK on: boundaries, kept ops, persistent arena
    xnnpack_bytes: int  # XNNPACK's own (estimate): workspace, packed weights, structures
    weights_mapped_bytes: int  # the constant buffers, read from the mapped file
    total_bytes: int
    interpreter_bytes: int = 0  # the interpreter's own structures (estimate); 0 in a report of an earlier version

    @property
    def config(self) -> str:
        """"LiteRT default: XNNPACK on, 1 thread"."""
        return f"LiteRT default: XNNPACK on, {self.threads} thread{'s' if self.threads != 1 else ''}"

    def parts(self) -> dict[str, int]:
        """The JSON form of the parts (``memory.runtime_total_parts``)."""
        return {"arena_bytes": self.arena_bytes, "xnnpack_bytes": self.xnnpack_bytes,
                "interpreter_bytes": self.interpreter_bytes, "weights_mapped_bytes": self.weights_mapped_bytes}


def runtime_total(memory: Any) -> RuntimeTotal | None:
    """The default runtime's memory (None when the report has no XNNPACK-on figures)."""
    on = None if memory is None else memory.runtime_xnnpack
    if on is None or memory is None:
        return None
    arena = on.arena_bytes + on.persistent_arena_bytes
    xnnpack = on.delegate_bytes or 0
    own = getattr(memory, "interpreter_bytes", None) or 0
    return RuntimeTotal(on.threads, arena, xnnpack, memory.weights_bytes,
                        arena + xnnpack + own + memory.weights_bytes, own)


def _float_op(precision: str) -> bool:
    return any(precision.startswith(p) or f"+{p}" in precision for p in _FLOAT_PRECISIONS)


def _float_op_types(report: Any) -> list[str]:
    """The op types that compute in floating point per inference, sorted (each precision tested once)."""
    counted = {(o.op_type, o.precision) for o in report.ops if o.phase == "inference" and o.flops}
    return sorted({kind for kind, precision in counted if _float_op(precision)})


def target_class(report: Any) -> tuple[str, str]:
    """(``"mcu"`` or ``"phone"``, why): the runtime the model is built for (the rule of the module docstring)."""
    memory = report.memory
    floats = _float_op_types(report)
    if floats:
        return PHONE, f"float ops ({', '.join(floats[:3])}{' …' if len(floats) > 3 else ''})"
    named = (report.settings or {}).get("cpu_target")  # a CPU the user named (--target, a device profile's)
    if isinstance(named, str) and named.startswith("arm-"):  # issue 45: a phone core named is a phone model
        return PHONE, f"the CPU named ({named}) is a phone's"
    if memory is None:
        return PHONE, "no memory plan"
    if memory.weights_bytes > MCU_MAX_WEIGHTS:
        return PHONE, f"weights over {MCU_MAX_WEIGHTS >> 20} MiB"
    arena = memory.tflm_arena_size_bytes if memory.tflm_arena_size_bytes is not None else memory.tflm_arena_bytes
    if arena > MCU_MAX_ARENA:
        return PHONE, f"TFLite Micro arena over {MCU_MAX_ARENA >> 10} KiB"
    return MCU, (f"integer ops only, weights within {MCU_MAX_WEIGHTS >> 20} MiB and TFLite Micro arena "
                 f"within {MCU_MAX_ARENA >> 10} KiB")


def memory_json(report: Any) -> dict[str, Any]:
    """The memory keys the JSON adds to ``memory``: the default runtime's total and parts, the target class."""
    total = runtime_total(report.memory)
    cls, why = target_class(report)
    out: dict[str, Any] = {"runtime_total_bytes": None if total is None else total.total_bytes,
                           "runtime_total_parts": None if total is None else total.parts(),
                           "runtime_total_threads": None if total is None else total.threads,
                           "target_class": cls, "target_class_reason": why}
    return out


DERIVED_KEYS = ("runtime_total_bytes", "runtime_total_parts", "runtime_total_threads", "target_class",
                "target_class_reason")
