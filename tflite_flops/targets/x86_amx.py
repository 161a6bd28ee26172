"""x86-64 with AMX (Intel Sapphire Rapids and later): AVX-512 with the AMX tile unit.

XNNPACK enables its avx512amx kernels when cpuinfo reports ``amx_int8`` on top of AVX-512 VNNI and GFNI (and
the kernel grants the tile state): qs8 convolutions and fully connected ops use 16x64c4 (``mr`` 16,
``nr`` 64, ``kr`` 4), and the dynamically quantized ones stay signed (qd8, 16x64c4: ``convert_gemm_to_qduint8``
keeps qd8 when its config's arch, avx512amx, ranks above qdu8's avx512vnni). Float and depthwise kernels
are x86-avx512's. The rest is x86-avx512's measurement.
"""

from .x86_avx512 import TARGET as AVX512

TARGET = AVX512.with_(
    name="x86-amx", isa="x86-64 AVX-512 with AMX (amx_tile, amx_int8)",
    cpus="Intel Sapphire Rapids, Emerald Rapids, Granite Rapids",
    int8_rows=16, int8_tile=64, int8_kr=4, hybrid_rows=16, hybrid_tile=64, hybrid_kr=4, hybrid_gemm_tile=64,
    measured=(),
    sources={
        **AVX512.sources,
        "gemm": "from source, checked on two samples of the issue: XNNPACK gemm-config.c, qs8_qc8w and "
                "qd8_f32_qc8w 16x64c4__avx512amx (cnn_int8 traced 122,472 B, cnn_dynamic_range 161,832 B)",
        "packing": "from source, checked on two samples of the issue: the qs8 packing at nr 64, kr 4",
        "workspace": "as x86-avx512 (same x86-64 build constants)",
        "structures": "as x86-avx512 (same x86-64 build)",
        "builtin": "as x86-avx512 (same x86-64 build)",
    },
)
