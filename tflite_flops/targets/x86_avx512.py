"""x86-64 with AVX-512 (F, BW, DQ, VL) and VNNI: the target whose constants were read off the runtime first.

Read off ai-edge-litert 2.3.0 (XNNPACK of 2026-08) with the allocation tracer (tests/malloc_trace.c) on the
calibration suite's one-op models and the samples, and checked against XNNPACK's ``gemm-config.c``: f32
convolutions 7x32 (7x16 below 32 output channels, the ``nr2`` kernels; fully connected ones pick 16 whenever
it pads less), qs8 7x16c8 (avx512vnni), dynamically quantized (qdu8) convolutions 10x16c8 and fully
connected ops 5x64c4 (avx512vnni), qs8 depthwise 32 channels, f32 depthwise 16.
"""

from . import CpuTarget

TARGET = CpuTarget(
    name="x86-avx512", isa="x86-64 AVX-512 (F, BW, DQ, VL, VNNI)",
    cpus="Intel Ice Lake / Cascade Lake and later without AMX, AMD Zen 4 and Zen 5",
    float_rows=7, float_tile=32, float_nr2_rows=7, float_nr2_tile=16, float_gemm_tile=32, float_depthwise_tile=16,
    float_operand_tile=32, law_tile=16,
    int8_rows=7, int8_tile=16, int8_kr=8, int8_depthwise_tile=32, int8_operand_tile=16,
    hybrid_rows=10, hybrid_tile=16, hybrid_kr=8, hybrid_gemm_tile=64,
    alignment=64, workspace_slack=32, unpacked_slack=128, pointer_bytes=8,
    runtime_bytes=96, opdata_bytes=240, value_bytes=160, partition_bytes=660, partition_tensor_bytes=24,
    delegate_bytes=1_720, threadpool_bytes=64, thread_bytes=448, thread_tls_bytes=368,
    builtin_heap="the reference: LiteRT's builtin kernels' heap outside the arena as measured on x86",
    measured=("gemm", "packing", "workspace", "structures", "builtin"),
    sources={
        "gemm": "measured: ai-edge-litert 2.3.0 on x86-64 AVX-512 (allocation tracer: indirection buffers, "
                "packed filters); matches XNNPACK gemm-config.c (f32 7x32/nr2 7x16, qs8 7x16c8, qdu8 10x16c8 "
                "and 5x64c4 avx512vnni)",
        "packing": "measured: the packed filters of the calibration suite's one-op models, and f32 convolutions "
                   "of 24 to 1000 channels (the 7x32 kernel, 7x16 below 32 channels), to the byte",
        "workspace": "measured: xnn_plan_memory's workspace (64-byte alignment, 32 bytes after the last value)",
        "structures": "measured: struct and operator sizes of ai-edge-litert 2.3.0 x86-64, allocation tracer",
        "builtin": "measured: LiteRT's arenas read from the interpreter (the builtin kernels' heap is not modelled)",
    },
)
