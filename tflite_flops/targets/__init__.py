"""CPU targets: what differs between the machines that run a model, as data.

A :class:`CpuTarget` holds the constants of one class of CPU that change a figure: the ISA class, the
XNNPACK microkernels it picks (GEMM rows ``mr`` and output-channel tiles ``nr`` per datatype, the input
channels' depth ``kr``, depthwise tiles), the allocation alignment and slack, the sizes of XNNPACK's and
the delegate's structures, and what LiteRT's builtin kernels keep outside the arena. Each group of
constants names where it came from (``sources``), and ``measured`` says whether they were read off the
real runtime on that CPU class or derived from XNNPACK's sources.

Each target is one module of this package that defines ``TARGET`` (a ``CpuTarget``): adding a target is
adding a module, nothing else (:func:`targets` finds them). ``host`` is not a module: it is the target of
this CPU, detected the way XNNPACK's cpuinfo does (:func:`detect`, :func:`host`).

A leaf: it imports nothing of the package but the errors, so that the settings and every layer may read it.
"""

from __future__ import annotations

import importlib
import pkgutil
import platform
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Mapping

from ..errors import InputSpecError

HOST = "host"
FALLBACK = "x86-avx512"  # the target of a CPU that matches none: the one whose constants were measured first

# the groups of constants a target's ``sources`` names
SOURCE_GROUPS = ("gemm", "packing", "workspace", "structures", "builtin")


@dataclass(frozen=True)
class CpuTarget:
    """One CPU class's constants (module docstring). Counts are bytes or elements, always ints.

    GEMM microkernels, per datatype (XNNPACK's ``gemm-config.c`` and ``dwconv-config.c``):

    * ``float_rows``, ``float_tile``: ``mr`` and ``nr`` of the f32 convolution (IGEMM) kernel: the
      indirection buffer's pixels are rounded up to the rows, the filter's output channels to the tile;
      ``float_nr2_rows``, ``float_nr2_tile``: those of the narrower ``nr2`` kernel XNNPACK takes for a
      convolution (or transposed one) of fewer output channels than ``float_tile``, and for a fully
      connected op (or pointwise convolution) when it pads less (``xnn_use_nr2``) than the f32 GEMM
      kernel's ``float_gemm_tile``; ``float_depthwise_tile``: the f32 depthwise kernel's channel tile;
      ``float_operand_tile``: the tile of a computed BATCH_MATMUL operand packed in the workspace;
      ``law_tile``: the output-channel tile of the latency law's ``tiled_macs`` (what a timed convolution's
      cost steps by);
    * ``int8_rows``, ``int8_tile``, ``int8_kr``: the qs8 kernel's ``mr``, ``nr`` and ``kr`` (an int8
      convolution's input channels per tap are padded to ``kr``); ``int8_depthwise_tile``: the qs8
      depthwise kernel's channel tile; ``int8_operand_tile``: a computed int8 BATCH_MATMUL operand's tile;
    * ``hybrid_rows``, ``hybrid_tile``, ``hybrid_kr``: the dynamically quantized (qd8/qdu8) convolution's
      ``mr``, ``nr``, ``kr``; ``hybrid_gemm_tile``: the ``nr`` of a dynamically quantized fully
      connected (or pointwise) op's GEMM kernel.

    ``depthwise_min_taps``: the taps of the smallest depthwise kernel (``dwconv-config.c``: 3p, 4p, 9p, 25p),
    which a filter of fewer taps is packed as (a 1x1 depthwise filter as 3 taps: read off the tracer on x86-avx512
    and, emulated, x86-avx2; the other targets take it until measured).

    Allocation: ``alignment`` (XNN_ALLOCATION_ALIGNMENT), ``workspace_slack`` (bytes after the
    workspace's last value), ``unpacked_slack`` (after the float32 copy of weights XNNPACK unpacks),
    ``pointer_bytes``.

    Structures, in bytes: ``runtime_bytes`` (per partition), ``opdata_bytes`` (per node),
    ``value_bytes`` (per value), ``partition_bytes`` and ``partition_tensor_bytes`` (the delegate's
    subgraph object, per tensor it defines), ``delegate_bytes`` (once), ``threadpool_bytes``,
    ``thread_bytes``, ``thread_tls_bytes`` (above one thread). The op types' operator sizes (their
    records' ``XnnpackFacts.operator_bytes``, read on x86-avx512) are taken as they are on every target,
    plus ``gemm_operator_extra`` per operator of an op with weights or a packed operand (convolutions,
    fully connected, batch matmul: 1,276 bytes more on Arm, measured under emulation).
    ``fp16_packed_from_file``: whether XNNPACK packs fp16 filters straight from the file (a core with fp16
    conversion); False keeps the float32 copy it unpacks at init (Armv8.0 NEON, measured under emulation).
    ``builtin_threaded_kernels``: whether LiteRT's builtin kernels plan other temporaries above one thread
    (x86: the multithreaded Eigen convolution); False on Arm, where the builtin CONV_2D is ruy's at every
    thread count and the arena at 4 threads is the 1-thread one (every sample, under emulation).

    The latency laws' cache knees (``latency.kernels``), shares of the machine's caches a profile records:
    ``law_l1_share``, of the L1d that a depthwise convolution's weights must fit in to run at full speed
    (``dw_macs_past_l1``), and ``law_llc_share``, of the L3 that an op's weights must fit in not to stream
    (``params_past_l3``). Both timed on x86-avx512 (AMD Zen 5, 48 KiB L1d, 32 MiB shared L3): the knees
    fell between 24.0 and 28.8 KiB of depthwise weights, and between 16 and 32 MiB of one-row fully
    connected weights; the other targets take x86-avx512's until timed.

    ``builtin_heap``: what LiteRT's builtin kernels keep on the heap outside the arena on this target,
    as a sentence (not yet in the figures). ``isa``: the ISA class; ``cpus``: example CPUs;
    ``measured``: the groups of ``sources`` read off the real runtime on this class (the others are
    from XNNPACK's sources); ``sources``: ``{group: where its constants came from}``.
    """

    name: str
    isa: str
    cpus: str
    float_rows: int
    float_tile: int
    float_nr2_rows: int
    float_nr2_tile: int
    float_gemm_tile: int
    float_depthwise_tile: int
    float_operand_tile: int
    law_tile: int
    int8_rows: int
    int8_tile: int
    int8_kr: int
    int8_depthwise_tile: int
    int8_operand_tile: int
    hybrid_rows: int
    hybrid_tile: int
    hybrid_kr: int
    hybrid_gemm_tile: int
    depthwise_min_taps: int = 3
    alignment: int = 64
    workspace_slack: int = 32
    unpacked_slack: int = 128
    pointer_bytes: int = 8
    runtime_bytes: int = 96
    opdata_bytes: int = 240
    value_bytes: int = 160
    partition_bytes: int = 660
    partition_tensor_bytes: int = 24
    delegate_bytes: int = 1_720
    threadpool_bytes: int = 64
    thread_bytes: int = 448
    thread_tls_bytes: int = 368
    gemm_operator_extra: int = 0
    fp16_packed_from_file: bool = True
    builtin_threaded_kernels: bool = True
    builtin_heap: str = ""
    law_l1_share: float = 0.5
    law_llc_share: float = 0.5
    measured: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def source(self, group: str) -> str:
        """Where the constants of ``group`` (one of :data:`SOURCE_GROUPS`) came from."""
        return self.sources.get(group, "")

    def with_(self, **changes) -> "CpuTarget":
        """This target with some constants changed (a target module derives from another this way)."""
        return replace(self, **changes)

    def float_fc_tile(self, channels: int) -> int:
        """The output-channel tile of an f32 fully connected op (or pointwise convolution) of ``channels``
        outputs: the ``nr2`` kernel's when the GEMM kernel is wider than the channels, or pads more than the
        ``nr2`` one and over 1% of the channels (``xnn_use_nr2``, microkernel-utils.c), else the GEMM kernel's."""
        nr, nr2 = self.float_gemm_tile, self.float_nr2_tile
        over, over2 = (nr - channels % nr) % nr, (nr2 - channels % nr2) % nr2
        return nr2 if nr > channels or (over2 < over and over * 100 > channels) else nr


@lru_cache(maxsize=1)
def targets() -> dict[str, CpuTarget]:
    """``{name: target}`` of every target module of this package, in name order."""
    found: dict[str, CpuTarget] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        target = getattr(importlib.import_module(f"{__name__}.{info.name}"), "TARGET", None)
        if isinstance(target, CpuTarget):
            if target.name in found:
                raise ValueError(f"target {target.name!r} is defined twice ({info.name})")
            found[target.name] = target
    return dict(sorted(found.items()))


def names() -> tuple[str, ...]:
    """The names ``--target`` takes: ``host`` and every target's."""
    return (HOST, *targets())


def get(name: str | None) -> CpuTarget:
    """The target called ``name`` (None or ``host``: this CPU's, :func:`host`).

    Raises:
        InputSpecError: no target of that name (the line lists the valid ones).
    """
    if name is None or name == HOST:
        return host()[0]
    found = targets().get(name) if isinstance(name, str) else None
    if found is None:
        raise InputSpecError(f"unknown target {name!r}; valid targets: {', '.join(names())}")
    return found


def _flags(cpuinfo: str) -> set[str]:
    """The feature words of the first ``flags`` (x86) or ``Features`` (Arm) line of a /proc/cpuinfo text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            return set(value.split())
    return set()


def detect(cpuinfo: str, machine: str) -> tuple[str, str | None]:
    """The target of a CPU from its /proc/cpuinfo text and ``platform.machine()``, and a note when it
    matches no target (then :data:`FALLBACK`).

    As XNNPACK's hardware config reads cpuinfo: on x86-64, AMX (``amx_tile``, ``amx_int8``) on top of
    AVX-512 with VNNI and GFNI is ``x86-amx`` (its int8 kernels are the avx512amx ones); AVX-512 (F, BW, DQ,
    VL) is ``x86-avx512``; AVX2 with FMA3 is ``x86-avx2``. On AArch64, ``i8mm`` is ``arm-i8mm``; the dot
    product (``asimddp``) is ``arm-dotprod-fp16``; plain NEON (``asimd``) is ``arm-neon``.
    """
    flags = _flags(cpuinfo)
    arch = machine.lower()
    if arch in ("x86_64", "amd64", "i386", "i686", "x86"):
        avx512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags
        if avx512 and {"avx512_vnni", "gfni", "amx_tile", "amx_int8"} <= flags:
            return "x86-amx", None
        if avx512:
            if "avx512_vnni" not in flags:
                return "x86-avx512", ("AVX-512 without VNNI: XNNPACK's dynamically quantized kernels differ from "
                                      "x86-avx512's (8x16c8 instead of 10x16c8 and 5x64c4)")
            return "x86-avx512", None
        if {"avx2", "fma"} <= flags:
            return "x86-avx2", None
    elif arch in ("aarch64", "arm64", "armv8l"):
        if "i8mm" in flags:
            return "arm-i8mm", None
        if "asimddp" in flags:
            return "arm-dotprod-fp16", None
        if "asimd" in flags or not flags:
            return "arm-neon", None
    return FALLBACK, (f"this CPU ({machine or 'unknown machine'}) matches no target: the figures are "
                      f"{FALLBACK}'s (pass --target)")


@lru_cache(maxsize=1)
def host() -> tuple[CpuTarget, str | None]:
    """This CPU's target (:func:`detect` on /proc/cpuinfo), and the note of a fallback."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        text = ""
    name, note = detect(text, platform.machine())
    return targets()[name], note


def fallback_note(name: str | None) -> str | None:
    """The note every output of an analysis at target ``name`` carries when it is this CPU's (``host``, or
    None) and this CPU matches no target (its figures are :data:`FALLBACK`'s), else None."""
    return host()[1] if name in (None, HOST) else None
