"""AArch64 with the dot product and fp16 arithmetic (Armv8.2: Cortex-A76, A77, A78, X1, Neoverse N1).

From XNNPACK's ``gemm-config.c`` and ``dwconv-config.c`` (2026-08), then measured under qemu-user: f32 convolutions 6x8,
qs8 and dynamically quantized (qd8) 4x16c4 (neondot), qs8 depthwise 16 channels, f32 depthwise 8;
XNN_ALLOCATION_ALIGNMENT 16. Structures: x86-avx512's (a 64-bit build of the same sources).
"""

from .arm_neon import TARGET as NEON

_LAB = ("measured under qemu-user (-cpu cortex-a76): ai-edge-litert 2.3.0's aarch64 wheel, 247 one-op models and "
        "every sample traced (benchmarks/targets_lab.py, benchmarks/targets_measured.json)")

TARGET = NEON.with_(
    name="arm-dotprod-fp16", isa="AArch64 NEON + dot product + fp16 (Armv8.2)",
    cpus="Cortex-A76, A77, A78, X1, Neoverse N1 (most phones' big cores since 2019)",
    int8_rows=4, int8_tile=16, int8_kr=4, hybrid_rows=4, hybrid_tile=16, hybrid_kr=4, hybrid_gemm_tile=4,
    fp16_packed_from_file=True,
    sources={
        **{k: v.replace("cortex-a53", "cortex-a76") for k, v in NEON.sources.items()},
        "gemm": f"{_LAB}: f32 6x8, qs8_qc8w and qd8_f32_qc8w 4x16c4 neondot, qs8 depthwise 16, f32 8 channels "
                "(gemm-config.c, cortex_a76); a dynamically quantized fully connected op's tile 4 (11 of 13 "
                "exact: the others' inputs look padded to 32)",
        "packing": f"{_LAB}: the packing of the kernels above; fp16 filters packed from the file",
    },
)
