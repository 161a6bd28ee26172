"""Independent reference numbers computed with TensorFlow (a test helper, not a test module).

Nothing here uses ``tflite_flops``: MACs come from TensorFlow's own per-op statistics on a
frozen TF graph, shapes from the LiteRT interpreter. TensorFlow and LiteRT are imported
lazily inside the functions, so this module imports fine without them.

* :func:`tf_macs` / :func:`tf_mac_stats` - trace a Keras model (or any callable) at a fixed
  input shape, freeze it, and add up ``ops.get_stats_for_node_def(graph, node, "flops") // 2``
  over the matrix-product nodes (Conv2D, DepthwiseConv2dNative, MatMul, BatchMatMulV2/V3 by
  default). TensorFlow's registered "flops" functions count ``2 · MACs`` for these op types
  (e.g. Conv2D: ``2 · n(out) · K_h · K_w · C_in/G``; MatMul: ``2 · n(out) · K``), and count
  padded taps, so halving gives MACs.
* :func:`convert` - Keras -> .tflite bytes (float, int8, dynamic-range, fp16).
* :func:`interpreter_shapes` - tensor shapes of subgraph 0 after resizing the inputs.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

#: Node types whose TF "flops" statistic is ``2 · MACs`` and that the TFLite converter turns
#: into CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / BATCH_MATMUL.
MAC_OP_TYPES: tuple[str, ...] = ("Conv2D", "DepthwiseConv2dNative", "MatMul", "BatchMatMulV2", "BatchMatMulV3")

#: Node types that do multiply-accumulates but are NOT in :data:`MAC_OP_TYPES`. They are
#: reported in :attr:`TFMacStats.uncounted` so that a test notices when a model contains one.
#:  - Conv3D: TF registers a "flops" function (2·n(out)·K_d·K_h·K_w·C_in/G); pass
#:    ``op_types=MAC_OP_TYPES + ("Conv3D",)`` to include it.
#:  - Conv2DBackpropInput (Conv2DTranspose): TF's formula
#:    ``2·n(out)·n(kernel) / (C_out·stride_h·stride_w)`` equals the TFLite input-side count
#:    ``n(input)·K_h·K_w·C_out`` only when out = in·stride (padding SAME); for VALID padding it
#:    differs and is not even an integer, so tests compute transposed convs by hand.
#:  - Einsum (Keras EinsumDense / MultiHeadAttention), Conv3DBackpropInputV2, BatchMatMul (v1):
#:    no statistic registered, or not emitted by current Keras; counted nowhere.
OTHER_MAC_OP_TYPES: tuple[str, ...] = (
    "Conv3D", "Conv2DBackpropInput", "Conv3DBackpropInputV2", "Einsum", "BatchMatMul",
    "DepthwiseConv2dNativeBackpropInput", "FusedBatchNormV3",
)


class TFStatsUnavailable(RuntimeError):
    """A node of a counted type has no usable "flops" statistic (unknown shape, no function)."""


@dataclass
class TFMacStats:
    """Result of :func:`tf_mac_stats`."""

    total: int = 0
    #: MACs per TF op type (only counted types).
    by_type: dict[str, int] = field(default_factory=dict)
    #: (node name, op type, MACs) for every counted node, in graph order.
    nodes: list[tuple[str, str, int]] = field(default_factory=list)
    #: (node name, op type, reason) for counted-type nodes whose statistic was unavailable
    #: (only filled when ``strict=False``; with ``strict=True`` these raise).
    unavailable: list[tuple[str, str, str]] = field(default_factory=list)
    #: How many nodes of each type in :data:`OTHER_MAC_OP_TYPES` were present but not counted.
    uncounted: Counter = field(default_factory=Counter)
    #: Every op type in the frozen graph with its node count (for debugging).
    op_histogram: Counter = field(default_factory=Counter)


# --------------------------------------------------------------------------------------------
# TF statistics
# --------------------------------------------------------------------------------------------

def _is_keras_layer(obj: Any) -> bool:
    try:
        import keras
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, keras.layers.Layer)


def _normalize_shapes(input_shape: Sequence[int] | Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """One shape ``(1, 32, 32, 3)`` or a list of shapes (one per model input)."""
    if len(input_shape) and all(isinstance(d, (int, np.integer)) for d in input_shape):
        return [tuple(int(d) for d in input_shape)]  # type: ignore[union-attr]
    return [tuple(int(d) for d in s) for s in input_shape]  # type: ignore[union-attr]


def frozen_graph(keras_model_or_fn: Callable, input_shape, dtype: str = "float32"):
    """Trace ``keras_model_or_fn`` at a fully static ``input_shape`` and freeze it.

    Keras layers/models are called with ``training=False`` (BatchNorm uses its moving
    statistics, Dropout is off). Plain callables and ``tf.function`` objects are called with
    the input tensors only. Returns the frozen ConcreteFunction; its ``.graph`` holds the
    nodes (functions are inlined and control flow lowered by the freezing step, so ops inside
    a ``tf.while_loop`` body appear once, not once per iteration).
    """
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    shapes = _normalize_shapes(input_shape)
    specs = [tf.TensorSpec(s, getattr(tf, dtype), name=f"input_{i}") for i, s in enumerate(shapes)]
    is_layer = _is_keras_layer(keras_model_or_fn)

    def call(*xs):
        arg = xs[0] if len(xs) == 1 else list(xs)
        if is_layer:
            return keras_model_or_fn(arg, training=False)
        return keras_model_or_fn(*xs)

    concrete = tf.function(call, input_signature=specs, autograph=False).get_concrete_function()
    frozen = convert_variables_to_constants_v2(concrete)
    # The frozen graph is re-imported from a GraphDef; make sure every input is fully static
    # there too (shape inference then propagates static shapes to every node).
    for t, s in zip(frozen.inputs, shapes):
        t.set_shape(s)
    return frozen


def tf_mac_stats(keras_model_or_fn: Callable, input_shape, op_types: Iterable[str] = MAC_OP_TYPES,
                 strict: bool = True, dtype: str = "float32") -> TFMacStats:
    """MACs of ``keras_model_or_fn`` at ``input_shape`` from TensorFlow's own op statistics.

    For every node of the frozen graph whose type is in ``op_types`` this calls
    ``tensorflow.python.framework.ops.get_stats_for_node_def(graph, node_def, "flops")`` and
    adds ``value // 2``. How unavailable statistics are handled:

    * no function registered for the type -> TF returns ``OpStats`` with ``value=None``;
    * a shape that is not fully defined -> the registered function raises ``ValueError``
      (``assert_is_fully_defined``); other lookup problems raise ``KeyError``/``TypeError``.

    With ``strict=True`` (default) any of these raises :class:`TFStatsUnavailable`, so a test
    never compares against a silent undercount. With ``strict=False`` the node is skipped and
    listed in :attr:`TFMacStats.unavailable`.
    """
    from tensorflow.python.framework import ops
    # Importing the profiler's registry registers "flops" functions for more op types
    # (Conv2DBackpropInput, elementwise ops, ...). Conv2D/Depthwise/MatMul/BatchMatMul/Conv3D
    # are registered by TensorFlow itself either way; importing twice is harmless.
    from tensorflow.python.profiler.internal import flops_registry  # noqa: F401

    from tensorflow.python.util import deprecation

    wanted = tuple(op_types)
    frozen = frozen_graph(keras_model_or_fn, input_shape, dtype=dtype)
    graph_def = frozen.graph.as_graph_def()
    library = {f.signature.name: f for f in graph_def.library.function}
    stats = TFMacStats()
    by_type: Counter = Counter()
    # The registered stats functions call graph_util.tensor_shape_from_node_def_name, which
    # logs a (v1 API) deprecation warning on first use.
    with deprecation.silence():
        _accumulate(frozen.graph, library, wanted, strict, stats, by_type, depth=0)
    stats.by_type = dict(by_type)
    stats.total = sum(by_type.values())
    return stats


#: Call ops whose function body is counted (once per call node). Freezing inlines ordinary
#: calls, but Keras 3 wraps some ops in ``jit_compile=True`` functions (grouped Conv2D runs
#: through an XLA-compiled function), and those stay as StatefulPartitionedCall nodes.
_CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")


def _accumulate(graph, library: dict, wanted: tuple[str, ...], strict: bool, stats: TFMacStats,
                by_type: Counter, depth: int) -> None:
    from tensorflow.python.framework import ops
    from tensorflow.python.framework.function_def_to_graph import function_def_to_graph

    for node in graph.as_graph_def().node:
        stats.op_histogram[node.op] += 1
        if node.op in _CALL_OPS and node.attr["f"].func.name in library and depth < 8:
            fdef = library[node.attr["f"].func.name]
            # Give the function's placeholders the caller's (static) input shapes.
            shapes = [graph.get_tensor_by_name(i if ":" in i else i + ":0").shape
                      for i in node.input if not i.startswith("^")]
            body = function_def_to_graph(fdef, input_shapes=shapes)
            _accumulate(body, library, wanted, strict, stats, by_type, depth + 1)
            continue
        if node.op not in wanted:
            if node.op in OTHER_MAC_OP_TYPES:
                stats.uncounted[node.op] += 1
            continue
        reason = ""
        try:
            value = ops.get_stats_for_node_def(graph, node, "flops").value
        except (ValueError, KeyError, TypeError) as exc:
            value, reason = None, f"{type(exc).__name__}: {exc}"
        if value is None:
            reason = reason or "no 'flops' statistic registered for this op type"
            if strict:
                raise TFStatsUnavailable(f"{node.op} node {node.name!r}: {reason}")
            stats.unavailable.append((node.name, node.op, reason))
            continue
        macs = int(value) // 2
        stats.nodes.append((node.name, node.op, macs))
        by_type[node.op] += macs


def tf_macs(keras_model_or_fn: Callable, input_shape, op_types: Iterable[str] = MAC_OP_TYPES,
            strict: bool = True) -> int:
    """Total MACs of the matrix-product nodes (see :func:`tf_mac_stats`) as an int.

    Counted types (default): Conv2D, DepthwiseConv2dNative, MatMul, BatchMatMulV2,
    BatchMatMulV3. ``input_shape`` is one fully static shape including the batch dim (or a
    list of shapes for a multi-input model).
    """
    return tf_mac_stats(keras_model_or_fn, input_shape, op_types=op_types, strict=strict).total


# --------------------------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------------------------

def convert(keras_model, mode: str = "float", input_shape: Sequence[int] | None = None,
            num_calibration: int = 8, seed: int = 0) -> bytes:
    """Convert a Keras model to .tflite bytes.

    mode:
      * ``"float"`` - plain float32 conversion;
      * ``"int8"`` - full-integer quantization (int8 kernels, int8 model inputs/outputs),
        calibrated on ``num_calibration`` batches of uniform random data in [-1, 1] of
        ``input_shape`` (default: the model's input shape, batch 1 when unknown);
      * ``"dynamic_range"`` - ``Optimize.DEFAULT`` without representative data (int8
        weights, float activations);
      * ``"fp16"`` - float16 weights (``target_spec.supported_types = [tf.float16]``).
    """
    from tflite_flops.convert import to_tflite  # the package's one conversion recipe

    if mode not in ("float", "int8", "dynamic_range", "fp16"):
        raise ValueError(f"unknown mode {mode!r} (float, int8, dynamic_range, fp16)")
    representative = None
    if mode == "int8":
        if input_shape is None:
            input_shape = tuple(1 if d is None else int(d) for d in keras_model.inputs[0].shape)
        shape = tuple(int(d) for d in input_shape)

        def representative():
            rng = np.random.default_rng(seed)
            for _ in range(num_calibration):
                yield [rng.uniform(-1.0, 1.0, shape).astype(np.float32)]

    return to_tflite(keras_model, mode, representative)


# --------------------------------------------------------------------------------------------
# LiteRT interpreter
# --------------------------------------------------------------------------------------------

def interpreter_shapes(model_bytes: bytes, input_shapes: Mapping[int | str, Sequence[int]] | None = None,
                       invoke: bool = True) -> dict[int, tuple[int, ...]]:
    """Shapes of all tensors of subgraph 0 after resizing inputs, as computed by LiteRT.

    ``input_shapes`` maps an input's position (0, 1, ... in the order of
    ``get_input_details()``, the same convention ``tflite_flops`` uses for int keys) or its
    tensor name to the new shape. The interpreter uses the builtin op resolver without the
    default XNNPACK delegate, so tensors are not rewritten by a delegate.

    ``allocate_tensors()`` propagates shapes statically, but an op whose output shape depends
    on a tensor VALUE computed at run time (RESIZE_BILINEAR fed by SHAPE -> SLICE -> MUL,
    RESHAPE with a computed shape, ...) gets a *dynamic* output that keeps its stored
    placeholder shape until the op runs. With ``invoke=True`` (default) the model is
    therefore run once on all-zero inputs before the shapes are read.

    Returns ``{tensor_index: shape}`` from ``get_tensor_details(0)`` (tensors of other
    subgraphs, e.g. WHILE bodies, are not listed).
    """
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_content=bytes(model_bytes),
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    details = interp.get_input_details()
    by_name = {d["name"]: d["index"] for d in details}
    for key, shape in (input_shapes or {}).items():
        if isinstance(key, str):
            if key not in by_name:
                raise KeyError(f"no input named {key!r} (inputs: {sorted(by_name)})")
            index = by_name[key]
        else:
            index = details[int(key)]["index"]
        interp.resize_tensor_input(index, [int(d) for d in shape], strict=False)
    interp.allocate_tensors()
    if invoke:
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], np.zeros(d["shape"], dtype=d["dtype"]))
        interp.invoke()
    return {int(d["index"]): tuple(int(v) for v in d["shape"]) for d in interp.get_tensor_details(0)}
