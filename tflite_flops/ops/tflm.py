"""What TensorFlow Lite Micro's kernels and allocator put in the arena, as C struct layouts per target.

``MicroAllocator`` (tflite-micro: tensorflow/lite/micro/micro_allocator.cc) splits the arena you give
``MicroInterpreter`` into a *head* (the planned tensors and the kernels' scratch buffers,
``RequestScratchBufferInArena``) and a *tail* of persistent allocations: the allocator's own objects,
one ``TfLiteEvalTensor`` per tensor and one ``NodeAndRegistration`` per op of every subgraph, each
op's parsed builtin options, the ``OpData`` each kernel allocates in Init and the arrays it allocates
in Prepare (``AllocatePersistentBuffer``), the scratch buffer handles, variable tensors, and the
``TfLiteTensor`` structs (with their quantization) of the model's inputs and outputs.

Their sizes are ``sizeof`` of C structs, so they depend on the target's pointer size, and on
whether TFLM was built with ``USE_TFLM_COMPRESSION`` (which adds fields). :func:`c_struct` lays a
struct out from its fields as a C compiler does (natural alignment). Each op type's kernel facts are
registered next to its formula with :func:`register_tflm`, citing the kernel source they follow: the
reference kernels (tensorflow/lite/micro/kernels/*.cc), and the CMSIS-NN ones (kernels/cmsis_nn/*.cc,
:mod:`tflite_flops.ops.cmsis_nn`) for a target built with them.
"""

from __future__ import annotations

from functools import lru_cache
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, NamedTuple

from ..settings import CORTEX_M, HOST_64, TflmTarget  # noqa: F401 - settings (the build), imported from there
from .facts import record
from .registry import OpContext


class CLayout(NamedTuple):
    """``sizeof`` and ``alignof`` of a C struct."""

    size: int
    align: int


# Field codes: i 4-byte int / float / enum, h int16, b bool / int8 / uint8 / a uint8 enum class,
# d double / int64 (8-byte aligned on ARM EABI and x86-64 alike), p a pointer, size_t or intptr_t.
_SCALARS = {"i": (4, 4), "h": (2, 2), "b": (1, 1), "d": (8, 8)}


@lru_cache(maxsize=None)  # a few dozen struct layouts per target, asked for once per op
def c_struct(target: TflmTarget, *fields: "str | CLayout", compression: "str | CLayout" = "",
             package: str = "") -> CLayout:
    """The layout of a struct with ``fields`` in order (codes as ``_SCALARS``, ``p`` for a pointer, or
    a nested :class:`CLayout`), plus ``compression``'s fields when the target has ``USE_TFLM_COMPRESSION``
    and ``package``'s when it is the Python package's newer build (``TflmTarget.package``).

    Each field sits at the next multiple of its alignment; the size is rounded up to the struct's
    alignment (the largest of its fields').
    """
    parts: list[CLayout] = []
    for field in (*fields, *((compression,) if target.compression and compression else ()),
                  *((package,) if target.package and package else ())):
        if isinstance(field, CLayout):
            parts.append(field)
            continue
        for code in field:
            size, align = (target.pointer_bytes,) * 2 if code == "p" else _SCALARS[code]
            parts.append(CLayout(size, align))
    offset, align = 0, 1
    for size, a in parts:
        offset = -(-offset // a) * a + size
        align = max(align, a)
    return CLayout(-(-offset // align) * align, align)


class TflmKernel(NamedTuple):
    """What one op's TFLM kernel puts in the arena.

    ``builtin``: the parsed builtin options (``TfLite*Params``, allocated by the op resolver's parse
    function; None: the op has none). ``op_data``: the bytes its Init asks ``AllocatePersistentBuffer``
    for (0: no Init). ``prepare``: the persistent buffers its Prepare allocates (per-channel
    multipliers and shifts, lookup tables). ``scratch``: the buffers it requests in the head with
    ``RequestScratchBufferInArena``, alive while the op runs. ``temps``: its Prepare makes temporary
    ``TfLiteTensor`` structs of its inputs and outputs (``AllocateTempInputTensor``), below the tail
    while it runs (False: the kernel has no Prepare). ``source``: the kernel file and function.
    ``held``: the tensors it holds as temporaries while it allocates ``prepare``, in the order it takes
    them (``"i1"`` input 1, ``"o0"`` output 0; None: every input, then every output); ``then``: those it
    takes again after ``prepare``, the first still held (a convolution's ``CalculateOpData*``).
    """

    builtin: CLayout | None = None
    op_data: int = 0
    prepare: tuple[int, ...] = ()
    scratch: tuple[int, ...] = ()
    source: str = ""
    temps: bool = True
    held: tuple[str, ...] | None = None
    then: tuple[str, ...] = ()


TflmFn = Callable[[OpContext, TflmTarget, int], TflmKernel]
_TFLM: dict[str, TflmFn] = {}
TFLM_KERNELS: Mapping[str, TflmFn] = MappingProxyType(_TFLM)  # op type -> its reference kernel's arena facts
_OPTIMIZED: dict[str, dict[str, TflmFn]] = {}
# kernel set (TflmTarget.kernels) -> {op type -> its optimized kernel's arena facts}; the other op types of
# a build with that set keep their reference kernels
TFLM_OPTIMIZED: Mapping[str, Mapping[str, TflmFn]] = MappingProxyType(_OPTIMIZED)


def register_tflm(op_types: str | Iterable[str], kernels: str = "reference") -> Callable[[TflmFn], TflmFn]:
    """Register what the TFLM kernel of ``op_types`` allocates: a :class:`TflmKernel` from the op's context,
    the target and the number of quantization scales of the op's input 1 (its filter; 0 when it has none).
    ``kernels``: the kernel set (``TflmTarget.kernels``) whose kernel it is; ``"reference"``: the reference
    kernel, which every build without its own kernel for the op uses. A duplicate registration raises."""
    names = [op_types] if isinstance(op_types, str) else list(op_types)
    table = _TFLM if kernels == "reference" else _OPTIMIZED.setdefault(kernels, {})

    def wrap(fn: TflmFn) -> TflmFn:
        for name in names:
            if name in table:
                raise ValueError(f"TFLM facts for {name} ({kernels} kernels) registered twice")
            table[name] = fn
            if kernels == "reference":
                record(name, override=True, tflm=fn)
        return fn

    return wrap


def tflm_kernel_table(target: TflmTarget) -> Mapping[str, TflmFn]:
    """The arena facts of every op type for ``target``'s kernel set: its optimized kernels over the reference ones."""
    optimized = TFLM_OPTIMIZED.get(target.kernels)
    return {**TFLM_KERNELS, **optimized} if optimized else TFLM_KERNELS


def padding_values(target: TflmTarget) -> CLayout:
    """``TfLitePaddingValues`` (tensorflow/lite/core/c/builtin_op_data.h): width, height and their offsets."""
    return c_struct(target, "iiii")


def per_channel(ctx: OpContext, weight: int, dim: int) -> tuple[int, int]:
    """The two int32 arrays (multiplier, shift) a convolution's Prepare allocates, one entry per channel:
    dim ``dim`` of input ``weight`` (the filter)."""
    shape = ctx.input(weight).shape
    n = 4 * shape[dim]
    return (n, n)


def fixed(builtin: Callable[[TflmTarget], CLayout] | None = None, op_data: Callable[[TflmTarget], CLayout] | None = None,
          source: str = "", prepare: bool = True) -> TflmFn:
    """The facts of a kernel whose allocations do not depend on the op's shapes: its builtin options
    and its Init's OpData, both as layouts of the target; ``prepare=False``: it has no Prepare."""

    def facts(ctx: OpContext | None, target: TflmTarget, scales: int) -> TflmKernel:
        return TflmKernel(builtin(target) if builtin else None, op_data(target).size if op_data else 0, source=source,
                          temps=prepare)

    facts.shape_free = True  # type: ignore[attr-defined]  # the analysis may call it without a context
    return facts
