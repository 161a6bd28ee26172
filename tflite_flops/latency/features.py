"""An op's latency-law features: how the cost model sees one resolved op (:func:`op_features`), the contract
calibration fits on and prediction evaluates (:mod:`~tflite_flops.latency.profile`), and the convolution
geometry that picks the kernel whose law predicts it (:func:`conv_kernel`)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..ops.facts import CONV, TRANSPOSED_CONV, conv_groups, facts_of, runs_dwconv, xnnpack_facts
from .kernels import (CHANNEL_TILE, activations_past, deconv_channels, deconv_data, deconv_subconv,
                      depthwise_past_l1, depthwise_remainder, gemm_tiles, innermost_rows, input_depth, llc_capacity,
                      narrow_kernel, runs_as_fully_connected, single_row_pointwise, weights_past)
from .profile import ON_XNNPACK, OpFeatures, elements, group_of, law_features


def _taps(record: Any, family: str = "") -> float:
    """MACs / input channels of a convolution (its weights' last dim; a group's input channels when it is grouped)
    for the op types (``family``: the law's, default the record's) whose record names ``taps_weight``, else 0."""
    pos = facts_of(family or record.op_type).taps_weight
    geometry = conv_geometry(record)
    if geometry is not None and pos is not None:
        return record.macs / geometry[1]
    inputs = getattr(record, "inputs", ()) or ()
    if pos is None or len(inputs) <= pos or len(inputs[pos]) != 4 or int(inputs[pos][3]) <= 0:
        return 0.0
    return record.macs / int(inputs[pos][3])


# XNNPACK runs a convolution whose groups each take one input channel and make one output channel (a depthwise
# convolution, or a CONV_2D with groups = channels, as Keras writes ConvNeXt's 7x7 depthwise layers) by its
# depthwise kernel when the kernel has at most DWCONV_MAX_TAPS (25) taps; with more taps, with more channels per
# group, or dynamically quantized (qd8, the hybrid precision: it has no depthwise kernel), by its GEMM kernel
# once per group, each group's output channels padded to the GEMM's tile (ops.facts.runs_dwconv). Timed here at
# 32x32x96, float32: 0.022 / 0.057 / 1.32 / 2.38 ms at 3x3 / 5x5 / 7x7 / 9x9 (docs/notes/predict-grouped-conv.md).
NO_DWCONV_PRECISIONS = ("hybrid",)  # precisions XNNPACK runs without its depthwise kernels (qd8 has none)


def conv_geometry(record: Any) -> tuple[int, int, int, int] | None:
    """(groups, input channels per group, output channels per group, kernel taps) of a 2-D convolution
    (:func:`~tflite_flops.ops.facts.conv_groups`, by its op type's XNNPACK weight role), from its input and filter
    shapes; None for other ops or shapes it cannot read."""
    inputs = getattr(record, "inputs", ()) or ()
    if len(inputs) < 2:
        return None
    return conv_groups(xnnpack_facts(record.op_type).weights, inputs[0], inputs[1])


def conv_kernel(record: Any, placement: str) -> str:
    """The op type whose law predicts a convolution: the one whose XNNPACK kernel runs it (``depthwise_as``
    when :func:`~tflite_flops.ops.facts.runs_dwconv`, ``gemm_as`` when not; a transposed convolution's ``gemm_as``
    when XNNPACK does not split it into sub-convolutions, :func:`~tflite_flops.latency.kernels.deconv_subconv`; a
    dynamically quantized pointwise convolution's ``pointwise_as``,
    :func:`~tflite_flops.latency.kernels.runs_as_fully_connected`) on the delegate; its own op type on the builtin
    kernels and for every other op (or the op type whose law its record names, ``law_as``: MediaPipe's
    transposed convolution is a TRANSPOSE_CONV)."""
    own = facts_of(record.op_type).law_as or record.op_type  # a custom op run by a builtin's kernel: that law
    facts = xnnpack_facts(own)
    if placement in ON_XNNPACK and facts.weights == TRANSPOSED_CONV and facts.gemm_as and not deconv_subconv(record):
        return facts.gemm_as
    if placement in ON_XNNPACK and facts.pointwise_as and \
            (runs_as_fully_connected(record, getattr(record, "precision", "")) or single_row_pointwise(record)):
        return facts.pointwise_as
    geometry = conv_geometry(record) if placement in ON_XNNPACK else None
    if geometry is None or not (facts.depthwise_as or facts.gemm_as):
        return own
    dwconv = runs_dwconv(geometry, getattr(record, "precision", "") in NO_DWCONV_PRECISIONS)
    return (facts.depthwise_as or own) if dwconv else (facts.gemm_as or own)


def _gemm_geometry(record: Any) -> tuple[int, int, int, int] | None:
    """:func:`conv_geometry`, and for a transposed convolution XNNPACK runs as a convolution (stride 1,
    :func:`conv_kernel`) that of the convolution its [Cout, kh, kw, Cin] filter makes over its data input (the 4-D
    input that is not the filter: TRANSPOSE_CONV's input 2)."""
    geometry = conv_geometry(record)
    inputs = getattr(record, "inputs", ()) or ()
    if geometry is not None or xnnpack_facts(record.op_type).weights != TRANSPOSED_CONV or len(inputs) < 2:
        return geometry
    data = deconv_data(inputs)
    return conv_groups(CONV, data, inputs[1]) if data is not None else None


def _grouped(record: Any, family: str) -> tuple[float, float]:
    """(``grouped_taps``, ``grouped_macs``) of a convolution of more than one group predicted by a law that takes
    them (``family``'s ``law_features``): output positions x groups x kernel taps (the GEMM kernel's steps,
    one per group, tap and position: each pads the group's channels to its tiles), and its MACs; (0, 0) else."""
    geometry = conv_geometry(record)
    if geometry is None or geometry[0] <= 1 or "grouped_taps" not in law_features(family):
        return 0.0, 0.0
    return record.macs / (geometry[1] * geometry[2]), float(record.macs)


def _depth(precision: str, cpu: Any, placement: str) -> int:
    """The input channels per tap ``tiled_macs`` pads to: the convolution kernel's ``kr`` on XNNPACK, else 1."""
    return input_depth(cpu, precision) if placement in ON_XNNPACK else 1


def _padded(n: int, step: int) -> int:
    return -(-n // step) * step


def _tiled_macs(record: Any, tile: int = CHANNEL_TILE, family: str = "", depth: int = 1,
                channels: Callable[[int], int] | None = None) -> float:
    """MACs with the output channels (of a group, when it is grouped) rounded up to ``tile`` (or to what
    ``channels`` says the kernel computes for them, when it says: a transposed convolution on XNNPACK,
    :func:`~tflite_flops.latency.kernels.deconv_channels`) and each tap's input channels to ``depth`` (the kernel's
    ``kr``, :func:`~tflite_flops.latency.kernels.input_depth`: an int8 stem of 3 channels computes 8 on
    x86-avx512), for the op types (``family``: the law's, default the record's) whose record says ``tiled_macs``
    (CONV_2D, TRANSPOSE_CONV); else 0."""
    facts = facts_of(family or record.op_type)
    if not facts.tiled_macs:
        return 0.0
    geometry = conv_geometry(record)
    if geometry is not None:
        cin, cout = geometry[1], geometry[2]
    else:
        inputs = getattr(record, "inputs", ()) or ()
        pos = facts.taps_weight
        if pos is None or len(inputs) <= pos or len(inputs[pos]) != 4 or min(int(inputs[pos][0]), int(inputs[pos][3])) <= 0:
            return 0.0
        cin, cout = int(inputs[pos][3]), int(inputs[pos][0])
    computed = (channels(cout) if channels is not None else 0) or _padded(cout, tile)
    return record.macs * computed / cout * _padded(cin, max(depth, 1)) / cin


def _remainder_taps(record: Any, family: str, precision: str, cpu: Any) -> float:
    """Output pixels x kernel taps of a depthwise convolution whose channels end in a partial tile of XNNPACK's
    depthwise kernel (:func:`~tflite_flops.latency.kernels.depthwise_remainder`), else 0."""
    geometry = conv_geometry(record)
    if not depthwise_remainder(family, geometry, precision, cpu):
        return 0.0
    return record.macs / max(geometry[0] * geometry[2], 1)


def broadcast_rows(record: Any) -> float:
    """For an op of the binary group, the runs of its innermost loop when an operand is broadcast along some
    dims but not all (XNNPACK merges the dims that broadcast alike, and calls its kernel once per element of
    the outer ones: a [1,160,160,3] - [1,1,1,3] is 25,600 calls of 3 elements), else 0 (same shapes, or a
    scalar operand: one call over everything)."""
    inputs = getattr(record, "inputs", ()) or ()
    outputs = getattr(record, "outputs", ()) or ()
    if group_of(record.op_type) != "binary" or len(inputs) != 2 or not outputs:
        return 0.0
    out = tuple(int(d) for d in outputs[0])
    rank = len(out)
    a, b = ((1,) * (rank - len(x)) + tuple(int(d) for d in x) for x in inputs[:2])
    if len(a) != rank or len(b) != rank:
        return 0.0
    runs: list[list] = []  # [pattern, elements] of the merged dims, outermost first
    for da, db, do in zip(a, b, out):
        if do <= 1:
            continue
        pattern = (da == 1, db == 1)
        if runs and runs[-1][0] == pattern:
            runs[-1][1] *= do
        else:
            runs.append([pattern, do])
    if len(runs) < 2:
        return 0.0
    total = 1
    for _, n in runs:
        total *= n
    return float(total // runs[-1][1])


def outputs_of(record: Any) -> tuple:
    """The record's output shapes (none when it has none)."""
    return tuple(getattr(record, "outputs", ()) or ())


def op_features(record: Any, placement: str, trips: int = 0, loop: tuple[int, int] = (0, 0),
                tile: int = CHANNEL_TILE, passed: int = 0, activated: bool = False,
                caches: Mapping[str, int] | None = None, cpu: Any = None) -> OpFeatures:
    """How the cost model sees one resolved op (an ``OpRecord``) placed on ``placement``.

    The family is the op type. The features are per inference (the record's counts already
    include ``executions``), divided by ``executions`` so that a law describes one run of the op;
    the caller multiplies the prediction back:

    * ``1``: always 1 (the per-op constant);
    * ``macs``, ``flops``, ``bytes`` (read + written): the record's static counts;
    * ``in``: the elements of the op's inputs that are not weights (all inputs' elements less ``params``);
    * ``out``: the elements of its outputs;
    * ``params``: the weights' elements it reads;
    * ``params_past_l2``, ``params_past_l3``: those of them that do not fit in the L2, and in the CPU target's
      share of the L3 (``cpu``: ``law_llc_share``, half on x86-avx512), of the machine the profile describes
      (``caches``: ``Machine.caches``; 0 when unknown): where an op run back to back
      reads its weights from. A fully connected layer of one row reads each weight once, at the speed of the
      level that holds them: float32, 10 us per MiB from the L2 and up to half the L3, 18-26 past it, where one
      cost per weight said 7 (docs/predict.md, "Weights past the caches");
    * ``out_rows``: the rows of the op's first output (its elements over its last dim): a data-movement
      kernel copies row by row, so a PAD of [1,128,128,3] (ResNet's stem, before a dynamic-range convolution)
      takes 137 us, where its 54 K elements said 9;
    * ``elems_past_l2``: the elements of the op's activations (inputs that are not weights, and outputs) that
      do not fit in the L2 with the rest (:func:`~tflite_flops.latency.kernels.activations_past`): an
      element-wise op run back to back streams them from the L3, at twice the cost per element;
    * ``dw_macs_past_l1``: ``macs`` for a depthwise convolution whose weights take more than the CPU target's
      share of the L1d (``law_l1_share``, half on x86-avx512)
      (:func:`~tflite_flops.latency.kernels.depthwise_past_l1`), else 0: its kernel then reads them from the L2 for
      every output pixel, at half the speed;
    * ``params_nr2``: ``params`` when XNNPACK runs the op's float32 weights by the narrower ``nr2`` kernel of
      ``cpu`` (the profile's CPU target: :meth:`~tflite_flops.targets.CpuTarget.float_fc_tile`), else 0: on
      x86-avx512 a row of 1,000 or 1,008 outputs takes the 16-wide kernel, 15 us per MiB of weights where 1,016
      or 1,024 outputs take 10;
    * ``dw_rem_taps``: on XNNPACK, for a depthwise convolution whose channels end in a partial tile of the CPU
      target's depthwise kernel (:func:`~tflite_flops.latency.kernels.depthwise_remainder`), its output pixels x
      kernel taps (what the partial tile's pass costs by), else 0;
    * ``taps``: for CONV_2D and TRANSPOSE_CONV, MACs over input channels (output elements x kernel
      area): a kernel's cost per window position whatever the channels, which makes a 3-channel stem
      dearer per MAC than a 64-channel layer; 0 for other ops;
    * ``tiled_macs``: for CONV_2D, the MACs with the output channels (a group's) rounded up to
      ``tile`` (what the microkernel computes: the CPU target's, :func:`~tflite_flops.latency.kernels.law_tile`), and on XNNPACK each tap's
      input channels rounded up to the int8 or dynamically quantized kernel's depth (``cpu``'s ``kr``,
      :func:`~tflite_flops.latency.kernels.input_depth`: 1 to 8 input channels cost the same); 0 for other ops
      (a dynamically quantized pointwise convolution too: on XNNPACK the fully connected law predicts it);
    * ``grouped_taps``, ``grouped_macs``: for a CONV_2D of more than one group, output positions x groups x
      kernel taps and its MACs (:func:`_grouped`); 0 for other ops;
    * ``gemm_macs``, ``tile_taps``, ``narrow_macs``: for a convolution XNNPACK runs by its GEMM or IGEMM kernel, the
      multiply-adds the microkernel computes (output pixels rounded up to its rows, output channels to its tile,
      input channels to its depth), its tap iterations (row tiles x channel passes x taps), and the multiply-adds
      of the narrower f32 ``nr2`` kernel (:func:`~tflite_flops.latency.kernels.gemm_tiles`, ``cpu``'s tiles); on
      the builtin kernels or without a CPU target, ``tiled_macs`` and ``taps`` stand in for the first two. With
      them the float32 CONV_2D law's median |error| at its 81 points went from 5.7% to 2.2% (docs/predict.md);
    * ``act_out``: the output elements when the op has a fused activation (``activated``: a RELU, RELU6... in
      its options), else 0: XNNPACK runs a binary op's as a clamp pass of its own (float32 ADD 30 us, with RELU
      49 us; int8 22 and 25 us, at [1,32,32,256]);
    * ``rows``: for an op of the binary group, the calls of XNNPACK's inner loop a broadcast makes
      (:func:`broadcast_rows`); 0 for other ops;
    * ``trips``: for a WHILE, its trips per run (``trips``, from ``predict.while_trips``); 0 for other ops;
    * ``copied``: ``trips`` x the elements of its inputs less ``passed``, those of the loop variables its body
      passes through unchanged (``predict.while_passthrough``: LiteRT does not copy them): the elements copied;
    * ``growing_trips``, ``reshaped``: for a WHILE whose body has ops with outputs that change shape every
      trip, ``trips``, and ``trips`` x the delegated ops LiteRT re-prepares after them every trip
      (``loop``, from ``predict.loop_reprepare``: (1 or 0, those ops)); 0 for other ops and loops.

    THIS IS THE SHARED CONTRACT: calibration fits on exactly these features; prediction evaluates
    on them. Calibration may refine it (family grouping, shape features); both sides then follow.

    The family is the op type whose kernel runs the op (:func:`conv_kernel`: on XNNPACK, a CONV_2D with groups
    = channels is a depthwise convolution, a depthwise convolution of over 25 taps a grouped CONV_2D), and
    the features are those of that family's law.
    """
    runs = max(int(getattr(record, "executions", 1) or 1), 1)
    family = conv_kernel(record, placement)
    grouped_taps, grouped_macs = _grouped(record, family)
    params = int(getattr(record, "params", 0) or 0)
    caches = caches or {}
    precision = getattr(record, "precision", "")
    inputs = sum(elements(s) for s in (getattr(record, "inputs", ()) or ()))
    outputs = sum(elements(s) for s in (getattr(record, "outputs", ()) or ()))
    pixels = int(innermost_rows(outputs_of(record)))
    gemm_macs, tile_taps, narrow_macs = gemm_tiles(family, _gemm_geometry(record), pixels, precision,
                                                   cpu if placement in ON_XNNPACK else None)
    tiled_macs = _tiled_macs(record, tile, family, _depth(precision, cpu, placement),
                             (lambda c: deconv_channels(family, c, precision, cpu))
                             if placement in ON_XNNPACK else None) / runs
    taps = _taps(record, family) / runs
    if not gemm_macs:  # the builtin kernels, or no CPU target: the tiled MACs and taps stand in
        gemm_macs, tile_taps = tiled_macs, taps
    values = {
        "1": 1.0,
        "macs": record.macs / runs,
        "flops": record.flops / runs,
        "bytes": (record.bytes_read + record.bytes_written) / runs,
        "in": float(max(inputs - params, 0)),
        "out": float(outputs),
        "params": float(params),
        "params_past_l2": weights_past(params, precision, int(caches.get("L2", 0) or 0)),
        "params_past_l3": weights_past(params, precision, llc_capacity(caches, cpu)),
        "params_nr2": float(params) if placement in ON_XNNPACK and narrow_kernel(record, family, cpu) else 0.0,
        "out_rows": innermost_rows(outputs_of(record)),
        "elems_past_l2": activations_past(max(inputs - params, 0) + outputs, precision, int(caches.get("L2", 0) or 0)),
        "dw_macs_past_l1": record.macs / runs if depthwise_past_l1(family, conv_geometry(record), precision, caches, cpu)
        else 0.0,
        "dw_rem_taps": _remainder_taps(record, family, precision, cpu) / runs if placement in ON_XNNPACK else 0.0,
        "taps": taps,
        "tiled_macs": tiled_macs,
        "grouped_taps": grouped_taps / runs,
        "gemm_macs": gemm_macs,
        "tile_taps": tile_taps,
        "narrow_macs": narrow_macs,
        "grouped_macs": grouped_macs / runs,
        "rows": broadcast_rows(record),
        "act_out": float(outputs) if activated else 0.0,
        "trips": float(trips),
        "copied": float(trips * max(inputs - passed, 0)),
        "growing_trips": float(trips * loop[0]),
        "reshaped": float(trips * loop[1]),
    }
    return OpFeatures(family=family, precision=record.precision, placement=placement, values=values)
