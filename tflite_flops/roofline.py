"""Roofline: measure this machine's peak compute and memory bandwidth with the same runtime, then
classify every op as compute- or memory-bound from its arithmetic intensity (FLOPs / bytes).

* Peak compute: a large FULLY_CONNECTED single-op model ([256, 1024] × [1024, 1024]ᵀ, float32),
  timed like any model; FLOP/s = 2·M·K·N / median.
* Peak bandwidth: a large ADD of two 4 Mi-element float32 tensors; bytes/s = (2 reads + 1 write)
  · 16 MiB / median.

For an op with intensity I the roof is ``min(peak_flops, I · peak_bw)``; the ridge point is
``peak_flops / peak_bw``. When the op was timed (``--per-op`` or an imported device profile)
the report also says how far its achieved FLOP/s is from the roof.

The fraction of roof is not capped. The bandwidth probe streams 48 MiB, far more than the CPU
caches hold, so its roof is a main-memory roof; a small memory-bound op whose tensors stay in
cache between runs can beat it. Such ops are marked ``above_roof`` and counted, with the note
:data:`ABOVE_ROOF_NOTE`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .bench import BenchSettings, measure_model
from .errors import RuntimeMissingError
from .report import BoundCounts, Report, Roofline, RooflineOp
from .runtime import RuntimeSettings

FC_M, FC_K, FC_N = 256, 1024, 1024
ADD_ELEMENTS = 4 * 1024 * 1024
ABOVE_ROOF_NOTE = ("above 100% of roof: the op's data stays in the CPU caches between runs, which are faster than "
                   "the main-memory bandwidth the probe measures (2 reads + 1 write of 16 MiB); not capped")


def _schema() -> Any:
    try:
        from ai_edge_litert import schema_py_generated as fb
    except ImportError as exc:
        raise RuntimeMissingError("the roofline needs ai_edge_litert: pip install 'tflite_flops[runtime]'") from exc
    return fb


def _tensor(fb: Any, name: str, shape: list[int], buffer: int) -> Any:
    t = fb.TensorT()
    t.name, t.shape, t.type, t.buffer = name, shape, fb.TensorType.FLOAT32, buffer
    return t


def _single_op_model(fb: Any, code: int, options_type: int, options: Any, tensors: list[Any], inputs: list[int],
                     outputs: list[int], op_inputs: list[int], buffers: list[Any]) -> bytes:
    import flatbuffers

    opcode = fb.OperatorCodeT()
    opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), 1
    op = fb.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, op_inputs, outputs
    op.builtinOptionsType, op.builtinOptions = options_type, options
    sg = fb.SubGraphT()
    sg.tensors, sg.inputs, sg.outputs, sg.operators, sg.name = tensors, inputs, outputs, [op], "roofline"
    model = fb.ModelT()
    model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, [opcode], [sg], buffers
    model.description = "tflite_flops roofline probe"
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def compute_probe() -> tuple[bytes, int]:
    """(model bytes, FLOPs per invoke) of the FULLY_CONNECTED compute probe."""
    fb = _schema()
    weights = fb.BufferT()
    weights.data = np.random.default_rng(0).uniform(-1, 1, (FC_N, FC_K)).astype(np.float32).view(np.uint8).reshape(-1)
    tensors = [_tensor(fb, "x", [FC_M, FC_K], 1), _tensor(fb, "w", [FC_N, FC_K], 2), _tensor(fb, "y", [FC_M, FC_N], 3)]
    options = fb.FullyConnectedOptionsT()
    blob = _single_op_model(fb, fb.BuiltinOperator.FULLY_CONNECTED, fb.BuiltinOptions.FullyConnectedOptions, options,
                            tensors, [0], [2], [0, 1, -1], [fb.BufferT(), fb.BufferT(), weights, fb.BufferT()])
    return blob, 2 * FC_M * FC_K * FC_N


def bandwidth_probe() -> tuple[bytes, int]:
    """(model bytes, bytes moved per invoke) of the ADD bandwidth probe."""
    fb = _schema()
    tensors = [_tensor(fb, n, [ADD_ELEMENTS], i + 1) for i, n in enumerate(("a", "b", "c"))]
    options = fb.AddOptionsT()
    blob = _single_op_model(fb, fb.BuiltinOperator.ADD, fb.BuiltinOptions.AddOptions, options, tensors, [0, 1], [2],
                            [0, 1], [fb.BufferT() for _ in range(4)])
    return blob, 3 * 4 * ADD_ELEMENTS


def measure_peaks(runtime: RuntimeSettings, bench: BenchSettings | None = None) -> Roofline:
    """Peak FLOP/s and bytes/s of this machine with ``runtime`` (median of timed runs): a
    :class:`~tflite_flops.report.Roofline` without ops, for :func:`classify`."""
    bench = bench or BenchSettings(runs=20, warmup=3)
    blob, flops = compute_probe()
    compute = measure_model(blob, {}, runtime, bench)
    blob, moved = bandwidth_probe()
    memory = measure_model(blob, {}, runtime, bench)
    peak_flops = flops / (compute.median_ms / 1e3)
    peak_bw = moved / (memory.median_ms / 1e3)
    return Roofline(
        peak_flops_per_s=peak_flops, peak_bytes_per_s=peak_bw, ridge_intensity=peak_flops / peak_bw,
        compute_probe=f"FULLY_CONNECTED {FC_M}x{FC_K} · {FC_N}x{FC_K}, float32, {compute.median_ms:.3f} ms",
        bandwidth_probe=f"ADD 2 x {ADD_ELEMENTS} float32, {memory.median_ms:.3f} ms",
        runtime=runtime.runtime, threads=runtime.threads, xnnpack=runtime.xnnpack)


def classify(report: Report, peaks: Roofline) -> Report:
    """Report with ``roofline``: the peaks (:func:`measure_peaks`) plus, per costed op, intensity,
    bound, roof and achieved fraction."""
    peak_f, peak_b = peaks.peak_flops_per_s, peaks.peak_bytes_per_s
    rows = []
    for o in report.ops:
        moved = o.bytes_read + o.bytes_written
        if o.phase != "inference" or not o.flops or not moved:
            continue
        intensity = o.flops / moved
        roof = min(peak_f, intensity * peak_b)
        achieved = o.flops / (o.latency_ms / 1e3) if o.latency_ms else None
        fraction = achieved / roof if achieved is not None else None
        rows.append(RooflineOp(o.subgraph, o.index, o.op_type, intensity,
                               "compute" if intensity >= peaks.ridge_intensity else "memory", roof, achieved,
                               fraction, bool(fraction is not None and fraction > 1.0)))
    counts = BoundCounts(*(sum(1 for r in rows if r.bound == b) for b in ("compute", "memory")))
    above = sum(1 for r in rows if r.above_roof)
    return replace(report, roofline=replace(peaks, ops=tuple(rows), counts=counts, above_roof=above,
                                            above_roof_note=ABOVE_ROOF_NOTE if above else None))
