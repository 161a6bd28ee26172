"""What the CPU's kernels do with an op's weights, for the latency laws' features (``features.op_features``):
the output-channel tile they compute in, whether they take XNNPACK's narrower ``nr2`` kernel, and which of
the weights a cache level cannot hold. Pure arithmetic on the CPU targets (:mod:`tflite_flops.targets`) and
an op's record."""

from __future__ import annotations

from typing import Any

from ..ops.facts import CONV, DEPTHWISE, FULLY_CONNECTED, TRANSPOSED_CONV, xnnpack_facts

# XNNPACK's f32 convolution microkernels compute output channels in tiles (16 on x86 with AVX2/AVX-512;
# 8 on most Arm cores): timed here, a 3x3 CONV_2D on 8x8x16 takes 3.2 us for 4, 8 or 16 output channels
# and 6.3 us for 24 or 32. ``tiled_macs`` counts the MACs of the padded tile; the fit weighs it against
# ``macs`` (a machine whose tile is narrower, or a kernel that does not pad, leans on ``macs``). The tile is
# the CPU target's ``law_tile`` (:func:`law_tile`); CHANNEL_TILE is x86-avx512's, that of a profile without a target.
CHANNEL_TILE = 16

# Bytes a weight element takes where the kernels read it, by the op's precision: float16 weights are dequantized
# at preparation and read as float32; every other precision reads 8-bit weights (int8, hybrid, 16x8).
WEIGHT_BYTES = {"float32": 4, "float16": 4}


def cpu_target(target: str | None) -> Any:
    """The CPU target named ``target`` (a profile's ``machine.target``), None for "" or an unknown name."""
    from .. import targets

    return targets.targets().get(target or "")


def law_tile(target: str | None) -> int:
    """The output-channel tile of ``tiled_macs`` on CPU target ``target`` (a profile's ``machine.target``;
    "" or an unknown name: CHANNEL_TILE, what the profiles of earlier versions were fitted with)."""
    found = cpu_target(target)
    return found.law_tile if found is not None else CHANNEL_TILE


# The precisions whose XNNPACK convolutions pad each tap's input channels to the GEMM kernel's depth ``kr``, and the
# CPU target's field that holds it (int8: qs8, hybrid: qd8; float kernels take the channels one by one).
PADDED_DEPTH = {"int8": "int8_kr", "hybrid": "hybrid_kr"}


def input_depth(cpu: Any, precision: str) -> int:
    """The input channels per tap XNNPACK's convolution kernel of ``precision`` reads at a time on CPU target ``cpu``
    (its ``kr``; 1 for the float kernels and without a target). Timed here (x86-avx512, kr 8): an int8 or
    dynamically quantized 3x3 CONV_2D of 64x64 outputs and 32 output channels takes 29.7 us for 1 to 8 input
    channels and 45.7 for 9 to 16; float32 grows by the channel (15.6, 23.2, 31.7 us for 1, 2, 3)."""
    name = PADDED_DEPTH.get(precision)
    return max(int(getattr(cpu, name, 1) or 1), 1) if name and cpu is not None else 1


def runs_as_fully_connected(record: Any, precision: str) -> bool:
    """Whether XNNPACK's delegate runs ``record`` as a fully connected op: a dynamically quantized pointwise
    convolution (a 1x1 filter, the input's height and width kept: stride 1), every output pixel a row of its qd8
    GEMM, each row's input quantized with parameters of its own. The shape form of the memory pass's rule
    (``analysis.xnnpack_memory``, which reads the options). Its law is the fully connected one
    (``features.conv_kernel``): timed here (x86-avx512), such a layer of 16 channels takes ~16 ns a pixel, where
    the qd8 convolutions of more taps (their IGEMM, one set of parameters for the tensor) take ~5."""
    inputs, outputs = getattr(record, "inputs", ()) or (), getattr(record, "outputs", ()) or ()
    if precision != "hybrid" or len(inputs) < 2 or not outputs:
        return False
    x, w, y = tuple(inputs[0]), tuple(inputs[1]), tuple(outputs[0])
    return len(w) == 4 and w[1] == w[2] == 1 and len(x) == len(y) == 4 and x[1:3] == y[1:3]


def single_row_pointwise(record: Any) -> bool:
    """Whether ``record`` is a pointwise convolution (a 1x1 filter) with one output pixel (a squeeze-and-excite
    block's, after a global pool): XNNPACK's GEMM runs it by its one-row kernel (:func:`gemm_rows`), reading each
    weight once, as a fully connected layer of one row."""
    inputs, outputs = getattr(record, "inputs", ()) or (), getattr(record, "outputs", ()) or ()
    if len(inputs) < 2 or not outputs:
        return False
    w, y = tuple(inputs[1]), tuple(outputs[0])
    return len(w) == 4 and w[1] == w[2] == 1 and len(y) == 4 and int(y[0]) * int(y[1]) * int(y[2]) == 1


def leaves_qd8_state(record: Any, cpu: Any) -> bool:
    """Whether a dynamically quantized op on XNNPACK runs by the qd8 GEMM kernel, which leaves behind the state that
    the SSE-only kernels after it pay for (``profile.AFTER_QD8_PLACEMENTS``): a fully connected op (weights packed
    as one) or a pointwise convolution (:func:`runs_as_fully_connected`), not a convolution of more taps, run by
    the qd8 IGEMM kernel. Timed here (x86-avx512): the builtin hybrid 3x3 depthwise on 25x25x64 takes 58.5 us alone, 167 after a
    qd8 FULLY_CONNECTED or 1x1 convolution, 59 after a qd8 3x3 convolution of 1, 3 or 16 input channels (the
    keyword spotter's 10x4 first layer: its first depthwise ran at 97 us in the model, the later ones at 280);
    f32 max pool 5.1, 11.4-12.4 and 5.5-6.0 us. Without a CPU target, every dynamically quantized op."""
    if getattr(record, "precision", "") != "hybrid":
        return False
    if cpu is None:
        return True
    return xnnpack_facts(record.op_type).weights != CONV or runs_as_fully_connected(record, "hybrid")


def deconv_data(inputs: Any) -> tuple | None:
    """The data input's shape of a transposed convolution whose inputs have shapes ``inputs``: the first 4-D one
    that is not the filter (input 1): TRANSPOSE_CONV's input 2, MediaPipe's custom deconvolution's input 0."""
    return next((tuple(s) for i, s in enumerate(inputs) if i != 1 and len(s) == 4), None)


def deconv_subconv(record: Any) -> bool:
    """Whether XNNPACK runs the transposed convolution ``record`` (its [Cout, kh, kw, Cin] filter input 1, its data
    the other 4-D input; its stride read from the input and output shapes) by sub-convolutions, one GEMM per output
    phase: a stride above 1 and at most the kernel's size (src/operators/deconvolution-nhwc.c, ``is_subconv2d``).
    Otherwise it runs its IGEMM kernel over every output pixel, as a convolution: timed here (x86-avx512,
    float32, 16x16x16 -> 16 channels, 3x3), 6.4 us at stride 1, where the sub-convolutions' law said 11."""
    inputs, outputs = getattr(record, "inputs", ()) or (), getattr(record, "outputs", ()) or ()
    x = deconv_data(inputs)
    if len(inputs) < 2 or x is None or not outputs or len(inputs[1]) != 4 or len(outputs[0]) != 4:
        return True
    w, y = inputs[1], outputs[0]
    if min(int(x[1]), int(x[2])) <= 0:
        return True
    sh, sw = max(int(y[1]) // int(x[1]), 1), max(int(y[2]) // int(x[2]), 1)
    return max(sh, sw) > 1 and sh <= int(w[1]) and sw <= int(w[2])


def deconv_channels(family: str, cout: int, precision: str, cpu: Any) -> int:
    """The output channels XNNPACK's transposed convolution (``family``: the law's op type, its weights packed as a
    transposed filter) computes for ``cout`` on CPU target ``cpu``: its GEMM passes times the kernel's tile (0 for
    other ops, other precisions, or without a target). It runs one GEMM per output phase (sub-convolution),
    each in passes of ``nr`` output channels (``float_tile``/``int8_tile``), or of the narrower ``nr2``
    (``float_nr2_tile``) when ``cout`` is below ``nr``; on x86 a pass of the narrow kernel takes about as long as a
    full one. Timed here (x86-avx512, float32, 8x8x24 -> 16x16, 3x3, stride 2): 8 / 16 / 24 / 32 / 48 / 64
    output channels take 9.2 / 9.1 / 16.3 / 9.8 / 17.6 / 17.6 us (1 / 1 / 2 / 1 / 2 / 2 passes); int8 steps by 16
    (2.9 / 3.0 / 4.1 / 4.1 / 5.3 / 6.5 us), dynamic range (qd8) by its hybrid tile. The old law, on MACs alone, was
    12% off at its own points."""
    if cpu is None or cout <= 0 or xnnpack_facts(family).weights != TRANSPOSED_CONV:
        return 0
    if precision in WEIGHT_BYTES:
        nr = int(cpu.float_tile)
        step = nr if cout >= nr else int(cpu.float_nr2_tile) or nr
        return -(-cout // step) * nr
    tile = int(cpu.int8_tile) if precision in ("int8", "uint8") else \
        int(cpu.hybrid_tile) if precision == "hybrid" else 0
    return -(-cout // tile) * tile if tile > 0 else 0


def weights_past(params: int, precision: str, capacity: int) -> float:
    """The weight elements of an op that do not fit in ``capacity`` bytes (0 when the capacity is unknown)."""
    if capacity <= 0:
        return 0.0
    return float(max(params - capacity // WEIGHT_BYTES.get(precision, 1), 0))


def activations_past(elements: int, precision: str, capacity: int) -> float:
    """Of ``elements`` activation elements an op reads and writes, those that do not fit in ``capacity`` bytes (0
    when unknown), at the precision's bytes (4 in float32, 1 in 8-bit). Timed here (x86-avx512, 1 MiB L2), a
    float32 MUL of two [1,28,28,64] takes 0.065 ns per element, of two [1,112,112,32] (4.8 MB in all) 0.17."""
    if capacity <= 0:
        return 0.0
    size = WEIGHT_BYTES.get(precision, 1)
    return float(max(elements - capacity // size, 0))


def narrow_kernel(record: Any, family: str, cpu: Any) -> bool:
    """Whether XNNPACK runs ``record``'s float weights, packed as a fully connected op's (``family``: the law's
    op type), by ``cpu``'s narrower ``nr2`` GEMM kernel (:meth:`~tflite_flops.targets.CpuTarget.float_fc_tile`;
    False without a CPU target). A pointwise convolution the fully connected law predicts (one pixel,
    :func:`single_row_pointwise`) keeps the convolution's rule, ``nr2`` below ``float_tile`` channels only: a
    classifier's 1x1 head of 1,000 channels runs the 32-wide kernel."""
    outputs = getattr(record, "outputs", ()) or ()
    if cpu is None or getattr(record, "precision", "") not in WEIGHT_BYTES \
            or xnnpack_facts(family).weights != FULLY_CONNECTED or not outputs or not outputs[0]:
        return False
    channels = int(outputs[0][-1])
    if xnnpack_facts(record.op_type).weights == CONV:  # a pointwise convolution: the convolution's rule
        return 0 < channels < cpu.float_tile
    return channels > 0 and cpu.float_nr2_tile != cpu.float_gemm_tile and \
        cpu.float_fc_tile(channels) == cpu.float_nr2_tile


def cache_shares(cpu: Any) -> tuple[float, float]:
    """(``law_l1_share``, ``law_llc_share``) of CPU target ``cpu``: the latency laws' cache knees, as shares of
    the L1d and the L3 (:class:`~tflite_flops.targets.CpuTarget`; its defaults without a target)."""
    from ..targets import CpuTarget

    return (getattr(cpu, "law_l1_share", CpuTarget.law_l1_share),
            getattr(cpu, "law_llc_share", CpuTarget.law_llc_share))


def llc_capacity(caches: Any, cpu: Any = None) -> int:
    """The bytes of the L3 (``caches["L3"]``, 0 when unknown) an op's weights may take without streaming: the CPU
    target's share of it (:func:`cache_shares`)."""
    return int(int((caches or {}).get("L3", 0) or 0) * cache_shares(cpu)[1])


def depthwise_past_l1(family: str, geometry: Any, precision: str, caches: Any, cpu: Any = None) -> bool:
    """Whether a depthwise convolution (``family``: the law's op type, its weights packed as a depthwise
    filter; ``geometry``: (groups, input and output channels per group, taps), ``features.conv_geometry``) has
    more weights than the CPU target's share of the L1d holds (``caches["L1d"]``, :func:`cache_shares`; False when
    unknown). Its kernel reads all of them
    for every output pixel, channel tile after channel tile: timed here (x86-avx512, float32, 48 KiB L1d),
    20-21 GMAC/s past 24 KiB of weights (5x5 with 288 channels and more, 3x3 with 960), 35-47 below (5x5 with
    144 to 240 channels), at every size from 10x10 to 28x28."""
    l1 = int((caches or {}).get("L1d", 0) or 0)
    if l1 <= 0 or geometry is None or xnnpack_facts(family).weights != DEPTHWISE:
        return False
    groups, _, per_group, taps = geometry
    return groups * per_group * taps * WEIGHT_BYTES.get(precision, 1) > l1 * cache_shares(cpu)[0]


def depthwise_remainder(family: str, geometry: Any, precision: str, cpu: Any) -> bool:
    """Whether XNNPACK's depthwise kernel runs a convolution (``family``: the law's op type, its weights packed as
    a depthwise filter; ``geometry``: ``features.conv_geometry``) over output channels that are not a multiple of
    ``cpu``'s depthwise channel tile for ``precision`` (float: ``float_depthwise_tile``, int8:
    ``int8_depthwise_tile``; False without a target). The last, partial tile costs more than a whole one: timed
    here (x86-avx512, float32, tile 16, 32x32 outputs, 5x5), 16 / 24 / 32 / 40 / 48 channels take 20.8 / 35.7 /
    25.7 / 44.3 / 34.4 us; BlazeFace's 24-channel 5x5 layers ran at 0.42 of a law that had only seen multiples."""
    if cpu is None or geometry is None or xnnpack_facts(family).weights != DEPTHWISE:
        return False
    tile = cpu.float_depthwise_tile if precision in WEIGHT_BYTES else \
        cpu.int8_depthwise_tile if precision in ("int8", "uint8") else 0
    groups, _, per_group, _ = geometry
    return tile > 0 and (groups * per_group) % tile != 0


def innermost_rows(outputs: Any) -> float:
    """The rows of the first of ``outputs`` (shapes): its elements over its last dim; 0 without one."""
    if not outputs or not outputs[0]:
        return 0.0
    rows = 1
    for d in tuple(outputs[0])[:-1]:
        rows *= max(int(d), 0)
    return float(rows)


def _ceil(n: int, step: int) -> int:
    return -(-n // max(step, 1))


def gemm_rows(pixels: int, mr: int, nr: int) -> int:
    """The rows per tile XNNPACK's GEMM and IGEMM kernels take for ``pixels`` output rows, when the widest kernel has
    ``mr`` rows of ``nr`` channels and the only other is the one-row kernel (``xnn_get_heuristic_mr_gemm`` and
    ``_igemm``, microkernel-utils.c, which estimate a kernel's cost as tiles x (3 (mr + nr) + mr nr)): 1 for a
    single row or two (a squeeze-and-excite block's pointwise layers), ``mr`` from three rows up."""
    if pixels <= 1 or mr <= 1:
        return 1
    one, wide = pixels * (3 * (1 + nr) + nr), _ceil(pixels, mr) * (3 * (mr + nr) + mr * nr)
    return mr if wide <= one else 1


def gemm_tiles(family: str, geometry: Any, pixels: int, precision: str, cpu: Any) -> tuple[float, float, float]:
    """(``gemm_macs``, ``tile_taps``, ``narrow_macs``) of a convolution run by XNNPACK's GEMM or IGEMM kernel
    (``family``: the law's op type, its weights packed as a convolution's; ``geometry``:
    ``features.conv_geometry``; ``pixels``: its output pixels) on CPU target ``cpu``:

    * ``gemm_macs``: the multiply-adds its microkernel computes: output pixels rounded up to the kernel's rows
      (:func:`gemm_rows`), each group's output channels to its tile ``nr`` (f32: ``float_tile``, or the ``nr2``
      kernel's ``float_nr2_tile`` below it), each tap's input channels to its depth ``kr`` (:func:`input_depth`);
    * ``tile_taps``: the microkernel's tap iterations, row tiles x channel passes x taps, per group;
    * ``narrow_macs``: ``gemm_macs`` when the f32 ``nr2`` kernel runs it, else 0.

    Timed here (x86-avx512, float32, a 1x1 convolution of 28x28x64): 16 / 24 / 32 / 40 / 48 / 64 / 72 / 96 output
    channels take 8.1 / 15.6 / 12.8 / 23.0 / 23.0 / 25.3 / 38.4 / 37.2 us: the cost steps by 32 channels from 32 up,
    and the 16-wide ``nr2`` kernel costs 1.2x as much per multiply-add it computes. (0, 0, 0) for other ops,
    precisions and without a target."""
    if cpu is None or geometry is None or pixels <= 0 or xnnpack_facts(family).weights != CONV:
        return 0.0, 0.0, 0.0
    groups, cin, cout, taps = geometry
    narrow = False
    if precision in WEIGHT_BYTES:
        narrow = cout < cpu.float_tile
        mr, nr = (cpu.float_nr2_rows, cpu.float_nr2_tile) if narrow else (cpu.float_rows, cpu.float_tile)
    elif precision in ("int8", "uint8"):
        mr, nr = cpu.int8_rows, cpu.int8_tile
    elif precision == "hybrid":
        mr, nr = cpu.hybrid_rows, cpu.hybrid_tile
    else:
        return 0.0, 0.0, 0.0
    mr = gemm_rows(pixels, mr, nr)
    rows, passes, kr = _ceil(pixels, mr), _ceil(cout, nr), input_depth(cpu, precision)
    slots = float(groups * rows * mr * passes * nr * taps * _ceil(cin, kr) * kr)
    return slots, float(groups * rows * passes * taps), slots if narrow else 0.0
