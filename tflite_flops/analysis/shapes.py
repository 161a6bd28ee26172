"""Shape resolution: user input shapes, propagation through every op, unresolved dims marked.

The stored ``shape`` of a tensor is what the converter saw; where ``shape_signature`` has -1 it
is a placeholder (often all 1s). Given the shapes of an op's inputs, :func:`step` recomputes its
outputs with the per-op shape functions of the registry, and fold the values of small integer (and tiny
float) tensors so that computed shapes (SHAPE → STRIDED_SLICE → PACK → RESHAPE, a resize size
scaled by 1.5) resolve too. A tensor whose shape could not be derived keeps its stored shape and
is marked unresolved, and the ops that touch it are flagged.

:func:`resolve_inputs` turns ``--input-shape`` / ``--batch`` into input shapes (with the loud
warning for dims left dynamic, and batch 1 with a note for a model whose only dynamic dim is the
batch). The analysis walks the subgraphs op by op with :func:`step`, following control flow;
:func:`tflite_flops.analysis.propagated_shapes` returns the shapes of that very walk, which the
interpreter cross-check (tests/test_shapes_runtime.py) compares with LiteRT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..errors import InputShapeError, InputSpecError, ShapeError
from ..reader.model import Model, Operator, Subgraph, Tensor
from ..ops.registry import MAX_VALUE_ELEMENTS, OpContext, Shape, TensorInfo, lookup_shape, lookup_value
from ..units import dense_bytes, num_elements

_new_tuple = tuple.__new__  # one OpContext per op step, without the keyword __new__ (benchmarks/static_speed.py)

MAX_FLOAT_VALUES = 8  # float constants up to this size too (scale factors of computed resize sizes)
_VALUE_LIMITS = {"INT32": MAX_VALUE_ELEMENTS, "INT64": MAX_VALUE_ELEMENTS, "BOOL": MAX_VALUE_ELEMENTS,
                 "FLOAT32": MAX_FLOAT_VALUES, "FLOAT16": MAX_FLOAT_VALUES}  # constants read as values, by dtype

ShapeSpec = Mapping["str | int | None", Shape]

_DIMS_RE = re.compile(r"^\d{1,12}(?:[xX,]\d{1,12})*$|^$")  # no dim of thousands of digits is parsed
DIM_MAX = 2**31 - 1  # a TFLite dim is an int32


def _within_int32(dims: Shape, given: object) -> Shape:
    """``dims``, or InputSpecError when one is above what a TFLite dim (an int32) holds."""
    if any(d > DIM_MAX for d in dims):
        raise InputSpecError(f"shape {given!r} has a dim above {DIM_MAX:,} (a TFLite dim is an int32)")
    return dims


def parse_dims(text: str) -> Shape:
    """'1x224x224x3' -> (1, 224, 224, 3); '' -> () (a scalar)."""
    text = text.strip()
    if not _DIMS_RE.match(text):
        shown = text if len(text) <= 80 else text[:60] + f"… ({len(text):,} characters)"
        raise InputSpecError(f"cannot read {shown!r} as a shape (expected e.g. 1x224x224x3)")
    dims = tuple(int(d) for d in re.split(r"[xX,]", text)) if text else ()
    if any(d < 1 for d in dims):
        raise InputSpecError(f"shape {text!r} has a dim below 1 (every dim must be at least 1)")
    return _within_int32(dims, text)


_INDEX_RE = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() takes '²', which int() refuses
_INDEX_DIGITS = 12  # an input index of more digits names no input (and int() refuses past 4,300 digits)


def _input_key(text: str) -> str | int:
    """The input a ``KEY=`` part names: its index (ASCII digits), else its name."""
    if not _INDEX_RE.fullmatch(text):
        return text
    if len(text) > _INDEX_DIGITS:
        raise InputSpecError(f"input index of {len(text):,} digits in --input-shape (an index has at most "
                             f"{_INDEX_DIGITS} digits)")
    return int(text)


def parse_shape_spec(specs: str | Sequence[str] | None) -> dict[str | int | None, Shape]:
    """Parse ``--input-shape`` values: ``NAME=1x224x224x3``, ``0=1x224x224x3`` or a bare ``1x224x224x3``.

    Several inputs may share one string, separated by commas that precede a ``NAME=`` part
    (``a=1x64,b=1x64``).
    """
    if specs is None:
        return {}
    if isinstance(specs, str):
        specs = [specs]
    out: dict[str | int | None, Shape] = {}
    for spec in specs:
        for part in re.split(r",(?=[^,=]+=)", spec.strip()):
            if not part:
                continue
            if "=" in part:
                key_text, dims = part.rsplit("=", 1)
                key: str | int | None = _input_key(key_text.strip())
            else:
                key, dims = None, part
            if key in out:
                raise InputSpecError(f"input {key if key is not None else '(bare)'} is given twice")
            out[key] = parse_dims(dims)
    if None in out and len(out) > 1:
        raise InputSpecError("a bare shape can only be given alone (name the inputs: NAME=1x224x224x3)")
    return out


def normalize_input_shapes(input_shapes: Mapping | str | Sequence | None) -> dict[str | int | None, Shape]:
    """Accept a mapping (``{"x": (1, 224, 224, 3)}`` or ``{0: [...]}``), spec strings, a bare shape
    (a sequence of ints), or a list of shapes (one per input, by position).

    Raises:
        InputSpecError: something else.
    """
    if input_shapes is None:
        return {}
    if isinstance(input_shapes, str):
        return parse_shape_spec(input_shapes)
    if isinstance(input_shapes, Mapping):
        try:
            return {k: _within_int32(tuple(int(d) for d in v), v) for k, v in input_shapes.items()}
        except (TypeError, ValueError):
            raise InputSpecError(f"input shapes must map names/indices to sequences of ints, "
                                 f"got {input_shapes!r}") from None
    if isinstance(input_shapes, (list, tuple)):
        items = list(input_shapes)
        if all(isinstance(d, (int, np.integer)) for d in items):
            return {None: _within_int32(tuple(int(d) for d in items), items)}  # a bare shape
        if all(isinstance(d, str) for d in items):
            return parse_shape_spec(items)
        if all(isinstance(d, (list, tuple)) for d in items):
            return {pos: _within_int32(tuple(int(d) for d in shape), shape) for pos, shape in enumerate(items)}
    raise InputSpecError(f"cannot read input shapes from {input_shapes!r}")


@dataclass
class SubgraphShapes:
    """Resolved shapes (and small folded values) of every tensor of one subgraph."""

    shapes: list[Shape]
    values: list[np.ndarray | None]
    resolved: list[bool]
    derived_constant: list[bool] = field(default_factory=list)
    # op index -> what a shape or value function raised other than ShapeError (a bug in the formula)
    formula_errors: dict[int, str] = field(default_factory=dict)
    # The walk's per-tensor facts and TensorInfo cache (see SubgraphTensors); not part of the state's value.
    tensor_cache: "SubgraphTensors | None" = field(default=None, init=False, repr=False, compare=False)


class SubgraphTensors:
    """The walk's per-tensor bookkeeping for one subgraph, next to its :class:`SubgraphShapes`.

    ``stored``, ``static`` and ``constant`` never change during a walk: they are read from the
    model's tensors once instead of through their properties at every op. ``infos`` keeps the
    TensorInfo last built for each tensor, so that an op's outputs are built once and shared with
    the ops that read them. The analysis also writes the state's lists directly (control flow), so
    a cached info is reused only while the tensor's shape and value are the very objects it was
    built from and its constness is unchanged.
    """

    __slots__ = ("subgraph", "stored", "numel", "static", "constant", "infos")

    def __init__(self, sg: Subgraph) -> None:
        tensors = sg.tensors
        self.subgraph = sg
        self.stored: list[Shape] = [t.shape for t in tensors]
        sizes = {shape: num_elements(shape) for shape in set(self.stored)}  # a model repeats few shapes
        self.numel: list[int] = list(map(sizes.__getitem__, self.stored))  # = Tensor.num_elements
        # = not Tensor.is_dynamic, without a generator per tensor
        self.static: list[bool] = [not sig or min(sig) >= 0 for sig in [t.shape_signature for t in tensors]]
        self.constant: list[bool] = [t.data_size > 0 for t in tensors]  # = Tensor.is_constant, without a call
        self.infos: list[TensorInfo | None] = [None] * len(tensors)

    def infos_of(self, state: SubgraphShapes, indices: Sequence[int]) -> tuple[TensorInfo | None, ...]:
        """The TensorInfo of each index (None for an omitted one, -1), as :func:`tensor_info` builds it."""
        shapes, values, derived, constant, cache = (state.shapes, state.values, state.derived_constant,
                                                    self.constant, self.infos)
        out = []
        for i in indices:
            if i < 0:
                out.append(None)
                continue
            info = cache[i]
            shape, value, is_constant = shapes[i], values[i], constant[i] or derived[i]
            if info is None or info.shape is not shape or info.value is not value or info.is_constant != is_constant:
                t = self.subgraph.tensors[i]
                info = cache[i] = TensorInfo.make(
                    i, t.name, t.dtype, shape, is_constant, t.quantization is not None, value,
                    self.numel[i] if shape is self.stored[i] else num_elements(shape))
            out.append(info)
        return tuple(out)


def subgraph_tensors(sg: Subgraph, state: SubgraphShapes) -> SubgraphTensors:
    """The :class:`SubgraphTensors` of ``state`` (made on first use, e.g. for a state built by hand)."""
    tensors = state.tensor_cache
    if tensors is None or tensors.subgraph is not sg:
        tensors = state.tensor_cache = SubgraphTensors(sg)
    return tensors


def _signature(t: Tensor) -> Shape:
    return t.shape_signature if t.shape_signature is not None else t.shape


def input_display_name(model: Model, sg: Subgraph, tensor_index: int) -> str:
    """The name a user should type for an input: its signature name if it has one, else the tensor name."""
    for sig in model.signatures:
        if sig.subgraph_index == sg.index:
            for name, idx in sig.inputs.items():
                if idx == tensor_index:
                    return name
    return sg.tensors[tensor_index].name


ASSUMED_BATCH = 1  # the batch of a dynamic-batch model analysed without --batch: per sample


@dataclass(frozen=True)
class InputAssumptions:
    """What :func:`resolve_inputs` assumed for inputs nobody sized: informational, not a warning.

    A model whose only dynamic dims are the leading batch of its inputs (every Keras-converted
    model: ``[-1,224,224,3]``) is analysed per sample, at ``batch`` 1, with complete totals; the
    report says so in one note (``Report.notes``) and in ``settings["assumed_batch"]``.
    """

    batch: int | None = None  # the batch assumed for ``inputs`` (None: nothing assumed)
    inputs: tuple[str, ...] = ()  # display names of the dynamic-batch inputs
    signatures: tuple[Shape, ...] = ()  # their shape signatures

    @property
    def notes(self) -> tuple[str, ...]:
        """The one note of the assumed batch (empty when nothing was assumed)."""
        if self.batch is None:
            return ()
        several = len(self.inputs) > 1
        names = ", ".join(repr(n) for n in self.inputs)
        sigs = ", ".join(_fmt(s) for s in self.signatures)
        return (f"input{'s' if several else ''} {names} ha{'ve' if several else 's'} a dynamic batch "
                f"(signature{'s' if several else ''} {sigs}): analysed per sample, at batch {self.batch} "
                f"(--batch N for a batch of N)",)

    @property
    def settings(self) -> dict[str, int]:
        """``{"assumed_batch": 1}`` when a batch was assumed, else empty (so other reports stay as they were)."""
        return {} if self.batch is None else {"assumed_batch": self.batch}


def resolve_inputs(model: Model, sg: Subgraph, input_shapes: ShapeSpec, batch: int | None
                   ) -> tuple[dict[int, Shape], dict[int, bool], list[str], InputAssumptions]:
    """Shapes of the entry subgraph's inputs from user shapes and ``batch``.

    An input left with dynamic dims (no shape given, no ``batch`` for a dynamic batch) keeps its
    stored placeholder shape, is unresolved, and gets a warning naming the option that fixes it,
    with an example shape taken from the model where it can (:func:`_example_shape`). One case is
    not a problem: when every input left dynamic is dynamic in its leading (batch) dim only, and no
    shape given for another dynamic-batch input says otherwise, those inputs are resolved at batch
    1 (per sample) and the returned :class:`InputAssumptions` says so. As soon as one input has
    another dynamic dim, every input left dynamic is warned about and unresolved, as before.

    Returns:
        (shape per input tensor index, whether it is fully resolved, warnings, what was assumed).

    Raises:
        InputShapeError (a ShapeError and an InputSpecError): a given shape has the wrong rank or contradicts a static dim.
        InputSpecError: a named input does not exist.
    """
    by_key: dict[str | int, int] = {}
    for pos, tidx in enumerate(sg.inputs):
        by_key[pos] = tidx
        by_key[sg.tensors[tidx].name] = tidx
        by_key[input_display_name(model, sg, tidx)] = tidx
    given: dict[int, Shape] = {}
    for key, shape in input_shapes.items():
        if key is None:
            if len(sg.inputs) != 1:
                names = ", ".join(input_display_name(model, sg, t) for t in sg.inputs)
                raise InputSpecError(f"the model has {len(sg.inputs)} inputs ({names}); name them: NAME=1x224x224x3")
            given[sg.inputs[0]] = shape
        elif key in by_key:
            given[by_key[key]] = shape
        else:
            names = ", ".join(input_display_name(model, sg, t) for t in sg.inputs)
            raise InputSpecError(f"no input named {key!r} (inputs: {names})")
    per_sample = _batch_only(sg, given, batch)

    shapes: dict[int, Shape] = {}
    resolved: dict[int, bool] = {}
    warnings: list[str] = []
    assumed: list[int] = []
    for tidx in sg.inputs:
        t = sg.tensors[tidx]
        sig = _signature(t)
        name = input_display_name(model, sg, tidx)
        if tidx in given:
            shape = given[tidx]
            if any(d < 1 for d in shape):
                raise InputSpecError(f"input {name!r}: shape {_dims(shape)} has a dim below 1")
            if batch is not None and shape and shape[0] != batch:
                raise InputSpecError(f"input {name!r}: --batch {batch} contradicts the given shape {_dims(shape)} "
                                     f"(give the batch in the shape, or leave it out of one of them)")
            if len(shape) != len(sig):
                raise InputShapeError(f"input {name!r}: shape {_fmt(shape)} has rank {len(shape)}, the model expects "
                                 f"rank {len(sig)} ({_fmt(sig)})")
            for axis, (want, got) in enumerate(zip(sig, shape)):
                if want >= 0 and want != got and not (axis == 0 and want == 1):
                    raise InputShapeError(f"input {name!r}: dim {axis} is {got}, but the model fixes it at {want} "
                                     f"(signature {_fmt(sig)})")
        else:
            shape = tuple(t.shape)
        if batch is not None and tidx not in given and shape:
            if sig[0] < 0 or sig[0] == 1:
                shape = (int(batch),) + tuple(shape[1:])
            else:
                warnings.append(f"--batch {batch} ignored for input {name!r}: its batch dim is fixed at {sig[0]}")
        dynamic = [axis for axis, d in enumerate(sig) if d < 0
                   and tidx not in given and not (axis == 0 and batch is not None)]
        if per_sample and dynamic == [0]:
            shape, dynamic = (ASSUMED_BATCH,) + tuple(shape[1:]), []
            assumed.append(tidx)
        shapes[tidx] = tuple(int(d) for d in shape)
        resolved[tidx] = not dynamic
        if dynamic:
            example, how = _example_shape(model, sg, name, sig, dynamic, batch)
            fix = "--batch N" if dynamic == [0] else f"--input-shape {name}={example}{how}"
            warnings.append(
                f"input {name!r} has dynamic dims {dynamic} (signature {_fmt(sig)}); costs use the stored placeholder "
                f"shape {_fmt(t.shape)}"
                + (f" (batch {t.shape[0] if t.shape else 1})" if dynamic == [0] else " and are probably far too low")
                + f". Give the real shape: {fix}"
                + (f" (or --input-shape {name}={example})" if dynamic == [0] else ""))
    if not assumed:
        return shapes, resolved, warnings, InputAssumptions()
    return shapes, resolved, warnings, InputAssumptions(
        ASSUMED_BATCH, tuple(input_display_name(model, sg, t) for t in assumed),
        tuple(_signature(sg.tensors[t]) for t in assumed))


def _batch_only(sg: Subgraph, given: Mapping[int, Shape], batch: int | None) -> bool:
    """Whether the inputs left dynamic (no shape given, no ``batch``) are dynamic in their leading
    dim only, there is at least one, and no shape given for a dynamic-batch input has a batch other
    than :data:`ASSUMED_BATCH` (the user's shapes then say which batch to run)."""
    if batch is not None:
        return False
    found = False
    for tidx in sg.inputs:
        sig = _signature(sg.tensors[tidx])
        if tidx in given:
            shape = given[tidx]
            if sig and sig[0] < 0 and shape and shape[0] != ASSUMED_BATCH:
                return False
            continue
        dynamic = [axis for axis, d in enumerate(sig) if d < 0]
        if dynamic and dynamic != [0]:
            return False
        found = found or bool(dynamic)
    return found


_IMAGE_CHANNELS = frozenset({1, 3, 4})  # gray, RGB, RGBA: a rank-4 input with such a channel dim is an image


def _example_shape(model: Model, sg: Subgraph, name: str, sig: Shape, dynamic: Sequence[int],
                   batch: int | None = None) -> tuple[str, str]:
    """An example shape for the warning of an input left with ``dynamic`` dims, and what it stands for.

    A dynamic batch is ``batch`` (1 when not given). The other dynamic dims come from the model where it tells: another
    signature's input of the same name (else of the same rank and static dims) that fixes them,
    as a multi-signature decoder does with its KV-cache length (``decode_kv128``). Otherwise an
    image (rank 4 with 1, 3 or 4 channels, last or second) gets 224×224, and any other input a
    placeholder letter (``1xNx4x16``) that the shape parser refuses, so that nothing invented
    passes for a real size.

    Returns:
        (example such as ``1x128x4x16``, an explanation starting with a space, or "").
    """
    axes = [a for a in dynamic if a != 0]
    values: dict[int, int] = {}
    how = ""
    if axes:
        found = _from_other_signatures(model, sg, name, sig, axes)
        if found is not None:
            key, values, others = found
            dims = ", ".join(str(a) for a in axes)
            how = (f" (dim{'s' if len(axes) > 1 else ''} {dims} as in signature {key!r}"
                   + (f"; other signatures have {', '.join(others)}" if others else "") + ")")
        elif len(sig) == 4 and ((sig[3] in _IMAGE_CHANNELS and set(axes) <= {1, 2})
                                or (sig[1] in _IMAGE_CHANNELS and set(axes) <= {2, 3})):
            values = {a: 224 for a in axes}  # an image side
        else:
            letters = ["N"] if len(axes) == 1 else [f"N{i + 1}" for i in range(len(axes))]
            values = dict(zip(axes, letters))  # type: ignore[arg-type]
            how = (f" (replace {', '.join(letters)} with the size{'s' if len(axes) > 1 else ''} of "
                   f"dim{'s' if len(axes) > 1 else ''} {', '.join(str(a) for a in axes)})")
    if sig and sig[0] < 0:
        values[0] = 1 if batch is None else int(batch)  # with --batch, a shape of another batch is refused
    example = "x".join(str(values.get(a, d if d >= 0 else 1)) for a, d in enumerate(sig))
    return example, how


def _from_other_signatures(model: Model, sg: Subgraph, name: str, sig: Shape, axes: Sequence[int]
                           ) -> tuple[str, dict[int, int], list[str]] | None:
    """(signature key, {axis: value}, the other values seen) from the first other signature whose
    input named ``name`` (else, when no signature has one, any input of the same rank) matches the
    static dims of ``sig`` and fixes every axis of ``axes``; None when none does."""
    static = [(a, d) for a, d in enumerate(sig) if d >= 0 and a != 0]
    for by_name in (True, False):
        found: list[tuple[str, tuple[int, ...]]] = []
        named = False
        for other in model.signatures:
            if other.subgraph_index == sg.index:
                continue
            tensors = model.subgraphs[other.subgraph_index].tensors
            candidates = [other.inputs[name]] if by_name and name in other.inputs else \
                [] if by_name else list(other.inputs.values())
            named = named or bool(candidates)
            for index in candidates:
                theirs = _signature(tensors[index])
                if (len(theirs) == len(sig) and all(theirs[a] == d for a, d in static)
                        and all(theirs[a] >= 1 for a in axes)):
                    found.append((other.key, tuple(theirs[a] for a in axes)))
                    break
        if found:
            key, first = found[0]
            others = [v for v in dict.fromkeys("x".join(map(str, dims)) for _, dims in found[1:])
                      if v != "x".join(map(str, first))]
            return key, dict(zip(axes, first)), others
        if named:
            return None  # signatures that have this input but leave it dynamic too: no guess from other names
    return None


def _dims(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape)


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def initial_state(model: Model, sg: Subgraph) -> SubgraphShapes:
    """Stored shapes, values of small integer constants, and constness."""
    facts = SubgraphTensors(sg)
    values: list[np.ndarray | None] = [None] * len(sg.tensors)
    for i, const in enumerate(facts.constant):
        if const:
            t = sg.tensors[i]
            limit = _VALUE_LIMITS.get(t.dtype)
            if limit is not None and facts.numel[i] <= limit:
                values[i] = model.constant(t)
    state = SubgraphShapes(list(map(tuple, facts.stored)), values, list(facts.static), [False] * len(values))
    state.tensor_cache = facts
    return state


def tensor_info(sg: Subgraph, state: SubgraphShapes, index: int) -> TensorInfo | None:
    """The TensorInfo a formula sees for tensor ``index`` (None for an omitted input)."""
    return subgraph_tensors(sg, state).infos_of(state, (index,))[0]


def _context(op: Operator, inputs: tuple[TensorInfo | None, ...], outputs: tuple[TensorInfo | None, ...],
             subgraph: int, index: int) -> OpContext:
    """``OpContext(op.op_type, op.options, inputs, outputs, subgraph, index)``, without the keyword handling."""
    return _new_tuple(OpContext, (op.op_type, op.options, inputs, outputs, subgraph, index))


# ---------------------------------------------------------------------------------------------
# Value folding that no formula family registers. The registry always wins: these are consulted
# only when ``lookup_value`` finds nothing for the op type, so a family module that later
# registers its own folding simply takes over. Shape functions all live in the families.

def step(sg: Subgraph, state: SubgraphShapes, op_index: int, trust_stored: bool = True) -> tuple[OpContext, str]:
    """Propagate shapes through one op, updating ``state``. Returns the op's context and a note.

    With ``trust_stored`` (the default), an op whose inputs all have their stored, static shapes
    keeps the converter's stored output shapes; otherwise its shape function recomputes them.
    """
    op = sg.operators[op_index]
    tensors = subgraph_tensors(sg, state)
    inputs = tensors.infos_of(state, op.inputs)
    ctx = _context(op, inputs, tensors.infos_of(state, op.outputs), sg.index, op_index)
    resolved, stored, static = state.resolved, tensors.stored, tensors.static
    inputs_resolved = inputs_as_stored = outputs_static = True
    for t in inputs:
        if t is not None:
            i, shape = t.index, t.shape  # = state.shapes[i]
            if not resolved[i]:
                inputs_resolved = False
            if shape is not stored[i] and shape != stored[i]:
                inputs_as_stored = False
    for i in op.outputs:
        if i >= 0 and not static[i]:
            outputs_static = False
    note = ""
    reshaped = False  # the outputs' infos change only with their shapes (and below, their values)
    new_shapes: Sequence[Shape] | None = None
    if not (trust_stored and inputs_resolved and inputs_as_stored and outputs_static):
        fn = lookup_shape(op.op_type)
        if fn is not None:
            try:
                new_shapes = fn(ctx)
            except ShapeError as exc:
                note = f"output shape not derived ({exc})"
            except Exception as exc:  # a bug in the shape function: the op is reported with status "error"
                note = state.formula_errors[op_index] = _formula_error("shape function", op.op_type, exc)
        else:
            note = f"no shape function for {op.op_type}"
    if new_shapes is not None and len(new_shapes) >= len(op.outputs):
        for i, shape in zip(op.outputs, new_shapes):
            if i >= 0:
                shape = tuple(map(int, shape))
                if shape != state.shapes[i]:  # an equal shape keeps its object, and so its cached info
                    state.shapes[i] = shape
                    reshaped = True
                state.resolved[i] = inputs_resolved
    else:
        ok = inputs_resolved and inputs_as_stored
        for i in op.outputs:
            if i >= 0:
                resolved[i] = ok and static[i]
    if reshaped:
        ctx = _with_outputs(ctx, op, tensors, state)
    fold = lookup_value(op.op_type)
    if fold is not None and _all_small(ctx.outputs):
        try:
            values = fold(ctx)
        except ShapeError:
            values = [None] * len(ctx.outputs)
        except Exception as exc:  # a bug in the value function: the op is reported with status "error"
            values = [None] * len(ctx.outputs)
            state.formula_errors.setdefault(op_index, _formula_error("value function", op.op_type, exc))
        folded = False
        for i, value in zip(op.outputs, values):
            if i >= 0 and value is not None:
                state.values[i] = np.asarray(value)
                folded = True
        if folded:
            ctx = _with_outputs(ctx, op, tensors, state)
    return ctx, note


def _formula_error(kind: str, op_type: str, exc: Exception) -> str:
    """The note of a formula that raised something other than ShapeError; the traceback goes to the
    ``tflite_flops`` logger at DEBUG level (shown by ``--debug``)."""
    import logging  # only when a formula raised: not on every run

    logging.getLogger("tflite_flops").debug("%s of %s raised", kind, op_type, exc_info=exc)
    return f"{kind} of {op_type} raised {type(exc).__name__}: {exc}"


def _with_outputs(ctx: OpContext, op: Operator, tensors: SubgraphTensors, state: SubgraphShapes) -> OpContext:
    """``ctx`` with the current infos of the op's outputs (after their shapes or values changed)."""
    return _context(op, ctx.inputs, tensors.infos_of(state, op.outputs), ctx.subgraph, ctx.index)


def _all_small(outputs: tuple[TensorInfo | None, ...]) -> bool:
    """Every output present and small enough for its values to be folded."""
    for o in outputs:
        if o is None or o.n > MAX_VALUE_ELEMENTS:
            return False
    return True


def tensor_sizes(sg: Subgraph, shapes: Sequence[tuple[int, ...]], constant: Sequence[bool] | None = None,
                 numel: Sequence[int] | None = None, stored: Sequence[tuple[int, ...]] | None = None
                 ) -> list[int]:
    """Bytes of every tensor of ``sg`` at its resolved shape (packed int4/int2 round up; strings are 0).

    Constant tensors are 0 when ``constant`` is given (weights are never planned). ``numel`` and
    ``stored`` (the walk's element counts of the stored shapes) spare recounting unchanged shapes.
    """
    tensors = sg.tensors
    counted = numel is not None and stored is not None
    n = min(len(tensors), len(shapes), *((len(constant),) if constant is not None else ()),
            *((len(numel), len(stored)) if counted else ()))
    sizes = [0] * n
    wanted = range(n) if constant is None else [i for i, c in zip(range(n), constant) if not c]
    for i in wanted:
        shape = shapes[i]
        count = numel[i] if counted and shape is stored[i] else num_elements(shape)
        sizes[i] = dense_bytes(count, tensors[i].dtype)
    return sizes
