"""Pay for what you use: the sections no per-op record needs are computed at their first read (report.lazy).

``analyze()`` leaves TFLite Micro's arena, XNNPACK's memory with the arena it leaves (``memory.runtime_xnnpack``),
the advice and the warnings those may add deferred; reading one computes it once. The work is counted (calls of
the passes), never timed, and a lazy report equals one whose sections were computed inside the analysis.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops.analysis import advice as advice_module
from tflite_flops.analysis import assemble, memory as memory_module
from tflite_flops.render import render
from tflite_flops.report import lazy

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
MODELS = (sorted(p.name for p in SAMPLES.glob("*.tflite"))
          + sorted(f"mcu/{p.name}" for p in (SAMPLES / "mcu").glob("*.tflite")))


@pytest.fixture
def calls(monkeypatch):
    """``{pass: calls}`` of the deferred passes: TFLite Micro's arena, XNNPACK's memory, the advice."""
    counted = {"tflm": 0, "xnnpack_memory": 0, "advise": 0}

    def counting(name, real):
        def run(*args, **kwargs):
            counted[name] += 1
            return real(*args, **kwargs)
        return run

    monkeypatch.setattr(memory_module, "tflm_figures", counting("tflm", memory_module.tflm_figures))
    monkeypatch.setattr(assemble, "xnnpack_memory", counting("xnnpack_memory", assemble.xnnpack_memory))
    monkeypatch.setattr(advice_module, "advise", counting("advise", advice_module.advise))
    return counted


def test_analyze_runs_none_of_the_deferred_passes(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite")
    assert calls == {"tflm": 0, "xnnpack_memory": 0, "advise": 0}
    assert report.totals.macs > 0 and report.ops[0].live_bytes is not None  # the per-op records are all there
    assert sorted(lazy.pending(report)) == ["advice", "warnings"]
    assert "runtime_xnnpack" in lazy.pending(report.memory) and "tflm_arena_size_bytes" in lazy.pending(report.memory)


def test_each_deferred_section_runs_once_at_its_first_read(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite")
    first = report.memory.tflm_arena_size_bytes
    assert calls == {"tflm": 1, "xnnpack_memory": 0, "advise": 0}  # one read computes that section alone
    assert report.memory.tflm_head_bytes is not None and report.memory.tflm_arena_size_bytes == first
    assert report.warnings is report.warnings  # its TFLM lines were already added
    assert calls["tflm"] == 1
    assert report.memory.runtime_xnnpack is not None
    assert calls["xnnpack_memory"] == 1
    report.advice, report.advice
    assert calls == {"tflm": 1, "xnnpack_memory": 1, "advise": 1}
    report.to_dict()
    render(report, "table")
    assert calls == {"tflm": 1, "xnnpack_memory": 1, "advise": 1}
    assert lazy.pending(report) == [] and lazy.pending(report.memory) == []


def test_the_warnings_compute_the_sections_that_add_lines(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    report.warnings
    assert calls == {"tflm": 1, "xnnpack_memory": 0, "advise": 0}


def test_copies_share_what_is_not_computed_yet(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    copy_ = lazy.replace(report, notes=report.notes + ("a note",))
    assert calls == {"tflm": 0, "xnnpack_memory": 0, "advise": 0}
    assert copy_.advice == report.advice and copy_.memory == report.memory
    assert calls == {"tflm": 1, "xnnpack_memory": 1, "advise": 1}  # computed once for both


@pytest.mark.parametrize("name", MODELS)
def test_a_lazy_report_equals_an_eager_one(name, monkeypatch):
    path = SAMPLES / name
    read_first = tflite_flops.analyze(path)  # the sections read in another order than the JSON's
    read_first.advice, read_first.memory.runtime_xnnpack, read_first.warnings
    lazy_report = tflite_flops.analyze(path)
    pickled = pickle.loads(pickle.dumps(tflite_flops.analyze(path)))  # batch workers: computed when pickled
    copied = copy.deepcopy(tflite_flops.analyze(path))
    monkeypatch.setattr(lazy, "EAGER", True)  # every section computed inside analyze(), where it was before
    eager = tflite_flops.analyze(path)
    assert lazy.pending(eager) == [] and lazy.pending(eager.memory) == []
    expected = eager.to_dict()
    for report in (lazy_report, read_first, pickled, copied):
        assert report.to_dict() == expected
        assert report == eager
