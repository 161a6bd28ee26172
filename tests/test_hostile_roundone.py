"""Quick tests of the round-one leftovers of issue 44 (their red-team cases, in ``tests/redteam_roundone.py``,
run in the slow lane): counts past a float in the charts, an input index of thousands of digits, a bound on
threads, the measuring child's first-run limit and memory check, ``--strict`` over a bundle's sections and
the operator density bound."""

from __future__ import annotations

import os
import time

import pytest

import tflite_flops
from redteam import huge_dims_model, shared_operator
from redteam_roundone import broken_sections_bundle, chain_model, range32_model
from tflite_flops.errors import InputSpecError, ModelFormatError
from tflite_flops.render import charts

# ---- 1. counts past a float's range are drawn with int arithmetic


def test_ticks_of_counts_past_a_float_are_exact_ints():
    hi = 2 * 10**373
    ticks = charts.nice_ticks(0, hi, 4)
    assert all(type(t) is int for t in ticks)  # 1e373 has no float: the ticks stay ints
    assert ticks[0] == 0 and ticks[-1] == hi and len(ticks) == 5
    assert ticks[1] == 10**373 // 2  # 2e373 / 4 = 5e372, a round step
    assert charts.nice_ticks(0, 1000, 4) == [0, 500, 1000]  # what fits a float is as before


def test_every_chart_takes_counts_past_a_float():
    big = 3 * 10**400
    assert "<svg" in charts.sequence_chart([(big, "#000", "a"), (1, "#000", "b")], title="t", y_label="y")
    assert "<svg" in charts.area_chart([(big, "a"), (0, "b")], title="t", y_label="y", peak=0)
    assert "<svg" in charts.hbar_chart([("a", big, "#000", "a"), ("b", 1, "#000", "b")], title="t")
    assert "<svg" in charts.paired_hbar_chart([("a", big, 1)], title="t", names=("A", "B"))
    assert charts.scatter_chart([(big, 1.0, "#000", "a")], title="t", x_label="x", y_label="y") == ""  # not drawn
    assert charts.line_chart(["a"], [("s", [big], "#000")], title="t", y_label="y") == ""
    assert charts._exponent(10**5000) == 5000 and charts._exponent(10**5000 - 1) == 4999  # past str()'s limit


def test_a_report_of_counts_past_a_float_renders_to_html():
    from tflite_flops.render import render

    page = render(tflite_flops.analyze(huge_dims_model()), "html")
    assert "e+373" in page


def test_a_tensor_of_more_than_64_dims_is_refused_at_load():
    from tflite_flops.reader.load import MAX_RANK, load_model

    assert len(load_model(huge_dims_model(MAX_RANK)).subgraphs[0].tensors[0].shape) == MAX_RANK
    with pytest.raises(ModelFormatError, match="tensor 0 \\('a'\\) has 600 dims \\(a TFLite tensor has at most 64\\)"):
        load_model(huge_dims_model(600))


# ---- 2. and 3. options


def test_an_input_index_of_thousands_of_digits_is_one_input_error():
    with pytest.raises(InputSpecError, match="input index of 5,000 digits"):
        tflite_flops.analyze(chain_model(2), input_shapes="9" * 5000 + "=1x4")
    with pytest.raises(InputSpecError, match="no input named"):
        tflite_flops.analyze(chain_model(2), input_shapes="\u00b2=1x4")  # a digit to isdigit(), not to int()
    assert tflite_flops.analyze(chain_model(2), input_shapes="0=1x4").totals.flops == 8


def test_threads_are_bounded():
    from tflite_flops.settings import MAX_THREADS

    assert tflite_flops.analyze(chain_model(1), threads=MAX_THREADS).settings is not None
    with pytest.raises(InputSpecError, match=f"at most {MAX_THREADS:,}"):
        tflite_flops.analyze(chain_model(1), threads=MAX_THREADS + 1)


# ---- 4. and 5. the measuring child


def _announce_then_sleep() -> None:
    from tflite_flops.measure.isolate import first_run_done

    first_run_done()
    time.sleep(0.5)
    return "done"


@pytest.mark.slow
def test_the_first_run_has_a_limit_of_its_own():
    from tflite_flops.measure.isolate import MeasurementTimeout, first_run_limit, run_in_child

    with pytest.raises(MeasurementTimeout, match="first run did not end within its time limit of 0.2 s"):
        run_in_child(time.sleep, 60, limit=60, first=0.2)
    # once the first run is announced, the whole limit applies
    assert run_in_child(_announce_then_sleep, limit=60, first=0.2) == "done"
    assert run_in_child(os.getpid, limit=60, first=0.2) != os.getpid()  # a result without an announcement
    assert first_run_limit(0, 400.0) == 30.0 and first_run_limit(10**12, 400.0) == 400.0
    assert first_run_limit(10**400, 7.0) == 7.0  # counts past a float


def test_a_run_that_needs_more_memory_than_is_left_is_refused_before_it_starts(monkeypatch):
    from tflite_flops.measure import isolate

    report = tflite_flops.analyze(range32_model(2**28))  # an int32 output of 1 GiB
    monkeypatch.setattr(isolate, "memory_headroom", lambda: 768 << 20)
    with pytest.raises(isolate.MeasurementTooLarge, match=r"at least 1\.0 GiB \(the output of op 0:0 RANGE.*"
                                                          r"than the 768\.0 MiB this process may still allocate"):
        isolate.check_memory(report)
    monkeypatch.setattr(isolate, "memory_headroom", lambda: 2 << 30)
    isolate.check_memory(report)  # room enough: it runs
    monkeypatch.setattr(isolate, "memory_headroom", lambda: None)
    isolate.check_memory(report)  # nothing known (not Linux): it runs


def test_the_memory_headroom_is_read_on_linux():
    from tflite_flops.measure.isolate import memory_headroom

    if os.path.exists("/proc/meminfo"):
        assert memory_headroom() > 0


# ---- 6. --strict and a bundle's broken sections


def test_strict_names_the_sections_that_could_not_be_analysed():
    from tflite_flops.report.completeness import strict_problems

    report = tflite_flops.analyze(broken_sections_bundle(), all_sections=True)
    problems = strict_problems(report)
    assert len(problems) == 1 and problems[0].startswith(
        "2 model section(s) could not be analysed: #1 (tf_lite_embedder), #2 (tf_lite_aux) (#1: ")
    assert strict_problems(tflite_flops.analyze(broken_sections_bundle())) == []  # sections not analysed
    with pytest.raises(ModelFormatError, match="could not be analysed"):
        tflite_flops.analyze(broken_sections_bundle(), all_sections=True, strict=True)


# ---- 7. the operator density bound counts distinct tables by the bytes that hold them


@pytest.mark.slow  # building 12,000 ops with the flatbuffers builder: seconds
def test_a_dense_valid_model_is_read_whole():
    from tflite_flops.reader import columnar
    from tflite_flops.reader.load import load_model

    data = chain_model(12_000)  # 68 bytes an op: one per 128 bytes (the former cap) refused it
    base, per = columnar.TYPE_LIMITS["Operator"]
    assert 12_000 > base + len(data) // per
    assert len(load_model(data).subgraphs[0].operators) == 12_000


@pytest.mark.slow
def test_distinct_operators_are_bounded_by_the_bytes_that_hold_them():
    from redteam_roundone import distinct_operators
    from tflite_flops.reader import columnar
    from tflite_flops.reader.load import load_model

    base, per = columnar.DISTINCT_LIMITS["Operator"]  # 16 bytes an op: past one per 24 bytes from ~12,300 ops
    data = distinct_operators(12_000)
    assert 12_000 > columnar.TYPE_LIMITS["Operator"][0] + len(data) // columnar.TYPE_LIMITS["Operator"][1]
    assert len(load_model(data).subgraphs[0].operators) == 12_000  # the former cap refused it
    data = distinct_operators(13_000)
    with pytest.raises(ModelFormatError, match=f"more than {base + len(data) // per:,} distinct Operator tables"):
        load_model(data)


def test_one_operator_table_named_many_times_is_still_refused():
    from tflite_flops.reader import columnar
    from tflite_flops.reader.load import load_model

    base, per = columnar.TYPE_LIMITS["Operator"]
    assert len(load_model(shared_operator(base)).subgraphs[0].operators) == base
    with pytest.raises(ModelFormatError, match="Operator tables named again"):
        load_model(shared_operator(base + base // 16))


@pytest.mark.slow  # a 100,000-op model (6.8 MB): building it takes seconds, each command ~20 s of CPU
def test_a_100000_op_model_is_analysed_compared_and_drawn(tmp_path):
    import cli_process

    path = tmp_path / "chain.tflite"
    path.write_bytes(chain_model(100_000))
    page = tmp_path / "x.html"
    r = cli_process.run(["analyze", str(path), "-o", str(page)], cwd=tmp_path, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "100,000 ops" in page.read_text(encoding="utf-8")  # the page lists its first rows and says so
    r = cli_process.run(["compare", str(path), str(path)], cwd=tmp_path, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "100000 same type" in r.stdout.replace(",", "")
