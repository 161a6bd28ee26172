"""The memory headline: the default runtime's total (XNNPACK on), the model's target class, the gates on them,
and the memory chart labelled with its configuration (issue 31, item 1)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import textwrap

import cli_process
import pytest

from render_helpers import SAMPLES, sample_report
import tflite_flops
from tflite_flops.render import render
from tflite_flops.render.memory import ALTERNATIVES, memory_rows, memory_title
from tflite_flops.report import Report
from tflite_flops.report.budget import add_budget_arguments, budget_limits, check_budget
from tflite_flops.report.headline import MCU, PHONE, runtime_total, target_class


@pytest.fixture(scope="module")
def phone():
    return sample_report("cnn_float.tflite")


@pytest.fixture(scope="module")
def mcu():
    return sample_report("mcu/kws_ds_cnn.tflite")


def test_runtime_total_is_the_sum_of_its_parts(phone):
    m = phone.memory
    total = runtime_total(m)
    on = m.runtime_xnnpack
    # the arena with XNNPACK on (and its persistent arena), XNNPACK's own bytes, the interpreter's own structures,
    # the weights mapped from the file
    assert total.arena_bytes == on.arena_bytes + on.persistent_arena_bytes
    assert total.xnnpack_bytes == on.delegate_bytes
    assert total.interpreter_bytes == m.interpreter_bytes > 0
    assert total.weights_mapped_bytes == m.weights_bytes
    assert total.total_bytes == on.total_bytes + m.interpreter_bytes + m.weights_bytes
    assert total.config == "LiteRT default: XNNPACK on, 1 thread"


def test_json_carries_the_total_its_parts_and_the_class(phone, mcu):
    for report, cls in ((phone, PHONE), (mcu, MCU)):
        d = report.to_dict()["memory"]
        parts = d["runtime_total_parts"]
        assert d["runtime_total_bytes"] == sum(parts.values()) == runtime_total(report.memory).total_bytes
        assert set(parts) == {"arena_bytes", "xnnpack_bytes", "interpreter_bytes", "weights_mapped_bytes"}
        assert d["target_class"] == cls and d["target_class_reason"]
        assert d["tflm_arena_size_bytes"] and d["runtime"]["arena_bytes"]  # every class's rows stay in the JSON
        assert Report.from_json(report.to_json()) == report  # the derived keys are computed again when read


def test_target_class_rule(phone, mcu):
    assert target_class(phone) == (PHONE, "float ops (ADD, CONV_2D, DEPTHWISE_CONV_2D …)")
    assert target_class(mcu)[0] == MCU
    assert target_class(sample_report("cnn_dynamic_range.tflite"))[0] == PHONE  # hybrid ops compute in float


def test_phone_model_leads_with_the_default_runtime(phone):
    rows = memory_rows(phone.memory, PHONE)
    labels = [r[0] for r in rows]
    assert labels[0] == "Total (LiteRT default: XNNPACK on, 1 thread)"
    assert labels[1:3] == ["  LiteRT arena (XNNPACK on)", f"  XNNPACK's own (target {phone.memory.target})"]
    assert "  weights mapped from the file" in labels
    at = labels.index(ALTERNATIVES)
    assert labels[at + 1] == "LiteRT arena (1 thread, XNNPACK off)"  # the alternative, labelled
    assert not any("Micro" in label for label in labels)  # an MCU runtime's rows: in the JSON only
    assert any("Micro" in r[0] for r in memory_rows(phone.memory, PHONE, every=True))
    table = render(phone, "table")
    heading = f"Memory at run time (LiteRT default: XNNPACK on, 1 thread, CPU target {phone.memory.target})"
    assert heading in table
    # 12,328 + 157,100 + 104,988 (the interpreter: 63,372 + 37,572 + 163·24 tensors + 11·12 ops) + 15,352
    assert re.search(r"Total \(LiteRT default: XNNPACK on, 1 thread\) +283\.0 KiB +289,768 ", table)
    for fmt in ("md", "html"):
        out = render(phone, fmt)
        assert heading in out
        assert "TFLite Micro arena" not in out.split("report-data")[0]


def test_mcu_model_leads_with_tflite_micro(mcu):
    labels = [r[0] for r in memory_rows(mcu.memory, MCU)]
    assert labels[0] == "TFLite Micro arena (cortex-m)"  # the build it is for: --tflm-target's name
    # LiteRT's rows are the other class's: only its total stays, under "Other configurations", since it is the
    # memory headline every output names (report/summary.py) and --max-memory gates
    litert = [label for label in labels if label.startswith(("Total (LiteRT", "LiteRT arena", "  LiteRT", "  XNNPACK"))]
    assert litert == ["Total (LiteRT default: XNNPACK on, 1 thread)"]
    assert labels.index(litert[0]) > labels.index("Other configurations")
    table = render(mcu, "table")
    assert "Memory at run time (TFLite Micro, cortex-m: an MCU model)" in table
    assert "TFLite Micro for cortex-m (32-bit MCU, reference kernels)" in table  # not the Python package's build


def test_html_chart_is_labelled_with_its_configuration(phone):
    html = render(phone, "html")
    m = re.search(r"<h3>Live activation bytes, subgraph 0[^<]*\(LiteRT, XNNPACK off, 1 thread\): peak ([^<]+)</h3>", html)
    assert m, "the chart says which configuration its peak is of"
    arena = phone.memory.runtime.arena_bytes  # the table's figure for the same configuration
    ops = [o for o in phone.ops if o.live_bytes is not None]
    top = max(o.live_bytes + (o.temporaries_bytes or 0) for o in ops)
    assert top <= arena  # the peak of tensors + temporaries at one op is within the arena the planner lays out
    assert f"the arena (LiteRT, XNNPACK off, 1 thread): {m.group(1)}" in html or top < arena


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_budget_arguments(p)
    return p.parse_args(list(argv))


def test_max_memory_gates_the_default_runtime_total(phone):
    total = runtime_total(phone.memory).total_bytes  # 289,768
    assert check_budget(phone, max_memory=total) == []
    out = check_budget(phone, max_memory=total - 1)
    assert out == [f"memory (LiteRT default: XNNPACK on, 1 thread: arena 12.0 KiB + XNNPACK 153.4 KiB + interpreter "
                   f"102.5 KiB + weights 15.0 KiB) 283.0 KiB > 283.0 KiB ({total:,} > {total - 1:,} bytes)"]
    # --max-arena keeps its meaning: LiteRT's arena with XNNPACK off
    assert check_budget(phone, max_arena="64KiB") == [
        "arena (LiteRT, 1 thread(s), XNNPACK off) 71.0 KiB > 64.0 KiB (72,704 > 65,536 bytes)"]
    assert budget_limits(_args("--max-memory", "1MiB", "--max-tflm-arena", "10K")) == {
        "max_memory": 1 << 20, "max_tflm_arena": 10_000}


def test_max_tflm_arena(mcu, tmp_path):
    size = mcu.memory.tflm_arena_size_bytes
    assert check_budget(mcu, max_tflm_arena=size) == []
    assert check_budget(mcu, max_tflm_arena="16KiB") == [
        f"tflm_arena (TFLite Micro) 22.2 KiB > 16.0 KiB ({size:,} > 16,384 bytes)"]
    budget = tmp_path / "b.toml"
    budget.write_text('[budget]\nmax_tflm_arena = "16KiB"\nmax_memory = "1GiB"\n')
    assert budget_limits(_args("--budget", str(budget))) == {"max_tflm_arena": 16384, "max_memory": 1 << 30}


def test_max_memory_cli_exit_code():
    run = ["analyze", str(SAMPLES / "cnn_float.tflite"), "-f", "json"]
    over = cli_process.run(run + ["--max-memory", "200KiB", "--target", "x86-avx512"],  # its XNNPACK bytes below
                           timeout=120)
    assert over.returncode == 3 and "budget exceeded: memory (LiteRT default: XNNPACK on" in over.stderr
    assert json.loads(over.stdout)["memory"]["runtime_total_bytes"] == 289_768
    help_text = cli_process.run(run[:1] + ["--help"], timeout=60).stdout
    assert "--max-memory" in help_text and "--max-tflm-arena" in help_text and "XNNPACK off" in help_text


_MEASURE = textwrap.dedent("""
    import gc, sys
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    def rss():
        return next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmRSS"))

    warm = Interpreter(model_path=sys.argv[2], num_threads=1)  # the library's code pages, touched once
    warm.allocate_tensors()
    d = warm.get_input_details()[0]
    warm.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    warm.invoke()
    x = np.random.rand(1, 224, 224, 3).astype(np.float32)  # numpy.random loads ~6 MB of modules on first use
    gc.collect()
    before = rss()
    it = Interpreter(model_path=sys.argv[1], num_threads=1)  # XNNPACK on: LiteRT's default
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], x)
    it.invoke()
    print(rss() - before)
""")


@pytest.mark.slow
@pytest.mark.tf
@pytest.mark.runtime
def test_headline_matches_the_process_growth_on_mobilenet_v2(tmp_path):
    """MobileNetV2 (random weights, batch 1): the default runtime's total within 5% of the RSS the process gains
    creating an interpreter, allocating and invoking once (XNNPACK on, 1 thread). The run measured 36.43 MB
    against 36.39 MB predicted (arena 0.6 MB + XNNPACK 21.8 MB + interpreter 0.1 MB + weights 13.9 MB)."""
    import ai_edge_litert  # noqa: F401  (the child process runs it)
    import tensorflow as tf

    import tflite_flops
    from tflite_flops.convert import to_tflite

    model = tf.keras.applications.MobileNetV2(weights=None, input_tensor=tf.keras.Input((224, 224, 3), batch_size=1))
    path = tmp_path / "mobilenet_v2.tflite"
    path.write_bytes(to_tflite(model))
    total = runtime_total(tflite_flops.analyze(path).memory).total_bytes
    script = tmp_path / "measure.py"
    script.write_text(_MEASURE)
    out = subprocess.run([sys.executable, str(script), str(path), str(SAMPLES / "cnn_float.tflite")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    measured = int(out.stdout.split()[-1])
    assert abs(total - measured) <= 0.05 * measured, (total, measured)


def test_a_phone_core_named_makes_a_small_int8_model_a_phone_model():
    """``--target arm-dotprod-fp16`` led with "TFLite Micro, cortex-m: an MCU model" (issue 45): naming a phone's
    core says whose model it is; named nothing (this CPU) or an x86 desktop, the rule of the figures stands."""
    int8 = SAMPLES / "cnn_int8.tflite"
    for target in ("arm-dotprod-fp16", "arm-i8mm", "arm-neon"):
        report = tflite_flops.analyze(int8, target=target)
        assert target_class(report) == (PHONE, f"the CPU named ({target}) is a phone's")
        assert memory_title(report).startswith(f"Memory at run time (LiteRT default: XNNPACK on, 1 thread, CPU target "
                                               f"{target})")
    assert target_class(tflite_flops.analyze(int8))[0] == MCU
    assert target_class(tflite_flops.analyze(int8, target="x86-avx2"))[0] == MCU


@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_without_target_the_class_says_it_is_a_guess_and_names_the_option(fmt):
    """Issue 45, item 4: without --target the memory section's device class (MCU or phone) is a guess from the model;
    it says so in one line that names --target (and --tflm-target for an MCU model). Named, the line goes."""
    from tflite_flops.render.memory import class_guess

    int8, float_ = SAMPLES / "cnn_int8.tflite", SAMPLES / "cnn_float.tflite"
    mcu_guess = class_guess(tflite_flops.analyze(int8))
    assert mcu_guess.startswith("a guess (no --target): integer ops only") and "\n" not in mcu_guess
    assert "--target NAME (a phone's CPU" in mcu_guess and "--tflm-target NAME" in mcu_guess
    phone_guess = class_guess(tflite_flops.analyze(float_))
    assert phone_guess.startswith("a guess (no --target): a phone model, float ops") and "--target NAME" in phone_guess
    assert "--tflm-target" not in phone_guess  # a float model is never an MCU model here: only the CPU to name
    for path, guess in ((int8, mcu_guess), (float_, phone_guess)):
        out = render(tflite_flops.analyze(path), fmt)
        memory = out[out.index({"table": "\nMemory at run time", "md": "**Memory at run time",
                                "html": '<section id="memory">'}[fmt]):]
        shown = {"table": guess, "md": guess.replace("_", "\\_"), "html": guess.replace("'", "&#x27;")}[fmt]
        assert shown in memory[:600], memory[:600]  # right under the section's title
        for target in ("arm-dotprod-fp16", "x86-avx2"):  # a CPU named: whose model it is, no guess
            named = render(tflite_flops.analyze(path, target=target), fmt)
            assert "a guess (no --target)" not in named
