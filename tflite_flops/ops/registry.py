"""The one registry of per-op formulas: cost, output shape and (for small int tensors) values.

A formula is a small pure function of a shape-resolved op (:class:`OpContext`). It returns a
:class:`Cost` and raises :class:`~tflite_flops.errors.ShapeError` when the shapes do not fit.

Three kinds of entries keep "zero" and "unknown" apart:

* ``ok``: a cost formula;
* ``zero``: truly zero arithmetic (data movement, shape bookkeeping);
* ``not_costed``: known op, deliberately not costed, with the reason;
* ``opaque``: an accelerator-compiled op holding a whole graph that this file does not show.

An op type without an entry is *unsupported*: the analysis reports it, never counts it as 0.
A second registration of the same op type raises and names the first site, except through
:func:`register_cost`, the public override for users' own formulas.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType
from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from ..errors import ShapeError
from ..units import FLOAT_DTYPES, dense_bytes, num_elements
from .facts import record

Shape = tuple[int, ...]


_new_tuple = tuple.__new__  # TensorInfo.make skips the keyword __new__: one per tensor (benchmarks/static_speed.py)


class _TensorInfoFields(NamedTuple):
    index: int
    name: str
    dtype: str
    shape: Shape
    is_constant: bool = False
    quantized: bool = False
    value: np.ndarray | None = None  # constant or folded values of small tensors
    n: int = 0  # number of elements (computed by TensorInfo(), never passed)
    nbytes: int = 0  # dense bytes at this dtype (computed by TensorInfo(), never passed)


class TensorInfo(_TensorInfoFields):
    """A tensor as a formula sees it: resolved shape, dtype, constness, and small values.

    Immutable: a named tuple, since the analysis builds one per tensor of every model it walks.
    ``TensorInfo(index, name, dtype, shape, is_constant=False, quantized=False, value=None)``
    computes the trailing fields ``n`` (elements) and ``nbytes`` (dense bytes), which formulas
    read many times. Hot paths build it with :meth:`make`.
    """

    __slots__ = ()

    def __new__(cls, index: int, name: str, dtype: str, shape: Shape, is_constant: bool = False,
                quantized: bool = False, value: np.ndarray | None = None) -> "TensorInfo":
        n = num_elements(shape)
        return _new_tuple(cls, (index, name, dtype, shape, is_constant, quantized, value, n, dense_bytes(n, dtype)))

    @staticmethod  # not a classmethod: no bound method to make at each call
    def make(index: int, name: str, dtype: str, shape: Shape, is_constant: bool, quantized: bool,
             value: np.ndarray | None, n: int) -> "TensorInfo":
        """``TensorInfo(...)`` for a caller that already knows ``n = num_elements(shape)``."""
        return _new_tuple(TensorInfo, (index, name, dtype, shape, is_constant, quantized, value, n,
                                       dense_bytes(n, dtype)))

    def _replace(self, **changes: Any) -> "TensorInfo":
        """A copy with ``changes``; ``n`` and ``nbytes`` follow the new shape and dtype."""
        return TensorInfo(**{**dict(zip(_INFO_ARGS, self)), **changes})

    @property
    def rank(self) -> int:
        """Number of dims."""
        return len(self.shape)


_INFO_ARGS = ("index", "name", "dtype", "shape", "is_constant", "quantized", "value")


class OpContext(NamedTuple):
    """A shape-resolved op: what every formula receives. Immutable (a named tuple: built once per op)."""

    op_type: str
    options: Mapping[str, Any]
    inputs: tuple[TensorInfo | None, ...]
    outputs: tuple[TensorInfo, ...]
    subgraph: int = 0
    index: int = 0

    def input(self, i: int) -> TensorInfo:
        """Input ``i``; raises ShapeError when it is absent (optional input omitted)."""
        inputs = self.inputs
        if i >= len(inputs) or i < -len(inputs) or inputs[i] is None:
            raise ShapeError(f"{self.op_type}: input {i} is missing")
        return inputs[i]  # type: ignore[return-value]

    def has_input(self, i: int) -> bool:
        """True when input ``i`` exists and is not omitted."""
        return i < len(self.inputs) and self.inputs[i] is not None

    def output(self, i: int = 0) -> TensorInfo:
        """Output ``i``."""
        outputs = self.outputs
        if i >= len(outputs) or outputs[i] is None:
            raise ShapeError(f"{self.op_type}: output {i} is missing")
        return outputs[i]

    def opt(self, name: str, default: Any = None) -> Any:
        """An option value by snake_case name."""
        return self.options.get(name, default)

    @property
    def present_inputs(self) -> list[TensorInfo]:
        """The inputs that are not omitted."""
        return [t for t in self.inputs if t is not None]


class Cost(NamedTuple):
    """What a formula returns. ``None`` bytes mean: the default (all inputs read, outputs written)."""

    macs: int = 0
    flops: int = 0
    bytes_read: int | None = None
    bytes_written: int | None = None
    note: str = ""


CostFn = Callable[[OpContext], Cost]
ShapeFn = Callable[[OpContext], Sequence[Shape]]
ValueFn = Callable[[OpContext], Sequence[np.ndarray | None]]


@dataclass(frozen=True)
class OpSpec:
    """A registry entry."""

    op_type: str
    status: str  # "ok" | "zero" | "not_costed" | "opaque"
    formula: str
    cost: CostFn | None = None
    shape: ShapeFn | None = None
    value: ValueFn | None = None
    note: str = ""
    reference: str = ""
    bytes_model: str = "io"  # "io": inputs read, outputs written | "alias": no copy | "metadata"
    site: str = ""


_REGISTRY: dict[str, OpSpec] = {}
_SHAPES: dict[str, ShapeFn] = {}
_VALUES: dict[str, ValueFn] = {}


class MemoryFacts(NamedTuple):
    """How the TFLite runtime places an op's output in memory (its kernel registration and Prepare).

    ``inplace``: input positions whose buffer the output may reuse (``TfLiteRegistration.inplace_operator``
    bits ``kTfLiteInplaceOpInputNShared``), tried in order. ``data_unmodified``: the op only
    relabels its input (``kTfLiteInplaceOpDataUnmodified``: RESHAPE and friends), so sharing
    needs neither equal sizes nor a single reader. ``prepare_inputs``: the kernel computes the
    output once at Prepare into a read-only persistent buffer (``SetTensorToPersistentRo``) when
    these inputs are constant or themselves computed at Prepare (``()``: always, e.g. SHAPE);
    ``None``: never. ``dynamic_unless``: the kernel makes its output ``kTfLiteDynamic`` (sized at
    Eval, on the heap, and the planner stops there: the rest of the graph is planned at run time)
    unless these inputs are constant or computed at Prepare (``IsConstantOrPersistentTensor``);
    ``None``: never.
    """

    inplace: tuple[int, ...] = ()
    data_unmodified: bool = False
    prepare_inputs: tuple[int, ...] | None = None
    dynamic_unless: tuple[int, ...] | None = None


_MEMORY: dict[str, MemoryFacts] = {}
PLAIN_MEMORY = MemoryFacts()  # what an op type without registered memory facts does: neither shares nor folds
MEMORY_FACTS: Mapping[str, MemoryFacts] = MappingProxyType(_MEMORY)  # read-only view, for loops over many ops


# Op facts that passes other than the cost formula need, registered next to the formulas with
# :func:`register_traits` and read through these live, read-only views.
_TRAITS: dict[str, set[str]] = {"contraction": set(), "sparse_weights": set(), "calls_subgraphs": set(),
                                "init_on_constant": set()}
_NOT_ISOLATED: dict[str, str] = {}
CONTRACTION_OPS: AbstractSet[str] = _TRAITS["contraction"]  # multiply-accumulate ops: their weight sets the precision
SPARSE_WEIGHT_OPS: AbstractSet[str] = _TRAITS["sparse_weights"]  # effective MACs over non-zero weights
CALLER_OPS: AbstractSet[str] = _TRAITS["calls_subgraphs"]  # control flow whose subgraphs the analysis walks
INIT_ON_CONSTANT_OPS: AbstractSet[str] = _TRAITS["init_on_constant"]  # run once at init on a constant input 0
NOT_ISOLATED_OPS: Mapping[str, str] = MappingProxyType(_NOT_ISOLATED)  # op type -> why it cannot be timed alone

MAX_VALUE_ELEMENTS = 1024  # integer tensors up to this size carry values through folding (shape arithmetic)


def _site(depth: int = 2) -> str:
    frame = inspect.currentframe()  # not inspect.stack(): that reads every frame's source
    for _ in range(depth):
        frame = frame.f_back if frame is not None else None
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"


def _add(spec: OpSpec, override: bool = False, user: bool = False) -> None:
    prev = _REGISTRY.get(spec.op_type)
    if prev is not None and not override:
        raise ValueError(f"{spec.op_type} is registered twice: at {prev.site} and at {spec.site}")
    _REGISTRY[spec.op_type] = spec
    record(spec.op_type, override=True, user=user, spec=spec)


def _names(op_types: str | Iterable[str]) -> list[str]:
    return [op_types] if isinstance(op_types, str) else list(op_types)


def register(op_types: str | Iterable[str], formula: str, *, reference: str = "", note: str = "",
             bytes_model: str = "io") -> Callable[[CostFn], CostFn]:
    """Decorator: register a cost formula for one or more op types."""

    def deco(fn: CostFn) -> CostFn:
        site = _site()
        for name in _names(op_types):
            _add(OpSpec(name, "ok", formula, cost=fn, note=note, reference=reference,
                        bytes_model=bytes_model, site=site))
        return fn

    return deco


def register_zero(op_types: str | Iterable[str], note: str, *, bytes_model: str = "io",
                  reference: str = "every surveyed counter") -> None:
    """Register op types whose arithmetic cost is truly zero (data movement, bookkeeping)."""
    site = _site()
    for name in _names(op_types):
        _add(OpSpec(name, "zero", "0", note=note, reference=reference, bytes_model=bytes_model, site=site))


def register_not_costed(op_types: str | Iterable[str], reason: str) -> None:
    """Register op types that are known but deliberately not costed, with the reason."""
    site = _site()
    for name in _names(op_types):
        _add(OpSpec(name, "not_costed", "not costed", note=reason, site=site))


def register_opaque(op_types: str | Iterable[str], accelerator: str) -> None:
    """Register custom ops that an accelerator compiler emits in place of the graph it compiled.

    Their work is real but invisible: the analysis reports them with status ``opaque``, flags
    the totals and never counts them as 0 silently. ``accelerator`` names the target in reports.
    """
    site = _site()
    for name in _names(op_types):
        _add(OpSpec(name, "opaque", "not visible: compiled for an accelerator", note=accelerator,
                    reference="accelerator compiler output", site=site))


def shape_fn(op_types: str | Iterable[str]) -> Callable[[ShapeFn], ShapeFn]:
    """Decorator: register the output-shape function of op types."""

    def deco(fn: ShapeFn) -> ShapeFn:
        for name in _names(op_types):
            if name in _SHAPES:
                raise ValueError(f"shape function of {name} registered twice")
            _SHAPES[name] = fn
            record(name, override=True, shape=fn)
        return fn

    return deco


def value_fn(op_types: str | Iterable[str]) -> Callable[[ValueFn], ValueFn]:
    """Decorator: register constant folding of small integer tensors for op types."""

    def deco(fn: ValueFn) -> ValueFn:
        for name in _names(op_types):
            if name in _VALUES:
                raise ValueError(f"value function of {name} registered twice")
            _VALUES[name] = fn
            record(name, override=True, value=fn)
        return fn

    return deco


def register_memory(op_types: str | Iterable[str], *, inplace: Sequence[int] = (), data_unmodified: bool = False,
                    prepare_inputs: Sequence[int] | None = None, dynamic_unless: Sequence[int] | None = None) -> None:
    """Register the runtime memory behaviour of op types (see :class:`MemoryFacts`); once per op type."""
    facts = MemoryFacts(tuple(inplace), data_unmodified, None if prepare_inputs is None else tuple(prepare_inputs),
                        None if dynamic_unless is None else tuple(dynamic_unless))
    for name in _names(op_types):
        if name in _MEMORY:
            raise ValueError(f"memory facts of {name} registered twice")
        _MEMORY[name] = facts
        record(name, override=True, memory=facts)


class Temporary(NamedTuple):
    """One buffer a TFLite kernel adds in Prepare (``context->AddTensors``, then ``node->temporaries``).

    ``persistent``: ``kTfLiteArenaRwPersistent`` (kept for the interpreter's life in the persistent
    arena, e.g. transposed weights or row sums); otherwise ``kTfLiteArenaRw``: planned in the arena
    and alive while its op runs. Temporaries the kernel makes ``kTfLiteDynamic`` (heap, sized at
    Eval) are not listed. ``source``: the kernel file and function whose line the fact follows.
    """

    name: str
    bytes: int
    persistent: bool
    source: str


class KernelSetup(NamedTuple):
    """What, besides the op's shapes, decides a kernel's temporaries: the interpreter's threads and
    the number of quantization scales of the op's weight (input 1; 0 when it has none, 1 when its
    scales are all equal: conv.cc's hybrid kernel is per channel only when they differ)."""

    threads: int = 1
    weight_scales: int = 0


TemporariesFn = Callable[[OpContext, KernelSetup], "tuple[Temporary, ...]"]
_TEMPORARIES: dict[str, TemporariesFn] = {}
_HYBRID_ONLY: dict[str, tuple[int, int]] = {}
TEMPORARIES: Mapping[str, TemporariesFn] = MappingProxyType(_TEMPORARIES)  # op type -> its kernel's temporaries
# op type -> (activation input, weight input) of a kernel that takes temporaries only when hybrid
# (a float32 activation, an integer weight): the analysis skips the others without building a context
HYBRID_ONLY_TEMPORARIES: Mapping[str, tuple[int, int]] = MappingProxyType(_HYBRID_ONLY)
HYBRID_WEIGHT_DTYPES = frozenset({"INT8", "UINT8", "INT4", "INT2"})


def register_temporaries(op_types: str | Iterable[str], *, hybrid_only: tuple[int, int] | None = None
                         ) -> Callable[[TemporariesFn], TemporariesFn]:
    """Decorator: ``fn(ctx, setup) -> tuple[Temporary, ...]`` gives the temporaries LiteRT's builtin
    kernel of these op types allocates (XNNPACK off); once per op type. ``hybrid_only``: (activation
    input, weight input) when the kernel takes none unless the activation is float32 and the weight
    an integer type (:data:`HYBRID_WEIGHT_DTYPES`)."""

    def deco(fn: TemporariesFn) -> TemporariesFn:
        for name in _names(op_types):
            if name in _TEMPORARIES:
                raise ValueError(f"temporaries of {name} registered twice")
            _TEMPORARIES[name] = fn
            if hybrid_only is not None:
                _HYBRID_ONLY[name] = hybrid_only
            record(name, override=True, temporaries=fn, hybrid_only=hybrid_only)
        return fn

    return deco


def register_traits(op_types: str | Iterable[str], *, contraction: bool = False, sparse_weights: bool = False,
                    calls_subgraphs: bool = False, init_on_constant: bool = False, not_isolated: str = "") -> None:
    """Register what the passes besides the cost formula need to know about op types; once per op type.

    Args:
        op_types: the op types.
        contraction: multiply-accumulates against a weight operand (the first constant input after
            the activation), whose dtype sets the op's precision; implies ``sparse_weights``.
        sparse_weights: the MACs scale with the non-zero weights (effective MACs of pruned or
            sparse-encoded constant weights).
        calls_subgraphs: control flow: the analysis walks the subgraphs it references.
        init_on_constant: on a constant input 0 it runs once at init (TFLite caches the result).
        not_isolated: why per-op timing cannot run the op alone (control flow, state), or "".
    """
    site = _site()
    flags = {"contraction": contraction, "sparse_weights": sparse_weights or contraction,
             "calls_subgraphs": calls_subgraphs, "init_on_constant": init_on_constant}
    for name in _names(op_types):
        if name in _TRAIT_SITES:
            raise ValueError(f"traits of {name} are registered twice: at {_TRAIT_SITES[name]} and at {site}")
        _TRAIT_SITES[name] = site
        for trait, on in flags.items():
            if on:
                _TRAITS[trait].add(name)
        if not_isolated:
            _NOT_ISOLATED[name] = not_isolated
        record(name, override=True, traits=frozenset(t for t, on in flags.items() if on), not_isolated=not_isolated)


_TRAIT_SITES: dict[str, str] = {}


def register_cost(op_type: str, formula: str = "user formula") -> Callable[[CostFn], CostFn]:
    """Public decorator: register (or replace) the cost formula of an op, e.g. ``"CUSTOM:MyOp"``.

    Args:
        op_type: builtin name (``"CONV_2D"``) or ``"CUSTOM:<custom_code>"``.
        formula: a short human-readable description shown in reports.

    Returns:
        A decorator taking ``fn(ctx: OpContext) -> Cost``.
    """

    def deco(fn: CostFn) -> CostFn:
        _add(OpSpec(op_type, "ok", formula, cost=fn, reference="user", site=_site()), override=True, user=True)
        return fn

    return deco


def register_shape(op_type: str) -> Callable[[ShapeFn], ShapeFn]:
    """Public decorator: register (or replace) the output-shape function of an op, e.g. ``"CUSTOM:MyOp"``.

    The analysis calls it when the op's inputs differ from the shapes stored in the file (a new
    batch or input size), so that the shapes of the ops after it follow.

    Args:
        op_type: builtin name (``"CONV_2D"``) or ``"CUSTOM:<custom_code>"``.

    Returns:
        A decorator taking ``fn(ctx: OpContext) -> [shape of each output]``; ``fn`` raises
        :class:`~tflite_flops.errors.ShapeError` when the inputs do not fit.
    """

    def deco(fn: ShapeFn) -> ShapeFn:
        _SHAPES[op_type] = fn
        record(op_type, override=True, user=True, shape=fn)
        return fn

    return deco


def lookup(op_type: str) -> OpSpec | None:
    """The registry entry of an op type, or None (unsupported)."""
    return _REGISTRY.get(op_type)


def lookup_shape(op_type: str) -> ShapeFn | None:
    """The output-shape function of an op type, or None."""
    return _SHAPES.get(op_type)


def lookup_value(op_type: str) -> ValueFn | None:
    """The constant-folding function of an op type, or None."""
    return _VALUES.get(op_type)


def lookup_memory(op_type: str) -> MemoryFacts:
    """The memory facts of an op type; ops without registered facts neither share nor fold."""
    return _MEMORY.get(op_type, PLAIN_MEMORY)


def supported_ops() -> dict[str, OpSpec]:
    """Every registered op type with its entry (derived from the registrations, never hand-kept)."""
    return dict(_REGISTRY)


# ---------------------------------------------------------------------------------------------
# Shared helpers for the formula families.

# Per-element cost of a fused activation (ActivationFunctionType), on float kernels.
# RELU is one compare (clamp at 0); RELU6 / RELU_N1_TO_1 two compares; TANH the transcendental
# constant; SIGN_BIT one op. Integer kernels fold RELU-family clamps into their mandatory
# output clamp, so they cost nothing extra there.
FUSED_ACTIVATION_COST = {"NONE": 0, "RELU": 1, "RELU6": 2, "RELU_N1_TO_1": 2, "TANH": 64, "SIGN_BIT": 1}

# Per-element cost of transcendental functions. LOGISTIC, TANH, SOFTMAX and LOG_SOFTMAX use the
# TFLite converter's constant 64 ("about 32 multiplications, and about as many additions",
# EstimateArithmeticOpsCount); EXP/LOG/SIN/COS are half of it (one polynomial evaluation).
TRANSCENDENTAL = 64
EXP_LIKE = 32


def is_integer_kernel(ctx: OpContext) -> bool:
    """True when the op computes on integer activations (quantized kernels)."""
    first = None  # the first non-constant input, else the first input
    for t in ctx.inputs:
        if t is not None:
            if not t.is_constant:
                return t.dtype not in FLOAT_DTYPES
            if first is None:
                first = t
    return first is not None and first.dtype not in FLOAT_DTYPES


def fused_activation(ctx: OpContext, n_out: int) -> tuple[int, str]:
    """FLOPs of the op's fused activation over ``n_out`` output elements, and a note."""
    act = ctx.opt("fused_activation_function", "NONE")
    if not act or act == "NONE":
        return 0, ""
    per = FUSED_ACTIVATION_COST.get(str(act), 1)
    if act in ("RELU", "RELU6", "RELU_N1_TO_1") and is_integer_kernel(ctx):
        return 0, f"fused {act} folded into the integer output clamp"
    return per * n_out, _FUSED_NOTES.get(act) or f"fused {act} {per}/elem"


_FUSED_NOTES = {act: f"fused {act} {per}/elem" for act, per in FUSED_ACTIVATION_COST.items()}  # made once


def join_notes(*notes: str) -> str:
    """Join non-empty notes with '; '."""
    if len(notes) == 2:  # the common call (a note and one more part, often empty), without a list
        first, second = notes
        return f"{first}; {second}" if first and second else first or second or ""
    return "; ".join([n for n in notes if n])


def broadcast_shapes(op_type: str, *shapes: Shape) -> Shape:
    """NumPy broadcasting of shapes; raises ShapeError on incompatible dims."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        dims = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ShapeError(f"{op_type}: shapes {' and '.join(map(str, shapes))} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def same_as_input(ctx: OpContext) -> list[Shape]:
    """Output shape = shape of input 0 (unary elementwise ops)."""
    return [ctx.input(0).shape]
