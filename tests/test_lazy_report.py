"""Pay for what you use: the sections of a report are computed at their first read (report.lazy).

``analyze()`` leaves the delegates' placement and the memory plan (``delegation``, ``memory`` and their per-op
fields), within the memory TFLite Micro's arena and XNNPACK's memory with the arena it leaves
(``memory.runtime_xnnpack``), the advice and the warnings those may add deferred; reading one computes it once.
The work is counted (calls of the passes), never timed, and a lazy report equals one whose sections were
computed inside the analysis.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from lanes import slow_cases
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
    """``{pass: calls}`` of the deferred passes: the placement (one call per delegate), the memory plan, TFLite
    Micro's arena, XNNPACK's memory, the advice."""
    counted = {"place": 0, "memory": 0, "tflm": 0, "xnnpack_memory": 0, "advise": 0}

    def counting(name, real):
        def run(*args, **kwargs):
            counted[name] += 1
            return real(*args, **kwargs)
        return run

    monkeypatch.setattr(assemble, "place_model", counting("place", assemble.place_model))
    monkeypatch.setattr(assemble, "memory", counting("memory", assemble.memory))
    monkeypatch.setattr(memory_module, "tflm_figures", counting("tflm", memory_module.tflm_figures))
    monkeypatch.setattr(assemble, "xnnpack_memory", counting("xnnpack_memory", assemble.xnnpack_memory))
    monkeypatch.setattr(advice_module, "advise", counting("advise", advice_module.advise))
    return counted


NONE = {"place": 0, "memory": 0, "tflm": 0, "xnnpack_memory": 0, "advise": 0}


def test_analyze_runs_none_of_the_deferred_passes(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite")
    assert calls == NONE
    assert report.totals.macs > 0 and len(report.ops) == 12  # the costs, as before
    assert sorted(lazy.pending(report)) == ["advice", "delegation", "memory", "warnings"]
    assert lazy.pending(report.ops[0]) == ["live_bytes", "temporaries_bytes", "xnnpack", "xnnpack_reason",
                                           "xnnpack_partition", "gpu", "gpu_reason", "gpu_partition"]
    assert "runtime_xnnpack" in lazy.pending(report.memory) and "tflm_arena_size_bytes" in lazy.pending(report.memory)
    assert calls == {**NONE, "place": 2, "memory": 1}  # (reading the memory ran the placement it needs)


def test_each_deferred_section_runs_once_at_its_first_read(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite")
    assert report.ops[3].xnnpack is not None and report.ops[0].gpu is not None
    assert calls == {**NONE, "place": 2}  # both delegates, once, for every record
    assert report.ops[5].live_bytes and report.delegation["xnnpack"].delegated_ops
    assert calls == {**NONE, "place": 2, "memory": 1}
    first = report.memory.tflm_arena_size_bytes
    assert calls == {**NONE, "place": 2, "memory": 1, "tflm": 1}  # one read computes that section alone
    assert report.memory.tflm_head_bytes is not None and report.memory.tflm_arena_size_bytes == first
    assert report.warnings is report.warnings  # its TFLM lines were already added
    assert calls["tflm"] == 1
    assert report.memory.runtime_xnnpack is not None
    assert calls["xnnpack_memory"] == 1
    report.advice, report.advice
    assert calls == {"place": 2, "memory": 1, "tflm": 1, "xnnpack_memory": 1, "advise": 1}
    report.to_dict()
    render(report, "table")
    render(report, "csv")
    assert calls == {"place": 2, "memory": 1, "tflm": 1, "xnnpack_memory": 1, "advise": 1}
    assert lazy.pending(report) == [] and lazy.pending(report.memory) == []
    assert all(lazy.pending(o) == [] for o in report.ops)


def test_the_warnings_compute_the_passes_that_may_add_lines(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    report.warnings
    assert calls == {**NONE, "place": 2, "memory": 1, "tflm": 1}


def test_copies_share_what_is_not_computed_yet(calls):
    report = tflite_flops.analyze(SAMPLES / "cnn_float.tflite")
    copy_ = lazy.replace(report, notes=report.notes + ("a note",))
    assert calls == NONE
    assert copy_.advice == report.advice and copy_.memory == report.memory
    assert calls == {"place": 2, "memory": 1, "tflm": 1, "xnnpack_memory": 1, "advise": 1}  # once for both


@pytest.mark.parametrize("name", slow_cases(MODELS, {"tiny_decoder.tflite", "tiny_decoder_kv.tflite"}))
def test_a_lazy_report_equals_an_eager_one(name, monkeypatch):
    path = SAMPLES / name
    read_first = tflite_flops.analyze(path)  # the sections read in another order than the JSON's
    read_first.ops[-1].gpu, read_first.advice, read_first.memory.runtime_xnnpack, read_first.warnings
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
        assert [lazy.pending(o) for o in report.ops] == [[]] * len(report.ops)


def test_a_deferred_pass_that_raises_writes_nothing_and_says_one_line(tmp_path, monkeypatch, capsys):
    """The CLI renders every output before it writes one: a bug in a pass run at the first read is one
    error line, as it was inside analyze(), never a half-written file or table."""
    from tflite_flops.cli import main

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug in the memory pass")

    monkeypatch.setattr(assemble, "memory", broken)
    out = tmp_path / "report.json"
    code = main(["analyze", str(SAMPLES / "cnn_float.tflite"), "-o", str(out)])
    captured = capsys.readouterr()
    assert code != 0 and not out.exists() and captured.out == ""
    assert captured.err.strip().splitlines() == [
        "error: internal error (RuntimeError: a bug in the memory pass); rerun with --debug and report it"]
