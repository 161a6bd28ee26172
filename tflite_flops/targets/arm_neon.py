"""AArch64 with NEON only (Cortex-A53, Cortex-A55 class: no dot product, no fp16 arithmetic).

From XNNPACK's ``gemm-config.c`` and ``dwconv-config.c`` (2026-08), not yet measured: f32 convolutions 6x8
(the Cortex-A53 assembly kernels), qs8 and dynamically quantized (qd8) 4x16 with ``kr`` 1 (the Cortex-A53
mlal-lane kernels), qs8 depthwise 16 channels, f32 depthwise 8; XNN_ALLOCATION_ALIGNMENT 16. Structures:
x86-avx512's (a 64-bit build of the same sources); the emulation lab's measurements replace these.
"""

from .x86_avx512 import TARGET as AVX512

_SOURCE = "from XNNPACK source, not yet measured"

TARGET = AVX512.with_(
    name="arm-neon", isa="AArch64 NEON (Armv8.0)",
    cpus="Cortex-A53, Cortex-A55 (Raspberry Pi 3/4 class, little cores)",
    float_rows=6, float_tile=8, float_nr2_rows=4, float_nr2_tile=2, float_gemm_tile=8, float_depthwise_tile=8,
    float_operand_tile=8, law_tile=8,
    int8_rows=4, int8_tile=16, int8_kr=1, int8_depthwise_tile=16, int8_operand_tile=16,
    hybrid_rows=4, hybrid_tile=16, hybrid_kr=1, hybrid_gemm_tile=16,
    alignment=16,
    builtin_heap="measured under emulation on float MobileNetV2: about 3 MB more heap outside the arena "
                 "than on x86 (not yet in the figures)",
    measured=(),
    sources={
        "gemm": f"{_SOURCE}: gemm-config.c f32 6x8 (cortex_a53), qs8_qc8w and qd8_f32_qc8w 4x16 (cortex_a53); "
                "dwconv-config.c qs8 16, f32 8 channels",
        "packing": f"{_SOURCE}: the packing of the kernels above",
        "workspace": f"{_SOURCE}: XNN_ALLOCATION_ALIGNMENT 16 on Arm; slack as x86-avx512",
        "structures": "as x86-avx512 (a 64-bit build), not yet measured",
        "builtin": "issue 30's measurement under qemu-user (MobileNetV2 float), not modelled",
    },
)
