"""AArch64 with the int8 matrix multiply (i8mm: Armv8.6 / Armv9: Cortex-A510, A710, X2 and later, Neoverse V2).

From XNNPACK's ``gemm-config.c`` (2026-08), then measured under qemu-user: qs8 and dynamically quantized (qd8) 4x16c8
(neoni8mm); the rest as arm-dotprod-fp16.
"""

from .arm_dotprod_fp16 import TARGET as DOTPROD

_LAB = ("measured under qemu-user (-cpu max, SVE and SME off): ai-edge-litert 2.3.0's aarch64 wheel, 247 one-op "
        "models and every sample traced (benchmarks/targets_lab.py, benchmarks/targets_measured.json)")

TARGET = DOTPROD.with_(
    name="arm-i8mm", isa="AArch64 NEON + dot product + fp16 + i8mm (Armv8.6 / Armv9)",
    cpus="Cortex-A510, A710, A715, X2 and later, Neoverse V2, Apple M2 and later",
    int8_kr=8, hybrid_kr=8,
    sources={
        **{k: v.replace("-cpu cortex-a76", "-cpu max") for k, v in DOTPROD.sources.items()},
        "gemm": f"{_LAB}: qs8_qc8w and qd8_f32_qc8w 4x16c8 neoni8mm (gemm-config.c); f32 6x8; qs8 depthwise 16, "
                "f32 8 channels; a dynamically quantized fully connected op's tile 4",
    },
)
