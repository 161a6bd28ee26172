"""LiteRT-LM bundles (``.litertlm``): the container reader, the analysis of a model section, every command.

References, independent of our reader:

* the official ``litert-lm-builder`` writes the sample bundle and the multi-section ones, and its
  ``litertlm_peek`` extracts the model section: analysed as a plain .tflite, it must give the
  figures of the bundle, signature by signature;
* the builder's generated flatbuffer bindings read the header, and its protobuf classes read the
  LlmMetadata: they must agree with our reader on every section and metadata entry;
* a model whose weights are moved into external buffers with the official LiteRT schema bindings
  must count the same params and bytes as the original.

Bad bundles are hand-built (``bundle_helpers.bundle_bytes``): they must fail with one
``ModelFormatError`` line, and through the CLI with one ``error:`` line and no traceback.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
from pathlib import Path

import cli_process
import pytest
from bundle_helpers import (LLM_METADATA, SP_TOKENIZER, TFLITE_MODEL, TFLITE_WEIGHTS, bundle_bytes, externalise,
                            header_flatbuffer)
from lanes import slow_cases

import tflite_flops
from tflite_flops.errors import InputSpecError, ModelFormatError, TfliteFlopsError
from tflite_flops.reader.bundle import MAX_ENTRIES, read_bundle
from tflite_flops.reader.load import load_model
from tflite_flops.render import render
from tflite_flops.report import Report

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
BUNDLE = SAMPLES / "tiny_decoder.litertlm"
DECODER = SAMPLES / "tiny_decoder.tflite"
MLP = SAMPLES / "mlp_dynamic_batch.tflite"
PD = {"model_type": "tf_lite_prefill_decode"}
EMB = {"model_type": "tf_lite_embedder", "backend_constraint": "cpu"}


def _signature_figures(report: Report) -> dict[str, tuple]:
    return {k: (s.totals, s.memory, s.tokens, s.operators) for k, s in report.signatures.items()}


# ---- the sample bundle against the official tools ------------------------------------------------


def test_the_sample_bundle_is_small_and_holds_the_decoder():
    assert BUNDLE.stat().st_size < 1 << 20
    model = load_model(BUNDLE)
    assert model.section is not None and model.section.model_type == "tf_lite_prefill_decode"
    # the section's bytes are tiny_decoder.tflite's, read in place (a view, not a copy)
    assert bytes(model.bundle.view(model.section)) == DECODER.read_bytes()
    assert model.size_bytes == DECODER.stat().st_size


def test_the_hash_is_the_bundles_whether_read_from_its_file_or_its_bytes():
    import hashlib

    whole = hashlib.sha256(BUNDLE.read_bytes()).hexdigest()
    assert tflite_flops.analyze(BUNDLE).model.sha256 == tflite_flops.analyze(BUNDLE.read_bytes()).model.sha256 == whole


@pytest.mark.slow
def test_bundle_all_signatures_equal_the_model_inside():
    """The done-when of issue 23: per-signature MACs, bytes and memory of the bundle = of its model."""
    bundle = tflite_flops.analyze(BUNDLE, all_signatures=True)
    plain = tflite_flops.analyze(DECODER, all_signatures=True)
    assert set(bundle.signatures) == {"prefill", "decode"}
    assert _signature_figures(bundle) == _signature_figures(plain)
    assert bundle.totals == plain.totals and bundle.memory == plain.memory and bundle.ops == plain.ops
    assert bundle.signatures["decode"].totals.macs == 98_304  # 2 layers · 40,960 + 64·256 logits
    assert bundle.signatures["prefill"].totals.macs == 1_572_864  # 16 tokens · 98,304
    assert plain.bundle is None and bundle.bundle is not None


@pytest.mark.bundle
@pytest.mark.slow
def test_the_section_extracted_by_the_official_tool_gives_identical_figures(tmp_path):
    from litert_lm_builder import litertlm_peek

    litertlm_peek.peek_litertlm_file(str(BUNDLE), dump_files_dir=str(tmp_path), output_stream=io.StringIO())
    extracted = [p for p in tmp_path.iterdir() if p.suffix == ".tflite"]
    assert len(extracted) == 1
    via_tool = tflite_flops.analyze(extracted[0], all_signatures=True)
    ours = tflite_flops.analyze(BUNDLE, all_signatures=True)
    assert _signature_figures(via_tool) == _signature_figures(ours)
    assert via_tool.totals == ours.totals and via_tool.memory == ours.memory


@pytest.mark.bundle
def test_the_header_agrees_with_the_official_bindings():
    from litert_lm_builder import litertlm_header_schema_py_generated as schema
    from litert_lm_builder.runtime.proto import llm_metadata_pb2

    data = BUNDLE.read_bytes()
    (end,) = struct.unpack_from("<Q", data, 24)
    root = schema.LiteRTLMMetaData.GetRootAs(data[32:end], 0)
    ours = read_bundle(data)
    objects = root.SectionMetadata()
    assert objects.ObjectsLength() == len(ours.sections)
    names = {v: k for k, v in vars(schema.AnySectionDataType).items() if not k.startswith("_")}
    for i, s in enumerate(ours.sections):
        obj = objects.Objects(i)
        assert (obj.BeginOffset(), obj.EndOffset(), names[obj.DataType()]) == (s.begin, s.end, s.kind)
        items = {obj.Items(j).Key().decode(): obj.Items(j) for j in range(obj.ItemsLength())}
        assert set(items) == set(s.items)
    system = root.SystemMetadata()
    official = {}
    for j in range(system.EntriesLength()):
        kv = system.Entries(j)
        value = schema.StringValue()
        value.Init(kv.Value().Bytes, kv.Value().Pos)
        official[kv.Key().decode()] = value.Value().decode()
    assert official == dict(ours.system_metadata)
    assert ours.version == "1.7.0" and ours.tokenizer == "sentencepiece"
    proto = next(s for s in ours.sections if s.kind == "LlmMetadataProto")
    msg = llm_metadata_pb2.LlmMetadata.FromString(data[proto.begin:proto.end])
    assert ours.llm.max_num_tokens == msg.max_num_tokens == 64
    assert ours.llm.model_type == msg.llm_model_type.WhichOneof("model_type") == "generic_model"
    assert ours.llm.start_token == "ids " + " ".join(map(str, msg.start_token.token_ids.ids)) == "ids 1"
    assert ours.llm.stop_tokens == tuple("ids " + " ".join(map(str, t.token_ids.ids)) for t in msg.stop_tokens)


@pytest.mark.bundle
@pytest.mark.slow
def test_two_model_sections_built_by_the_official_builder(tmp_path):
    from litert_lm_builder import litertlm_builder as lb

    builder = lb.LitertLmFileBuilder()
    builder.add_tflite_model(str(MLP), lb.TfLiteModelType.EMBEDDER)
    builder.add_tflite_model(str(DECODER), lb.TfLiteModelType.PREFILL_DECODE, backend_constraint="cpu, gpu")
    path = tmp_path / "two.litertlm"
    with open(path, "wb") as f:
        builder.build(f)
    default = tflite_flops.analyze(path)
    assert default.bundle.section == 1 and default.totals == tflite_flops.analyze(DECODER).totals  # prefill_decode
    assert default.bundle.analysed.backend_constraint == "cpu, gpu"
    for which in ("embedder", "tf_lite_embedder", "0", 0):
        assert tflite_flops.analyze(path, section=which).totals == tflite_flops.analyze(MLP).totals
    everything = tflite_flops.analyze(path, all_sections=True)
    by_index = {s.index: s for s in everything.bundle.sections}
    assert by_index[0].totals == tflite_flops.analyze(MLP).totals and by_index[0].operators == 3
    assert by_index[1].totals == default.totals and by_index[1].analysed
    with pytest.raises(InputSpecError, match="no model section 'vision_encoder'.*#0 tf_lite_embedder"):
        tflite_flops.analyze(path, section="vision_encoder")


# ---- hand-built bundles ---------------------------------------------------------------------------


def test_a_hand_built_bundle_reads_with_its_metadata():
    data = bundle_bytes([(TFLITE_MODEL, DECODER.read_bytes(), {**PD, "n": 7}), (200, b"future", {})],
                        {"Authors": "tests", "layers": 2})
    b = read_bundle(data)
    assert [s.kind for s in b.sections] == ["TFLiteModel", "unknown(200)"]
    assert dict(b.system_metadata) == {"Authors": "tests", "layers": 2}
    assert b.sections[0].items["n"] == 7 and b.tokenizer is None and b.llm is None
    report = tflite_flops.analyze(data, all_signatures=True)  # an unknown section type is listed, not fatal
    assert _signature_figures(report) == _signature_figures(tflite_flops.analyze(DECODER, all_signatures=True))
    assert [s.kind for s in report.bundle.sections] == ["TFLiteModel", "unknown(200)"]


@pytest.mark.parametrize("sample", slow_cases(sorted(p.name for p in SAMPLES.glob("*.tflite")),
                                             {"lstm.tflite", "tiny_decoder.tflite", "tiny_decoder_kv.tflite"}))
def test_every_sample_in_a_bundle_is_analysed_like_its_tflite_file(sample):
    """A model section is read from a view of the bundle (a memoryview), the file from bytes or a map: every
    sample, the per-channel quantized ones (cnn_int8, cnn_dynamic_range) among them, gives the same report."""
    model = (SAMPLES / sample).read_bytes()
    bundled = tflite_flops.analyze(bundle_bytes([(TFLITE_MODEL, model, PD)]), all_signatures=True)
    alone = tflite_flops.analyze(model, all_signatures=True)
    assert _signature_figures(bundled) == _signature_figures(alone)
    assert (bundled.ops, bundled.totals, bundled.memory) == (alone.ops, alone.totals, alone.memory)


@pytest.mark.slow
def test_externalised_weights_count_for_params_and_bytes_but_are_not_read():
    model, weights = externalise(DECODER.read_bytes())
    assert len(model) < 32 * 1024 < len(weights)  # the weights really left the model
    data = bundle_bytes([(TFLITE_MODEL, model, PD), (TFLITE_WEIGHTS, weights, PD)])
    ours = tflite_flops.analyze(data, all_signatures=True)
    plain = tflite_flops.analyze(DECODER, all_signatures=True)
    # the stored float32 tensors: the embedding and the head 2·256·64, QKV 2·192·64, FFN 2·(128·64 + 64·128),
    # the output projection 2·64·64 (the converter folded the RMSNorm gains into them) = 98,304, and 2 scalars
    # that ops compute with; 98,306 · 4 B = 393,224 B. The embedding table, read by a GATHER, counts (issue 42).
    assert (ours.totals.params, ours.totals.param_bytes) == (plain.totals.params, plain.totals.param_bytes) \
        == (98_306, 393_224)
    assert _signature_figures(ours) == _signature_figures(plain)
    assert ours.bundle.external_weight_bytes == len(weights)
    parsed = load_model(data)
    external = [t for sg in parsed.subgraphs for t in sg.tensors if t.is_external]
    assert external and all(parsed.constant(t) is None for t in external)  # counted, never read
    # an external range past the end of its weights section is refused, naming the buffer
    short = bundle_bytes([(TFLITE_MODEL, model, PD), (TFLITE_WEIGHTS, weights[:100], PD)])
    with pytest.raises(ModelFormatError, match="external buffer 1 .* outside its 100-byte TFLiteWeights section"):
        load_model(short)


def _model_and_tokenizer() -> list:
    return [(TFLITE_MODEL, MLP.read_bytes(), PD), (SP_TOKENIZER, b"\x0a\x00", {})]


BAD_BUNDLES = {
    "truncated header": (lambda: bundle_bytes(_model_and_tokenizer())[:20], "truncated LiteRT-LM header"),
    "header ends past the file": (lambda: bundle_bytes(_model_and_tokenizer(), header_end=1 << 40),
                                  "header ends at byte 1099511627776, outside"),
    "header cut inside the flatbuffer": (lambda: bundle_bytes(_model_and_tokenizer())[:60], "outside"),
    "section past the end": (lambda: bundle_bytes(_model_and_tokenizer(), ranges={1: (16384 * 2, 1 << 33)}),
                             "section 1 (SP_Tokenizer) spans bytes 32768..8589934592, outside"),
    "section inside the header": (lambda: bundle_bytes(_model_and_tokenizer(), ranges={0: (8, 3000)}),
                                  "section 0 (TFLiteModel) spans bytes 8..3000"),
    "section ends before it begins": (lambda: bundle_bytes(_model_and_tokenizer(), ranges={0: (20000, 16384)}),
                                      "spans bytes 20000..16384"),
    "newer major version": (lambda: bundle_bytes(_model_and_tokenizer(), version=(2, 0, 0)), "version 2.0.0 is newer"),
    "no model section": (lambda: bundle_bytes([(SP_TOKENIZER, b"x", {}), (99, b"y", {})]),
                         "no TFLite model section (sections: SP_Tokenizer, unknown(99))"),
    "model section is not a model": (lambda: bundle_bytes([(TFLITE_MODEL, b"\0" * 64, PD)]),
                                     "section #0 tf_lite_prefill_decode: not a TFLite flatbuffer"),
    "bad LlmMetadata": (lambda: bundle_bytes([(TFLITE_MODEL, MLP.read_bytes(), PD), (LLM_METADATA, b"\x0a\xff", {})]),
                        "section 1 (LlmMetadataProto): protobuf"),
}


@pytest.mark.parametrize("case", list(BAD_BUNDLES))
def test_bad_bundles_raise_one_model_format_error(case):
    make, message = BAD_BUNDLES[case]
    with pytest.raises(ModelFormatError, match=re.escape(message)):
        load_model(make())


def test_a_huge_vector_in_the_header_is_refused_before_anything_is_allocated():
    data = bytearray(bundle_bytes(_model_and_tokenizer()))
    fb = header_flatbuffer([(TFLITE_MODEL, 16384, 16400, {})], {})
    # find the section vector's length (1) and make it MAX_ENTRIES + 1
    at = data.find(fb[:8], 32)
    assert at == 32
    patched = bytearray(fb)
    for pos in range(0, len(patched) - 4, 4):
        if struct.unpack_from("<I", patched, pos)[0] == 1 and pos > 8:
            trial = bytearray(patched)
            struct.pack_into("<I", trial, pos, MAX_ENTRIES + 1)
            try:
                read_bundle(b"LITERTLM" + struct.pack("<3I", 1, 7, 0) + b"\0" * 4
                            + struct.pack("<Q", 32 + len(trial)) + bytes(trial) + b"\0" * 20000)
            except ModelFormatError as exc:
                if "limit" in str(exc):
                    return
    pytest.fail("no vector length was refused by its limit")


def test_section_option_errors():
    with pytest.raises(InputSpecError, match="applies to a LiteRT-LM bundle"):
        tflite_flops.analyze(DECODER, section="0")
    with pytest.raises(InputSpecError, match="section 1 is a SP_Tokenizer section"):
        tflite_flops.analyze(bundle_bytes(_model_and_tokenizer()), section=1)
    with pytest.raises(InputSpecError, match="section 5 is no section"):
        tflite_flops.analyze(bundle_bytes(_model_and_tokenizer()), section="5")
    with pytest.raises(InputSpecError, match="applies to a LiteRT-LM bundle"):
        tflite_flops.analyze(DECODER, all_sections=True)


def test_a_section_that_cannot_be_analysed_is_named_with_its_reason():
    # the embedder section is no flatbuffer: the prefill_decode model is analysed, the embedder says why not
    data = bundle_bytes([(TFLITE_MODEL, DECODER.read_bytes(), PD), (TFLITE_MODEL, b"TFL3" * 16, EMB)])
    report = tflite_flops.analyze(data, all_sections=True)
    broken = report.bundle.sections[1]
    assert broken.totals is None and broken.error == \
        "section #1 tf_lite_embedder: root table offset 860636756 lies outside the 64-byte file"
    assert any("section 1 not analysed" in line for line in render(report, "table").splitlines())


@pytest.mark.slow
def test_the_bundle_record_round_trips_through_json():
    data = bundle_bytes([(TFLITE_MODEL, DECODER.read_bytes(), PD), (TFLITE_MODEL, MLP.read_bytes(), EMB),
                         (LLM_METADATA, BUNDLE_LLM_METADATA, {})], {"Authors": "tests", "n": 3})
    report = tflite_flops.analyze(data, all_sections=True, all_signatures=True)
    again = Report.from_json(report.to_json())
    assert again == report and again.bundle.sections[1].totals.macs == report.bundle.sections[1].totals.macs > 0
    assert again.bundle.llm.stop_tokens == ("ids 2", "<eos>")
    assert "bundle" not in tflite_flops.analyze(DECODER).to_dict()  # the .tflite reports are unchanged


# LlmMetadata written by hand: start_token{token_ids{ids:1}}, stop_tokens x2 (ids 2; "<eos>"),
# max_num_tokens 64, llm_model_type{gemma3{}}
BUNDLE_LLM_METADATA = (b"\x0a\x04\x0a\x02\x08\x01" + b"\x12\x04\x0a\x02\x08\x02" + b"\x12\x07\x12\x05<eos>"
                       + b"\x28\x40" + b"\x32\x02\x22\x00")


def test_llm_metadata_fields():
    data = bundle_bytes([(TFLITE_MODEL, MLP.read_bytes(), PD), (LLM_METADATA, BUNDLE_LLM_METADATA, {})])
    llm = read_bundle(data).llm
    assert (llm.model_type, llm.max_num_tokens, llm.start_token, llm.stop_tokens) == \
        ("gemma3", 64, "ids 1", ("ids 2", "<eos>"))


# ---- the CLI and every command ----------------------------------------------------------------------


def _run(args, cwd=ROOT):
    return cli_process.run(["analyze", *args] if args and args[0] not in ("compare", "sweep", "batch") else args,
                           cwd=cwd)


@pytest.mark.parametrize("case", ["truncated header", "section past the end", "no model section",
                                  "model section is not a model"])
def test_the_cli_prints_one_error_line_for_a_bad_bundle(tmp_path, case):
    path = tmp_path / "bad.litertlm"
    path.write_bytes(BAD_BUNDLES[case][0]())
    out = tmp_path / "report.json"
    done = _run([str(path), "-o", str(out)])
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr
    assert not out.exists()  # nothing half-written


def test_analyze_a_bundle_on_the_command_line():
    done = _run([str(BUNDLE), "--all-signatures", "--all-sections", "--format", "json"])
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert d["bundle"]["section"] == 0 and d["bundle"]["tokenizer"] == "sentencepiece"
    assert d["bundle"]["llm"]["max_num_tokens"] == 64
    assert d["bundle"]["sections"][0]["totals"]["macs"] == 98_304
    assert d["signatures"]["decode"]["totals"]["macs"] == 98_304
    table = _run([str(BUNDLE), "--section", "prefill_decode"])
    assert table.returncode == 0 and "LiteRT-LM bundle, format 1.7.0" in table.stdout
    assert "tokenizer: sentencepiece" in table.stdout
    bad = _run([str(BUNDLE), "--section", "embedder"])
    assert bad.returncode != 0 and bad.stderr.strip().splitlines() == [
        "error: no model section 'embedder'; model sections: #0 tf_lite_prefill_decode"]


@pytest.mark.slow
def test_compare_a_bundle_with_its_model_and_with_itself():
    for other in (DECODER, BUNDLE):
        done = _run(["compare", str(BUNDLE), str(other), "--format", "json"])
        assert done.returncode == 0, done.stderr
        macs = json.loads(done.stdout)["totals"]["macs"]
        assert (macs["a"], macs["b"], macs["delta"]) == (98_304, 98_304, 0)


@pytest.mark.slow
def test_sweep_and_batch_accept_bundles(tmp_path):
    sweep = _run(["sweep", str(BUNDLE), "--signature", "decode", "--input-shape", "tokens=1x1", "--format", "json"])
    assert sweep.returncode == 0, sweep.stderr
    assert json.loads(sweep.stdout)["points"][0]["totals"]["macs"] == 98_304
    (tmp_path / "zoo").mkdir()
    (tmp_path / "zoo" / "a.litertlm").write_bytes(BUNDLE.read_bytes())
    (tmp_path / "zoo" / "b.tflite").write_bytes(DECODER.read_bytes())
    batch = _run(["batch", str(tmp_path / "zoo"), "-j", "1", "--format", "json"])
    assert batch.returncode == 0, batch.stderr
    rows = {os.path.basename(r["model"]): r for r in json.loads(batch.stdout)["models"]}
    assert rows["a.litertlm"]["status"] == "ok" and rows["a.litertlm"]["macs"] == rows["b.tflite"]["macs"] == 98_304


@pytest.mark.slow
def test_the_budget_gate_reads_a_bundle():
    over = _run([str(BUNDLE), "--max-macs", "1000"])
    assert over.returncode == 3
    within = _run([str(BUNDLE), "--max-macs", "98304"])
    assert within.returncode == 0, within.stderr


# ---- the LiteRT-LM engine -----------------------------------------------------------------------------


def test_the_engine_says_why_it_did_not_run(monkeypatch):
    from tflite_flops.measure import engine

    assert "given as bytes" in engine.run_engine(None, 1, 4, 4).reason
    monkeypatch.setattr(engine, "engine_available", lambda: False)
    run = engine.run_engine(str(BUNDLE), 1, 4, 4)
    assert not run.ran and run.reason == "the LiteRT-LM engine is not installed (pip install litert-lm-api)"
    assert engine._engine_error("I0000 x.cc:1] fine\nE0000 00:00:1 engine.cc:1060] Failed to generate content: "
                                "INVALID_ARGUMENT: too long\nINFO: bye") == "INVALID_ARGUMENT: too long"


def test_a_runtime_is_given_the_model_section_not_the_container():
    from tflite_flops.measure.runtime import runnable_model

    assert runnable_model(str(BUNDLE)) == runnable_model(BUNDLE.read_bytes()) == DECODER.read_bytes()
    assert runnable_model(str(DECODER)) == str(DECODER)  # a .tflite path is handed over as it is


@pytest.mark.runtime
@pytest.mark.slow
def test_sweep_latency_on_a_bundle_times_its_model():
    done = _run(["sweep", str(BUNDLE), "--signature", "decode", "--input-shape", "tokens=1x1", "--latency",
                 "--runs", "3", "--format", "json"])
    assert done.returncode == 0 and "skipped" not in done.stderr, done.stderr
    assert json.loads(done.stdout)["points"][0]["latency"]["median_ms"] > 0


ENGINE_BUNDLE = SAMPLES / "tiny_decoder_engine.litertlm"


@pytest.mark.slow
def test_the_engine_sample_is_the_same_decoder_with_heads_first_caches():
    engine = tflite_flops.analyze(ENGINE_BUNDLE, all_signatures=True)
    plain = tflite_flops.analyze(DECODER, all_signatures=True)
    assert {k: s.totals.macs for k, s in engine.signatures.items()} == {"prefill": 1_572_864, "decode": 98_304}
    assert {k: s.totals.macs for k, s in plain.signatures.items()} == {"prefill": 1_572_864, "decode": 98_304}
    assert engine.signatures["decode"].tokens.kv_cache_bytes == plain.signatures["decode"].tokens.kv_cache_bytes
    assert [t.shape for t in engine.signatures["decode"].inputs if t.name == "kv_cache_k_0"] == [(1, 4, 64, 16)]


@pytest.mark.engine
@pytest.mark.runtime
@pytest.mark.slow
def test_latency_on_a_bundle_runs_the_engine_and_the_signature_runner(tmp_path):
    """Where the engine runs (Linux x86_64 here), its tokens/s are in the report next to the signature
    runner's; on the bundle whose caches it cannot lay out, one line says why and the runner still measures."""
    import litert_lm  # noqa: F401 - the engine must be installed (CI fails here otherwise)

    from tflite_flops.measure.bench import BenchSettings

    for sample in (ENGINE_BUNDLE, BUNDLE):
        path = tmp_path / sample.name
        path.write_bytes(sample.read_bytes())
        report = tflite_flops.analyze(path, all_signatures=True, latency=True, bench=BenchSettings(runs=3, warmup=1))
        engine = report.bundle.engine
        if sample == ENGINE_BUNDLE:
            assert engine.ran and engine.reason is None, engine
            assert engine.prefill_tokens == 16 and engine.decode_tokens > 0  # the prefill signature's 16 tokens
            assert engine.prefill_tokens_per_s > 0 and engine.decode_tokens_per_s > 0
            assert engine.time_to_first_token_s > 0 and engine.init_s > 0
            assert "LiteRT-LM engine (cpu, litert-lm-api" in render(report, "table")
        else:  # the engine reads the context length from the cache's dim 2: 4 heads, not 64 slots
            assert not engine.ran and "\n" not in engine.reason
            # litert-lm-api 0.18: "... Exceeding the maximum number of tokens allowed: 16 >= 4"
            assert "token" in engine.reason.lower()
            assert "LiteRT-LM engine did not run: " in render(report, "table")
        # the signature runner measured the section either way
        assert report.signatures["decode"].tokens.tokens_per_s > 0
        assert report.signatures["prefill"].tokens.time_to_first_token_ms > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([BUNDLE.name, ENGINE_BUNDLE.name])  # no cache left


# A case's work limit in function calls (a hang or blow-up fails, whatever the machine's speed):
# ten times the costliest seed (the decoder's analysis, ~500,000 calls), as in test_fuzz.py.
FUZZ_CASE_CALLS = 5_000_000


def _fuzz_bundles(cases: int) -> dict[str, int]:
    """Header-focused mutations (4 in 5 cases mutate only the header) of the sample bundle and a
    three-section one; every case reads and analyses (all sections) or raises TfliteFlopsError."""
    import random

    from fuzz_corpus import mutate
    from work_counter import count_calls

    seeds = [BUNDLE.read_bytes(), bundle_bytes([(TFLITE_MODEL, MLP.read_bytes(), PD), (TFLITE_MODEL, b"x" * 10, EMB),
                                                (LLM_METADATA, BUNDLE_LLM_METADATA, {})])]
    rng = random.Random(23)
    outcomes = {"read": 0, "refused": 0}

    def case(data: bytes) -> str:
        try:
            model = load_model(data)
            tflite_flops.analyze(model, all_sections=model.bundle is not None).to_json()
        except TfliteFlopsError:
            return "refused"
        return "read"

    for _ in range(cases):
        seed = seeds[rng.randrange(len(seeds))]
        (end,) = struct.unpack_from("<Q", seed, 24)
        if rng.random() < 0.8:
            data = mutate(rng, seed[:end], [s[:end] for s in seeds])[0] + seed[end:]
        else:
            data = mutate(rng, seed, seeds)[0]
        counted = count_calls(case, data, limit=FUZZ_CASE_CALLS)  # raises WorkLimitExceeded on a runaway
        if counted.error is not None:
            raise counted.error  # anything but TfliteFlopsError escaping
        outcomes[counted.result] += 1
    return outcomes


@pytest.mark.slow
def test_fuzzing_the_container_only_raises_our_errors():
    outcomes = _fuzz_bundles(100)
    assert outcomes["read"] and outcomes["refused"] and sum(outcomes.values()) == 100


@pytest.mark.slow
def test_fuzzing_the_container_long():
    assert sum(_fuzz_bundles(int(os.environ.get("TFLITE_FLOPS_FUZZ_CASES", "3000")) // 3).values()) > 0


# ---- big bundles stay O(ops) --------------------------------------------------------------------------

_RSS_CODE = ("import sys, tflite_flops\n"
             "def kb(k):\n    return int(next(l for l in open('/proc/self/status') if l.startswith(k)).split()[1])\n"
             "base = kb('VmRSS'); r = tflite_flops.analyze(sys.argv[1])\n"
             "assert r.totals.macs == 4096 * 4096 and r.totals.params == 4096 * 4096 + 0, r.totals\n"
             "print((kb('VmHWM') - base) // 1024, r.bundle.external_weight_bytes)\n")


def _fc_model(weight: bytes | None) -> bytes:
    import numpy as np
    from tflite_builder import FULLY_CONNECTED, build_model

    sg = {"tensors": [{"name": "x", "shape": [1, 4096]}, {"name": "w", "shape": [4096, 4096], "buffer": 1},
                      {"name": "y", "shape": [1, 4096]}],
          "operators": [{"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]}], "inputs": [0], "outputs": [2]}
    w = weight if weight is not None else np.full((4096, 4096), 0.5, dtype=np.float32).tobytes()
    return build_model([sg], [FULLY_CONNECTED], buffers=[None, w])


@pytest.mark.slow
@pytest.mark.parametrize("where", ["in the model section", "in a 2 GiB weights section"])
def test_memory_does_not_grow_with_a_bundles_weights(tmp_path, where):
    """64 MiB of weights in the model section (zero counting reads and releases them chunk by chunk),
    or 64 MiB externalised into a sparse 2 GiB TFLiteWeights section (never read): RSS stays far below."""
    import subprocess
    import sys

    path = tmp_path / "big.litertlm"
    if where == "in the model section":
        path.write_bytes(bundle_bytes([(TFLITE_MODEL, _fc_model(None), PD)]))
    else:
        model, weights = externalise(_fc_model(b"\0" * 4), min_bytes=4)  # a 4-byte stand-in, then resized
        from ai_edge_litert import schema_py_generated as schema
        import flatbuffers

        m = schema.ModelT.InitFromPackedBuf(model, 0)
        m.externalBuffers[0].length = 4096 * 4096 * 4
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        head = bundle_bytes([(TFLITE_MODEL, bytes(b.Output()), PD), (TFLITE_WEIGHTS, b"", PD)])
        weights_at = read_bundle(head).sections[1].begin
        header = bundle_bytes([(TFLITE_MODEL, bytes(b.Output()), PD), (TFLITE_WEIGHTS, b"", PD)],
                              ranges={1: (weights_at, weights_at + (2 << 30))})
        with open(path, "wb") as f:
            f.write(header)
            f.truncate(weights_at + (2 << 30))  # a hole: nothing is written, nothing may be read
    proc = subprocess.run([sys.executable, "-c", _RSS_CODE, str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    grown_mb, external = map(int, proc.stdout.split()[-2:])
    assert grown_mb < 32, f"analysis grew RSS by {grown_mb} MB"
    assert external == (0 if where == "in the model section" else 2 << 30)


def test_truncation_at_every_point_of_a_bundle():
    """Every byte of the header and every 997th after: each prefix loads or raises our own error."""
    data = BUNDLE.read_bytes()
    (end,) = struct.unpack_from("<Q", data, 24)
    cuts = list(range(0, end + 64)) + list(range(end + 64, len(data), 997))
    loaded = 0
    for cut in cuts:
        try:
            load_model(data[:cut])
            loaded += 1
        except TfliteFlopsError:
            pass
    assert loaded == 0  # a section always ends at the end of the file (the metadata section): any cut breaks it


@pytest.mark.slow
def test_analysing_a_bundle_imports_no_runtime_nor_the_official_tools():
    import subprocess
    import sys

    code = ("import sys, runpy; sys.argv = ['tflite_flops', 'analyze', 'sample_models/tiny_decoder.litertlm',"
            " '--all-signatures', '--all-sections'];\n"
            "try:\n    runpy.run_module('tflite_flops', run_name='__main__')\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "heavy = ('tensorflow', 'ai_edge_litert', 'litert_lm', 'litert_lm_builder', 'sentencepiece', 'google')\n"
            "print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in heavy), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr and "LiteRT-LM bundle" in proc.stdout
