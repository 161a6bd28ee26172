"""x86-64 with AVX2 and FMA3, without AVX-512 (Intel Haswell to Alder Lake, AMD Zen 1 to Zen 3).

From XNNPACK's ``gemm-config.c`` and ``dwconv-config.c`` (2026-08), not yet measured: f32 convolutions 5x16
(fma3; AMD Zen 1 picks 4x16s4), qs8 3x8c8 (avx2), dynamically quantized convolutions and fully connected ops
4x8c8 (qd8 avx2: the unsigned qdu8 kernels need AVX-VNNI), qs8 depthwise 16 channels, f32 depthwise 16.
A CPU with AVX-VNNI (Alder Lake and later) picks 5x8c8 for qs8 and qdu8. Structures: x86-avx512's (same
x86-64 build).
"""

from .x86_avx512 import TARGET as AVX512

_SOURCE = "from XNNPACK source, not yet measured"

TARGET = AVX512.with_(
    name="x86-avx2", isa="x86-64 AVX2 + FMA3",
    cpus="Intel Haswell to Alder Lake, AMD Zen 1 to Zen 3",
    float_rows=5, float_tile=16, float_nr2_rows=10, float_nr2_tile=8, float_gemm_tile=16, float_depthwise_tile=16,
    float_operand_tile=16, law_tile=16,
    int8_rows=3, int8_tile=8, int8_kr=8, int8_depthwise_tile=16, int8_operand_tile=8,
    hybrid_rows=4, hybrid_tile=8, hybrid_kr=8, hybrid_gemm_tile=8,
    measured=(),
    sources={
        "gemm": f"{_SOURCE}: gemm-config.c f32 5x16 fma3, qs8_qc8w 3x8c8 avx2, qd8_f32_qc8w 4x8c8 avx2; "
                "dwconv-config.c qs8 16, f32 16 channels",
        "packing": f"{_SOURCE}: the packing of the kernels above",
        "workspace": f"{_SOURCE}: XNN_ALLOCATION_ALIGNMENT 64 on x86; slack as x86-avx512",
        "structures": "as x86-avx512 (same x86-64 build), not yet measured",
        "builtin": "as x86-avx512 (same x86-64 build), not yet measured",
    },
)
