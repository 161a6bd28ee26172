"""Cross-command checks of the settings (issue 42, 43): an option every command must honour, and the device's
target where a profile gives one. Apart from tests/test_settings.py, which the emulated x86 host suite runs
(benchmarks/targets_lab.py HOST_SUITE): these do not depend on the CPU and start many processes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import cli_process
from lanes import slow_cases
import tflite_flops
from test_settings import MODEL, _profile
from tflite_flops.analysis import analyze_model
from tflite_flops.report.headline import runtime_total
from tflite_flops.settings import Settings, Target


def test_batch_latency_takes_every_bench_option_time_limit_included(monkeypatch, capsys):
    """``batch --latency --time-limit`` reaches the measurement of every model (issue 42: it was dropped)."""
    from tflite_flops.cli import main
    from tflite_flops.measure import pipeline

    seen = []

    def measure(report, path, what, progress=True):
        seen.append(what.bench)
        return report

    monkeypatch.setattr(pipeline, "measure_report", measure)
    assert main(["batch", str(MODEL), "--latency", "--runs", "3", "--warmup", "2", "--min-time", "0",
                 "--time-limit", "7", "-f", "json"]) == 0
    assert [(b.runs, b.warmup, b.min_time, b.time_limit) for b in seen] == [(3, 2, 0.0, 7.0)]


@pytest.mark.parametrize("command", [["analyze", str(MODEL)], ["batch", str(MODEL), "-j", "1"],
                                     ["sweep", str(MODEL), "--batch", "1"], ["compare", str(MODEL), str(MODEL)]])
def test_a_cpu_that_matches_no_target_is_said_by_every_command(command, monkeypatch, capsys):
    """The fallback note was added by ``api.analyze`` alone (issue 42): every command says it, and a named
    ``--target`` does not."""
    from tflite_flops import targets
    from tflite_flops.cli import main

    note = "this CPU (riscv64) matches no target: the figures are x86-avx512's (pass --target)"
    monkeypatch.setattr(targets, "host", lambda: (targets.targets()["x86-avx512"], note))
    assert main([*command, "-f", "json"]) == 0
    assert capsys.readouterr().err.count(note) == 1  # once, however many analyses
    assert main([*command, "--target", "x86-avx2", "-f", "json"]) == 0
    assert "matches no target" not in capsys.readouterr().err
    assert note in analyze_model(MODEL).notes  # the library's report carries it too
    assert note not in analyze_model(MODEL, Settings(target=Target(xnnpack="x86-avx2"))).notes


def _arm_profile(path: Path, target: str = "arm-i8mm", caches: bool = True) -> str:
    p = _profile(1)
    machine = dataclasses.replace(p.machine, cpu="Pixel test phone", target=target,
                                  caches={"L1d": 65536, "L2": 524288, "L3": 8 << 20} if caches else {})
    dataclasses.replace(p, machine=machine).save(str(path))
    return str(path)


@pytest.mark.parametrize("command", slow_cases(["analyze", "batch", "sweep", "compare"], {"batch", "sweep", "compare"}))
def test_a_phone_profiles_target_governs_every_figure_and_a_contradicting_target_is_refused(command, tmp_path):
    """``--predict`` with a profile made on an Arm phone: the features, the placement and the memory figures are
    the phone's target's, not this host's (issue 43); a ``--target`` that contradicts it is one line, exit 2."""
    profile = _arm_profile(tmp_path / "phone.json")
    args = [command, str(MODEL), *([str(MODEL)] if command == "compare" else []),
            *(["--batch", "1"] if command == "sweep" else []), "--predict", profile]
    r = cli_process.run([*args, "--target", "x86-avx2"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: --target x86-avx2 contradicts the profile, made on a arm-i8mm CPU")
    ok = cli_process.run([*args, "-f", "json"])
    assert ok.returncode == 0, ok.stderr
    assert "arm-i8mm (Pixel test phone) governs the prediction" in ok.stderr
    on_arm = tflite_flops.analyze(MODEL, batch=1, target="arm-i8mm")
    memory = runtime_total(on_arm.memory).total_bytes  # the memory headline at the phone's target
    d = json.loads(ok.stdout)
    got = {"analyze": lambda: d["memory"]["runtime_total_bytes"], "batch": lambda: d["models"][0]["runtime_total_bytes"],
           "sweep": lambda: d["points"][0]["totals"]["runtime_total_bytes"],
           "compare": lambda: d["totals"]["memory.runtime_total_bytes"]["a"]}[command]()
    assert got == memory != runtime_total(tflite_flops.analyze(MODEL, batch=1, target="x86-avx512").memory).total_bytes
    assert cli_process.run([*args, "--target", "arm-i8mm"]).returncode == 0  # the profile's own target: no contradiction


def test_a_profile_without_a_target_or_caches_says_so_in_every_output(tmp_path):
    profile = _arm_profile(tmp_path / "old.json", target="", caches=False)
    r = cli_process.run(["analyze", str(MODEL), "--predict", profile, "-f", "json"])
    assert r.returncode == 0 and "the profile names no CPU target (Pixel test phone)" in r.stderr
    d = json.loads(r.stdout)
    assert d["prediction"]["flags"][-2:] == ["no_target", "no_caches"]
    table = cli_process.run(["analyze", str(MODEL), "--predict", profile]).stdout
    assert "profile without a CPU target" in table and "profile without cache sizes" in table


def test_the_command_line_and_the_library_build_settings_with_one_builder():
    """``commands.common.analysis_settings`` hands the options to ``api.make_settings``: the same options give the
    same Settings from the command line and from the library (issue 42)."""
    from tflite_flops.api import make_settings
    from tflite_flops.cli import build_parser
    from tflite_flops.commands.common import analysis_settings
    from tflite_flops.settings import RuntimeSettings, tflm_target

    args = build_parser().parse_args(["analyze", str(MODEL), "--input-shape", "1x32x32x3", "--batch", "2",
                                      "--threads", "3", "--no-xnnpack", "--target", "arm-i8mm",
                                      "--tflm-target", "host-64", "--while-trips", "4", "--force"])
    lib = make_settings(["1x32x32x3"], 2, threads=3, runtime=RuntimeSettings("litert", 1, False), target="arm-i8mm",
                        tflm_target="host-64", while_trips=4, force=True)
    assert analysis_settings(args) == lib
    assert analysis_settings(args).target.tflm == tflm_target("host-64") and lib.runtime.threads == 3
