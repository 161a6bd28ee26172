"""An LLM's weight bytes per token count the embedding rows a lookup reads, not the table (issue 31).

Small decoders built in memory with a big embedding table (V = 1,000 rows of D = 64) and a small
projection (W [16, 64] float32 = 4,096 B): the table reaches the lookup directly (EMBEDDING_LOOKUP of an
int8 table, counted as a param), through an init-time DEQUANTIZE (int8 -> float32, then GATHER), or is
tied to the logits' FULLY_CONNECTED (read whole every token). A decode signature reads one token, a
prefill signature four.
"""

from __future__ import annotations

import numpy as np
import pytest

import tflite_flops
from tflite_builder import FLOAT32, INT32, INT8, build_model

DEQUANTIZE, EMBEDDING_LOOKUP, FULLY_CONNECTED, GATHER = 6, 7, 9, 36
V, D, OUT = 1_000, 64, 16
W_BYTES = OUT * D * 4  # 16·64 float32 = 4,096 B
TABLE_INT8 = V * D  # 64,000 B, 64 B a row
TABLE_F32 = V * D * 4  # 256,000 B, 256 B a row
Q = {"scale": [0.01] * V, "zero_point": [0] * V, "axis": 0}  # per-row scales


def decoder(kind: str) -> bytes:
    """Two signatures, ``decode`` (tokens [1, 1]) and ``prefill`` (tokens [1, 4]), one subgraph each, of
    the same weights: lookup -> FULLY_CONNECTED."""
    table = np.ones((V, D), np.int8 if kind != "tied" else np.float32).tobytes()
    w = np.ones((V if kind == "tied" else OUT, D), np.float32).tobytes()
    subgraphs, signatures = [], []
    for i, (key, t) in enumerate((("decode", 1), ("prefill", 4))):
        rows = V if kind == "tied" else OUT
        tensors = [{"name": "tokens", "shape": [1, t], "type": INT32},
                   {"name": "table", "shape": [V, D], "type": FLOAT32 if kind == "tied" else INT8, "buffer": 1,
                    **({} if kind == "tied" else {"quant": Q})},
                   {"name": "emb", "shape": [t, D]},
                   {"name": "w", "shape": [rows, D], "buffer": 2 if kind != "tied" else 1},
                   {"name": "logits", "shape": [t, rows]}]
        ops = []
        if kind == "embedding_lookup":
            ops.append({"opcode": 1, "inputs": [0, 1], "outputs": [2]})
        elif kind == "dequantize":
            tensors.append({"name": "table_f32", "shape": [V, D]})
            ops.append({"opcode": 0, "inputs": [1], "outputs": [5]})
            ops.append({"opcode": 2, "inputs": [5, 0], "outputs": [2],
                        "options": ("GatherOptions", {"axis": 0})})
        else:  # tied: GATHER of the float table, which the FULLY_CONNECTED also reads
            ops.append({"opcode": 2, "inputs": [1, 0], "outputs": [2], "options": ("GatherOptions", {"axis": 0})})
        ops.append({"opcode": 3, "inputs": [2, 3, -1], "outputs": [4]})
        if kind != "embedding_lookup":  # GATHER of [V, D] by [1, t] ids is [1, t, D]; EMBEDDING_LOOKUP flattens them
            tensors[2]["shape"] = [1, t, D]
        subgraphs.append({"tensors": tensors, "operators": ops, "inputs": [0], "outputs": [4], "name": key})
        signatures.append({"key": key, "subgraph": i, "inputs": {"tokens": 0}, "outputs": {"logits": 4}})
    return build_model(subgraphs, [DEQUANTIZE, EMBEDDING_LOOKUP, GATHER, FULLY_CONNECTED],
                       buffers=[None, table, w], signatures=signatures)


@pytest.mark.parametrize("kind, row_bytes", [("embedding_lookup", D), ("dequantize", D)])
def test_a_lookup_reads_its_rows_not_the_table(kind, row_bytes):
    report = tflite_flops.analyze(decoder(kind), all_signatures=True)
    dec, pre = report.signatures["decode"], report.signatures["prefill"]
    # the table is a param (the lookup's dequantized table, or the DEQUANTIZE's input): 64,000 + 4,096 B
    assert dec.totals.param_bytes == TABLE_INT8 + W_BYTES == 68_096
    # decode: one 64-byte row of the int8 table + W = 64 + 4,096 = 4,160 B per token, not 68,096
    assert dec.tokens.weight_bytes_per_token == row_bytes + W_BYTES == 4_160
    assert dec.tokens.bytes_per_token == 4_160  # no KV cache here
    # prefill: 4 rows + W once per call = 4·64 + 4,096 = 4,352 B, ÷ 4 tokens = 1,088 B per token
    assert pre.tokens.weight_bytes_per_token == (4 * row_bytes + W_BYTES) // 4 == 1_088


def test_a_table_tied_to_the_logits_is_read_whole():
    report = tflite_flops.analyze(decoder("tied"), all_signatures=True)
    dec = report.signatures["decode"]
    # the FULLY_CONNECTED reads all 1,000 rows of the float32 table for the logits: 256,000 B every token.
    # Its two tensors (the GATHER's table and the projection) point at one buffer: params count tensors, as
    # Keras counts layers' weights (the converter also shares one buffer between equal constants, such as two
    # zero biases), but the bytes a token reads count the buffer once.
    assert dec.totals.param_bytes == 2 * TABLE_F32
    assert dec.tokens.weight_bytes_per_token == TABLE_F32 == 256_000


def test_the_sample_decoders_embedding_is_a_param_read_a_row_a_token(samples_dir):
    # tiny_decoder's embedding [256, 64] float32 feeds a GATHER directly: a param (issue 42), of which a decode
    # step reads one row, 64·4 = 256 B, beside the 327,688 B of the projections: 327,944 B a token
    report = tflite_flops.analyze(samples_dir / "tiny_decoder.tflite", all_signatures=True)
    assert report.signatures["decode"].tokens.weight_bytes_per_token == 327_688 + 64 * 4 == 327_944
    gather = next(op for op in report.ops if op.op_type == "GATHER" and op.subgraph == decode_subgraph(report))
    assert gather.params == 256 * 64 and gather.bytes_read == 4 + 256  # one int32 id, one row


def decode_subgraph(report) -> int:
    return report.signatures["decode"].subgraph


@pytest.mark.runtime
@pytest.mark.slow
def test_a_measured_call_is_split_into_the_model_and_the_runners_copies(samples_dir):
    """``--latency``: each signature's runner call and its invoke alone (the model's own time) are timed."""
    import json

    import jsonschema

    from tflite_flops.measure.bench import BenchSettings
    from tflite_flops.measure.runtime import RuntimeSettings
    from tflite_flops.measure.tokens import measure_signatures
    from tflite_flops.render.formats.table import render_table
    from tflite_flops.report import Report
    from tflite_flops.report.schema import report_schema

    path = samples_dir / "tiny_decoder.tflite"
    ticks = iter(range(0, 10**12, 1_000_000))  # every clock read 1 ms after the previous one: each timed call 1 ms
    report = measure_signatures(tflite_flops.analyze(path, all_signatures=True), str(path), RuntimeSettings(),
                                BenchSettings(runs=5, warmup=2), clock=lambda: next(ticks))
    dec, pre = report.signatures["decode"], report.signatures["prefill"]
    assert dec.latency.median_ms == dec.latency.model_median_ms == 1.0
    assert dec.tokens.model_latency_ms == 1.0 and dec.tokens.model_tokens_per_s == 1_000.0  # 1 token / 1 ms
    assert pre.tokens.model_tokens_per_s == 16_000.0  # 16 tokens / 1 ms
    table = render_table(report)
    assert "the model alone 1,000.0 tokens/s (1.000 ms a call), the runner's copies of the inputs and outputs" in table
    d = json.loads(report.to_json())
    assert d["signatures"]["decode"]["tokens"]["model_tokens_per_s"] == 1_000.0
    jsonschema.validate(d, report_schema())
    assert Report.from_json(report.to_json()) == report
    # unmeasured: no such keys (the static JSON is unchanged)
    static = json.loads(tflite_flops.analyze(path, all_signatures=True).to_json())
    assert "model_tokens_per_s" not in static["signatures"]["decode"]["tokens"]
