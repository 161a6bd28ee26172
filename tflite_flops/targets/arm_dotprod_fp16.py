"""AArch64 with the dot product and fp16 arithmetic (Armv8.2: Cortex-A76, A77, A78, X1, Neoverse N1).

From XNNPACK's ``gemm-config.c`` and ``dwconv-config.c`` (2026-08), not yet measured: f32 convolutions 6x8,
qs8 and dynamically quantized (qd8) 4x16c4 (neondot), qs8 depthwise 16 channels, f32 depthwise 8;
XNN_ALLOCATION_ALIGNMENT 16. Structures: x86-avx512's (a 64-bit build of the same sources).
"""

from .arm_neon import TARGET as NEON

_SOURCE = "from XNNPACK source, not yet measured"

TARGET = NEON.with_(
    name="arm-dotprod-fp16", isa="AArch64 NEON + dot product + fp16 (Armv8.2)",
    cpus="Cortex-A76, A77, A78, X1, Neoverse N1 (most phones' big cores since 2019)",
    int8_rows=4, int8_tile=16, int8_kr=4, hybrid_rows=4, hybrid_tile=16, hybrid_kr=4, hybrid_gemm_tile=16,
    sources={
        **NEON.sources,
        "gemm": f"{_SOURCE}: gemm-config.c f32 6x8 (cortex_a76), qs8_qc8w and qd8_f32_qc8w 4x16c4 neondot; "
                "dwconv-config.c qs8 16, f32 8 channels",
    },
)
