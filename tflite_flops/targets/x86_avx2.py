"""x86-64 with AVX2 and FMA3, without AVX-512 (Intel Haswell to Alder Lake, AMD Zen 1 to Zen 3).

From XNNPACK's ``gemm-config.c`` and ``dwconv-config.c`` (2026-08), then measured under qemu-user
(``qemu-x86_64 -cpu Haswell``, ``benchmarks/targets_lab.py``): f32 convolutions 5x16 (10x8 below 16 output
channels, the ``nr2`` kernels; fully connected ones pick 8 whenever it pads less; AMD Zen 1 picks 4x16s4, not
measured), qs8 3x8c8 (avx2), dynamically quantized convolutions and fully connected ops 4x8c8 (qd8 avx2: the
unsigned qdu8 kernels need AVX-VNNI), qs8 depthwise 16 channels, f32 depthwise 16. A CPU with AVX-VNNI (Alder
Lake and later) picks 5x8c8 for qs8 and qdu8 (not measured: qemu 7.2 does not emulate AVX-VNNI). Structures:
x86-avx512's (the same x86-64 build), as measured.
"""

from .x86_avx512 import TARGET as AVX512

_LAB = ("measured under qemu-user (-cpu Haswell): ai-edge-litert 2.3.0 x86-64, the host-dependent tests run on the "
        "emulated CPU (benchmarks/targets_lab.py host-suite x86-avx2: 247 one-op models and every sample traced)")

TARGET = AVX512.with_(
    name="x86-avx2", isa="x86-64 AVX2 + FMA3",
    cpus="Intel Haswell to Alder Lake, AMD Zen 1 to Zen 3",
    float_rows=5, float_tile=16, float_nr2_rows=10, float_nr2_tile=8, float_gemm_tile=16, float_depthwise_tile=16,
    float_operand_tile=16, law_tile=16,
    int8_rows=3, int8_tile=8, int8_kr=8, int8_depthwise_tile=16, int8_operand_tile=8,
    hybrid_rows=4, hybrid_tile=8, hybrid_kr=8, hybrid_gemm_tile=8,
    measured=("gemm", "packing", "workspace", "structures", "builtin"),
    sources={
        "gemm": f"{_LAB}: f32 5x16 (nr2 10x8) fma3, qs8_qc8w 3x8c8 avx2, qd8_f32_qc8w 4x8c8 avx2, qs8 depthwise 16, "
                "f32 16 channels, as XNNPACK's gemm-config.c and dwconv-config.c say (the indirection buffers "
                "to the byte)",
        "packing": f"{_LAB}: the packing of the kernels above, every packed filter to the byte (f32 convolutions "
                   "of 24 to 1000 channels too)",
        "workspace": f"{_LAB}: XNN_ALLOCATION_ALIGNMENT 64, slack as x86-avx512 (xnn_plan_memory's workspace)",
        "structures": f"{_LAB}: x86-avx512's sizes (the same x86-64 build); XNNPACK's bytes within 10% of the "
                      "traced ones on every sample",
        "builtin": f"{_LAB}: LiteRT's arenas read from the interpreter, XNNPACK off and on, at 1 and 4 threads, "
                   "x86-avx512's to the byte (the builtin kernels' heap is not modelled)",
    },
)
