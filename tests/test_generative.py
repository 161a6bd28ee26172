"""Every signature in one report and the per-token figures, on sample_models/tiny_decoder.tflite.

The sample (sample_models/make_samples.py, build_decoder): vocabulary V = 256, d_model D = 64,
H = 4 heads of 16, L = 2 layers, FFN width F = 128, a KV cache of S = 64 slots per layer for K
and for V ([1, 64, 4, 16] float32 each), signature ``prefill`` (T = 16 tokens) and ``decode``
(T = 1). Every query attends over the whole cache (later slots masked), so the attention work
per token is the same in both signatures: it depends on S, not on the position.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import cli_process
import pytest

import tflite_flops
from tflite_flops.errors import InputSpecError
from tflite_flops.studies.signatures import signature_roles
from tflite_flops.reader.load import load_model
from tflite_flops.render import render
from tflite_flops.report import Report

ROOT = Path(__file__).resolve().parent.parent
DECODER = ROOT / "sample_models" / "tiny_decoder.tflite"
V, D, H, L, F, S = 256, 64, 4, 2, 128, 64

# Hand derivation of the MACs per token (one token's row through every contraction):
#   per layer: QKV projection D·3D = 12,288; scores H·S·(D/H) = S·D = 4,096; weighted sum of V
#   S·D = 4,096; output projection D·D = 4,096; FFN up D·F = 8,192 and down F·D = 8,192
#   = 40,960 per layer, of which 8,192 is attention over the cache (2·S·D);
#   L = 2 layers: 81,920; logits D·V = 16,384 -> 98,304 per token.
PER_TOKEN_WEIGHT_MACS = L * (D * 3 * D + D * D + D * F + F * D) + D * V  # 2·32,768 + 16,384 = 81,920
ATTENTION_MACS_PER_TOKEN = L * 2 * S * D  # 2 · 2·64·64 = 16,384 at KV length 64
DECODE_MACS = 1 * PER_TOKEN_WEIGHT_MACS + ATTENTION_MACS_PER_TOKEN  # 81,920 + 16,384 = 98,304
PREFILL_MACS = 16 * PER_TOKEN_WEIGHT_MACS + 16 * ATTENTION_MACS_PER_TOKEN  # 1,310,720 + 262,144 = 1,572,864
EMBEDDING = V * D  # the token embedding table [256, 64]: 16,384 params, read a row (ROW = 64·4 = 256 B) a token
ROW = D * 4


def _cli(*args: str) -> subprocess.CompletedProcess:
    return cli_process.run(["analyze", str(DECODER), *args], cwd=ROOT, timeout=300)


@pytest.mark.slow
def test_all_signatures_json_matches_the_hand_derivation():
    run = _cli("--all-signatures", "--format", "json")
    assert run.returncode == 0, run.stderr
    sigs = json.loads(run.stdout)["signatures"]
    assert set(sigs) == {"prefill", "decode"}
    assert DECODE_MACS == 98_304 and PREFILL_MACS == 1_572_864
    assert sigs["decode"]["totals"]["macs"] == DECODE_MACS
    assert sigs["prefill"]["totals"]["macs"] == PREFILL_MACS
    assert sigs["prefill"]["tokens"]["macs_per_token"] == sigs["decode"]["tokens"]["macs_per_token"] == 98_304
    for s in sigs.values():  # FLOPs by precision sum to the FLOPs
        assert sum(v["flops"] for v in s["totals"]["by_precision"].values()) == s["totals"]["flops"]


def test_shared_weights_are_counted_once():
    report = tflite_flops.analyze(DECODER, all_signatures=True)
    # Weights of the contractions: 81,920 (PER_TOKEN_WEIGHT_MACS: each weight used once per token)
    # + 2 scalar constants (the RMSNorm epsilon and the 1/√16 score scale; the converter folded the
    # norm gains into the next projection), + the embedding table [256, 64] = 16,384, which feeds a GATHER:
    # it reads T rows and does no arithmetic, but it is the model's weights (Keras counts it; issue 42).
    weights = PER_TOKEN_WEIGHT_MACS + 2 + EMBEDDING
    assert report.signatures["prefill"].totals.params == weights
    assert report.signatures["decode"].totals.params == weights
    assert report.totals.params == weights  # both subgraphs point at the same buffers: once, not twice
    assert report.totals.param_bytes == report.signatures["decode"].totals.param_bytes == 4 * weights  # float32: 393,224 B
    # The single-signature analysis no longer counts the other signature's copy of the pointers.
    assert tflite_flops.analyze(DECODER, signature="prefill").totals.params == weights


def test_token_figures():
    sigs = tflite_flops.analyze(DECODER, all_signatures=True).signatures
    pre, dec = sigs["prefill"].tokens, sigs["decode"].tokens
    assert (pre.role, pre.tokens, pre.token_input) == ("prefill", 16, "tokens")
    assert (dec.role, dec.tokens) == ("decode", 1)
    weight_bytes = sigs["decode"].totals.param_bytes - 4 * EMBEDDING  # 327,688: all but the embedding table
    assert dec.weight_bytes_per_token == weight_bytes + ROW  # every weight read for the one token, and its row
    # read once per 16 tokens, with 16 rows: (327,688 + 16·256) / 16 = 20,736.5 -> 20,736
    assert pre.weight_bytes_per_token == round((weight_bytes + 16 * ROW) / 16) == 20_736
    # KV cache: 2 layers × (K and V) × [1, 64, 4, 16] float32 = 4 · 64·4·16·4 B = 65,536 B
    assert dec.kv_cache_bytes == pre.kv_cache_bytes == 4 * S * H * (D // H) * 4 == 65_536
    assert dec.kv_cache_inputs == ("kv_cache_k_0", "kv_cache_k_1", "kv_cache_v_0", "kv_cache_v_1")
    assert dec.kv_length == pre.kv_length == S
    assert dec.flops_per_token == sigs["decode"].totals.flops
    assert pre.flops_per_token == round(sigs["prefill"].totals.flops / 16)
    # Each signature's own arenas, as analysing it alone gives; the KV cache inputs (65,536 bytes)
    # live through the whole call, so the peak holds them.
    decode_memory = sigs["decode"].memory
    assert decode_memory == tflite_flops.analyze(DECODER, signature="decode").memory
    assert decode_memory.peak_live_bytes >= sigs["decode"].tokens.kv_cache_bytes == 65_536


@pytest.mark.slow
def test_report_round_trips_with_signatures():
    report = tflite_flops.analyze(DECODER, all_signatures=True)
    again = Report.from_json(report.to_json())
    assert again == report
    assert again.signatures["decode"].tokens.kv_cache_inputs == report.signatures["decode"].tokens.kv_cache_inputs
    assert tflite_flops.analyze(DECODER).signatures == {}  # only when asked


@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_signatures_are_rendered(fmt):
    text = render(tflite_flops.analyze(DECODER, all_signatures=True), fmt)
    assert "Signatures (per call)" in text
    assert "weights over all signatures, each shared weight once: 98.31 K params" in text
    assert "1.573 M" in text and "98.3 K" in text  # prefill MACs, MACs per token


def test_roles_from_the_token_dim_and_from_the_user():
    model = load_model(DECODER)
    # Keys without a hint: the token input's length decides (16 -> prefill, 1 -> decode).
    renamed = dataclasses.replace(model, signatures=tuple(
        dataclasses.replace(s, key={"prefill": "sig_a", "decode": "sig_b"}[s.key]) for s in model.signatures))
    roles = signature_roles(renamed)
    assert roles == {"sig_a": ("prefill", "tokens", 16), "sig_b": ("decode", "tokens", 1)}
    # Named by the user, the other signature of the same role is not taken.
    assert signature_roles(model, prefill="decode") == {"decode": ("prefill", "tokens", 1)}
    report = tflite_flops.analyze(DECODER, all_signatures=True, prefill="decode", decode="prefill")
    assert report.signatures["decode"].tokens.role == "prefill"
    assert report.signatures["prefill"].tokens.role == "decode"
    with pytest.raises(InputSpecError, match="no such signature"):
        tflite_flops.analyze(DECODER, all_signatures=True, decode="generate")


def test_cli_bad_signature_name_is_one_line():
    run = _cli("--prefill", "nope")
    assert run.returncode == 2  # a bad option value (InputSpecError): usage
    assert run.stderr.strip().splitlines() == [
        "error: --prefill 'nope': no such signature (signatures: decode, prefill)"]


def test_all_signatures_without_signatures_is_an_error():
    from tflite_builder import fc_model

    with pytest.raises(InputSpecError, match="no signatures"):
        tflite_flops.analyze(fc_model(), all_signatures=True)


@pytest.mark.runtime
def test_tokens_per_second_with_an_injected_clock():
    from tflite_flops.measure.bench import BenchSettings
    from tflite_flops.measure.tokens import measure_signatures
    from tflite_flops.measure.runtime import RuntimeSettings

    ticks = iter(range(0, 10**12, 1_000_000))  # every clock read is 1 ms after the previous one

    report = tflite_flops.analyze(DECODER, all_signatures=True)
    measured = measure_signatures(report, str(DECODER), RuntimeSettings(), BenchSettings(runs=5, warmup=2),
                                  clock=lambda: next(ticks))
    pre, dec = measured.signatures["prefill"], measured.signatures["decode"]
    # Each timed call spans one clock step: 1 ms. Prefill: 16 tokens / 1 ms = 16,000 tokens/s and the
    # first token after one prefill call, 1 ms; decode: 1 token / 1 ms = 1,000 tokens/s.
    assert pre.latency.median_ms == dec.latency.median_ms == 1.0
    assert pre.tokens.tokens_per_s == 16_000.0 and pre.tokens.time_to_first_token_ms == 1.0
    assert dec.tokens.tokens_per_s == 1_000.0 and dec.tokens.time_to_first_token_ms is None
    assert Report.from_json(measured.to_json()) == measured


@pytest.mark.runtime
@pytest.mark.slow
def test_cli_latency_prints_tokens_per_second():
    run = _cli("--all-signatures", "--latency", "--runs", "5", "--warmup", "2")
    assert run.returncode == 0, run.stderr
    assert "decode 'decode': " in run.stdout and " tokens/s (" in run.stdout
    assert "prefill 'prefill' (16 tokens): " in run.stdout and "time to first token" in run.stdout


def test_bytes_per_token_and_the_memory_bound_limit():
    from tflite_flops.measure.tokens import token_roofline

    report = tflite_flops.analyze(DECODER, all_signatures=True)
    pre, dec = report.signatures["prefill"].tokens, report.signatures["decode"].tokens
    # decode: all 327,688 weight bytes, one 256-byte embedding row + the whole 65,536-byte cache for one token
    assert dec.bytes_per_token == 327_688 + 256 + 65_536 == 393_480
    # prefill: round((327,688 + 16·256) / 16) = 20,736 + 65,536 / 16 = 4,096 -> 24,832 B per token
    assert pre.bytes_per_token == 20_736 + 4_096
    bounded = token_roofline(report, peak_bytes_per_s=393_480_000.0)  # a made-up 393 MB/s
    # 393,480,000 B/s ÷ 393,480 B per token = 1,000 tokens/s; prefill ÷ 24,832 = 15,845.7
    assert bounded.signatures["decode"].tokens.roofline_tokens_per_s == 1_000.0
    assert round(bounded.signatures["prefill"].tokens.roofline_tokens_per_s, 1) == 15_845.7
    assert "memory-bound limit 1,000 tokens/s" in render(bounded, "table")
    assert Report.from_json(bounded.to_json()) == bounded
