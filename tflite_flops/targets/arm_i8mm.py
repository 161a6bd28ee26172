"""AArch64 with the int8 matrix multiply (i8mm: Armv8.6 / Armv9: Cortex-A510, A710, X2 and later, Neoverse V2).

From XNNPACK's ``gemm-config.c`` (2026-08), not yet measured: qs8 and dynamically quantized (qd8) 4x16c8
(neoni8mm); the rest as arm-dotprod-fp16.
"""

from .arm_dotprod_fp16 import TARGET as DOTPROD

_SOURCE = "from XNNPACK source, not yet measured"

TARGET = DOTPROD.with_(
    name="arm-i8mm", isa="AArch64 NEON + dot product + fp16 + i8mm (Armv8.6 / Armv9)",
    cpus="Cortex-A510, A710, A715, X2 and later, Neoverse V2, Apple M2 and later",
    int8_kr=8, hybrid_kr=8,
    sources={
        **DOTPROD.sources,
        "gemm": f"{_SOURCE}: gemm-config.c qs8_qc8w and qd8_f32_qc8w 4x16c8 neoni8mm; f32 6x8; "
                "dwconv-config.c qs8 16, f32 8 channels",
    },
)
