"""AArch64 with NEON only (Cortex-A53, Cortex-A55 class: no dot product, no fp16 arithmetic).

From XNNPACK's ``gemm-config.c`` and ``dwconv-config.c`` (2026-08), then measured under qemu-user
(``benchmarks/targets_lab.py``): f32 convolutions 6x8
(the Cortex-A53 assembly kernels), qs8 and dynamically quantized (qd8) 4x16 with ``kr`` 1 (the Cortex-A53
mlal-lane kernels), qs8 depthwise 16 channels, f32 depthwise 8; XNN_ALLOCATION_ALIGNMENT 16; fp16 filters keep their float32 copy. Structures:
x86-avx512's (a 64-bit build of the same sources) and 1,276 bytes more per GEMM-family operator.
"""

from .x86_avx512 import TARGET as AVX512

_LAB = ("measured under qemu-user (-cpu cortex-a53): ai-edge-litert 2.3.0's aarch64 wheel, 247 one-op models and "
        "every sample traced (benchmarks/targets_lab.py, benchmarks/targets_measured.json)")

TARGET = AVX512.with_(
    name="arm-neon", isa="AArch64 NEON (Armv8.0)",
    cpus="Cortex-A53, Cortex-A55 (Raspberry Pi 3/4 class, little cores)",
    float_rows=6, float_tile=8, float_nr2_rows=4, float_nr2_tile=2, float_gemm_tile=8, float_depthwise_tile=8,
    float_operand_tile=8, law_tile=8,
    int8_rows=4, int8_tile=16, int8_kr=1, int8_depthwise_tile=16, int8_operand_tile=16,
    hybrid_rows=4, hybrid_tile=16, hybrid_kr=1, hybrid_gemm_tile=16,
    alignment=16, gemm_operator_extra=1_276, fp16_packed_from_file=False, builtin_threaded_kernels=False,
    builtin_heap="measured under emulation on float MobileNetV2: about 3 MB more heap outside the arena "
                 "than on x86 (not yet in the figures)",
    measured=("gemm", "packing", "workspace", "structures"),
    sources={
        "gemm": f"{_LAB}: f32 6x8 (nr2 x2), qs8_qc8w and qd8_f32_qc8w 4x16 kr 1, qs8 depthwise 16, f32 8 "
                "channels, as XNNPACK's gemm-config.c (cortex_a53) and dwconv-config.c say",
        "packing": f"{_LAB}: the packing of the kernels above; fp16 filters keep their unpacked float32 copy "
                   "(no fp16 conversion on Armv8.0)",
        "workspace": f"{_LAB}: XNN_ALLOCATION_ALIGNMENT 16; slack as x86-avx512",
        "structures": f"{_LAB}: x86-avx512's sizes, plus 1,276 bytes per operator of a GEMM-family op",
        "builtin": "issue 30's measurement under qemu-user (MobileNetV2 float), not modelled",
    },
)
