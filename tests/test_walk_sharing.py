"""The walk's shortcuts change no number: ops with equal formula inputs share one evaluation of
their cost formula, ops that need no shape work and repeat an earlier op's facts share its figures
(analysis._Shortcut), and the garbage collector paused during an analysis is always switched back on."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops import analysis
from tflite_flops.errors import ModelFormatError

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "sample_models").glob("*.tflite"))


def _evaluations(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = analysis._formula_cost

    def counting(spec, override, ctx, shape_note):
        calls.append(ctx.op_type)
        return real(spec, override, ctx, shape_note)

    monkeypatch.setattr(analysis, "_formula_cost", counting)
    return calls


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_shared_formula_results_equal_evaluating_every_op(path, monkeypatch):
    shared = tflite_flops.analyze(path, all_signatures=path.stem.startswith("tiny_decoder")).to_dict()
    calls = _evaluations(monkeypatch)
    monkeypatch.setattr(analysis, "_formula_key", lambda spec, ctx: None)  # None: never shared
    monkeypatch.setattr(analysis._Shortcut, "take", lambda self, op: None)  # every op walked by step
    alone = tflite_flops.analyze(path, all_signatures=path.stem.startswith("tiny_decoder")).to_dict()
    assert alone == shared
    assert len(calls) >= len(alone["ops"])  # every op evaluated (control flow bodies: per call site)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_op_shortcut_equals_walking_every_op(path, monkeypatch):
    """Only the op shortcut off (formula sharing on): same report, for every input-shape setting."""
    kwargs = [{}, {"batch": 2}, {"trust_stored_shapes": False}]
    shared = [_report(path, kw) for kw in kwargs]
    monkeypatch.setattr(analysis._Shortcut, "take", lambda self, op: None)
    assert [_report(path, kw) for kw in kwargs] == shared


def _report(path, kwargs):
    try:
        return tflite_flops.analyze(path, all_signatures=path.stem.startswith("tiny_decoder"), **kwargs).to_dict()
    except Exception as exc:  # noqa: BLE001 - a shape the model refuses: the same error both ways
        return repr(exc)


def test_the_op_shortcut_serves_repeated_layers(monkeypatch):
    walked = []
    real = analysis.step

    def counting(sg, state, op_index, trust_stored=True):
        walked.append(op_index)
        return real(sg, state, op_index, trust_stored)

    monkeypatch.setattr(analysis, "step", counting)
    report = tflite_flops.analyze(Path(__file__).resolve().parent.parent / "sample_models" / "transformer_block.tflite")
    assert 0 < len(walked) < len(report.ops)  # the repeated ops took an earlier op's figures


def test_repeated_layers_are_evaluated_once(monkeypatch):
    calls = _evaluations(monkeypatch)
    report = tflite_flops.analyze(Path(__file__).resolve().parent.parent / "sample_models" / "transformer_block.tflite")
    costed = [o for o in report.ops if o.status == "ok"]
    assert len(calls) < len(report.ops)  # some ops took an earlier op's result
    assert len(costed) > 0


def test_the_collector_is_switched_back_on(tmp_path):
    assert gc.isenabled()
    tflite_flops.analyze(SAMPLES[0])
    assert gc.isenabled()
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(ModelFormatError):
        tflite_flops.analyze(bad)
    assert gc.isenabled()  # also after an error
    gc.disable()
    try:
        tflite_flops.analyze(SAMPLES[0])
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()


def test_an_analysis_leaves_no_reference_cycles():
    """Everything an analysis makes is freed by reference counting (recursive closures drop their
    cycle), so the collector, paused during the analysis, has nothing to find after it."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fuzz_corpus import seed_corpus

    gc.collect()
    gc.disable()
    try:
        for data in seed_corpus():  # the samples, and models with control flow and custom ops
            model = tflite_flops.load_model(data)
            report = tflite_flops.analyze(model, all_signatures=bool(model.signatures))
            del model, report
            assert gc.collect() == 0
    finally:
        gc.enable()
