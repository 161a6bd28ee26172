"""CPU targets (tflite_flops/targets/): detection from recorded /proc/cpuinfo texts, the targets' data and
sources, ``--target`` and ``tflite_flops targets``, and the figures that differ per target.

The detection is tested on fixtures (tests/fixtures/cpuinfo/), never on the machine the suite runs on: the CI
host may be any x86 or Arm CPU.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops import targets
from tflite_flops.errors import InputSpecError
from tflite_flops.latency.profile import CHANNEL_TILE, DeviceProfile, Machine, law_tile
from tflite_flops.settings import Settings, Target

import cli_process

CPUINFO = Path(__file__).resolve().parent / "fixtures" / "cpuinfo"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


@pytest.mark.parametrize("fixture, machine, expected", [
    ("zen5_avx512.txt", "x86_64", "x86-avx512"),  # AVX-512 with VNNI, no AMX (AMD Zen 5)
    ("sapphire_rapids_amx.txt", "x86_64", "x86-amx"),  # amx_tile, amx_int8 on AVX-512 VNNI and GFNI
    ("skylake_x_avx512.txt", "x86_64", "x86-avx512"),  # AVX-512 without VNNI: x86-avx512, with a note
    ("haswell_avx2.txt", "x86_64", "x86-avx2"),
    ("cortex_a53.txt", "aarch64", "arm-neon"),  # asimd only
    ("cortex_a76.txt", "aarch64", "arm-dotprod-fp16"),  # asimddp, fphp, asimdhp
    ("neoverse_v2.txt", "aarch64", "arm-i8mm"),  # i8mm
])
def test_detection_of_recorded_cpus(fixture, machine, expected):
    name, note = targets.detect((CPUINFO / fixture).read_text(), machine)
    assert name == expected
    assert (note is not None) == (fixture == "skylake_x_avx512.txt")
    assert name in targets.targets()


@pytest.mark.parametrize("fixture, machine", [("riscv64.txt", "riscv64"), ("sandy_bridge_avx.txt", "x86_64")])
def test_a_cpu_that_matches_no_target_falls_back_with_a_note(fixture, machine):
    # RISC-V, and x86 before AVX2: no target of their own; the figures are the fallback's, and a note says so
    name, note = targets.detect((CPUINFO / fixture).read_text(), machine)
    assert name == targets.FALLBACK == "x86-avx512"
    assert machine in note and "--target" in note


def test_detection_reads_the_amx_flags_only_with_avx512():
    # XNNPACK enables avx512amx only on top of AVX-512 VNNI and GFNI: amx flags alone are not x86-amx
    text = "flags : fpu sse2 avx2 fma amx_tile amx_int8\n"
    assert targets.detect(text, "x86_64") == ("x86-avx2", None)


def test_host_is_one_of_the_targets():
    found, note = targets.host()
    assert found.name in targets.targets()
    assert Target().name == found.name == Target(xnnpack="host").name


def test_every_target_is_data_with_its_sources():
    # one module per target, found by the package; every group of constants names its source, and a
    # target that is not measured says so in each group's source
    found = targets.targets()
    assert set(found) == {"x86-avx2", "x86-avx512", "x86-amx", "arm-neon", "arm-dotprod-fp16", "arm-i8mm"}
    for t in found.values():
        for group in targets.SOURCE_GROUPS:
            assert t.source(group), (t.name, group)
            if group not in t.measured:
                assert "measured" not in t.source(group) or "not yet measured" in t.source(group), (t.name, group)
        for f in dataclasses.fields(t):
            value = getattr(t, f.name)
            if isinstance(value, int) and not isinstance(value, bool):  # sizes and tiles; an extra may be 0
                assert value > 0 or (f.name == "gemm_operator_extra" and value == 0), (t.name, f.name)
    assert found["x86-avx512"].measured == targets.SOURCE_GROUPS
    assert "checked on two samples of the issue" in found["x86-amx"].source("gemm")
    # read off the x86-64 runtime under qemu-x86_64 -cpu Haswell (benchmarks/targets_lab.py host-suite)
    assert found["x86-avx2"].source("gemm").startswith("measured under qemu-user"), "x86-avx2"
    assert found["x86-avx2"].measured == targets.SOURCE_GROUPS
    for name in ("arm-neon", "arm-dotprod-fp16", "arm-i8mm"):  # read off the aarch64 runtime under qemu-user
        assert found[name].source("gemm").startswith("measured under qemu-user"), name
        assert {"gemm", "packing", "structures"} <= set(found[name].measured), name


def test_the_x86_avx512_target_holds_the_constants_read_off_that_build():
    t = targets.get("x86-avx512")
    assert (t.float_rows, t.int8_rows, t.hybrid_rows) == (7, 7, 10)  # 7x32/7x16 f32, 7x16c8 qs8, 10x16c8 qdu8
    assert (t.float_tile, t.float_nr2_tile, t.float_gemm_tile, t.float_depthwise_tile, t.law_tile) == (32, 16, 32, 16, 16)
    assert (t.int8_tile, t.int8_kr, t.int8_depthwise_tile, t.hybrid_gemm_tile) == (16, 8, 32, 64)
    assert (t.alignment, t.workspace_slack, t.unpacked_slack) == (64, 32, 128)
    assert (t.runtime_bytes, t.opdata_bytes, t.value_bytes, t.delegate_bytes) == (96, 240, 160, 1_720)


def test_an_unknown_target_is_one_line_with_the_valid_names():
    with pytest.raises(InputSpecError) as info:
        Settings(target=Target(xnnpack="cortex-a99"))
    message = str(info.value)
    assert "\n" not in message and "cortex-a99" in message
    assert all(name in message for name in targets.names())
    with pytest.raises(InputSpecError):
        tflite_flops.analyze(SAMPLES / "cnn_int8.tflite", target="nope")


# XNNPACK's own bytes of two samples on an AMX host, traced by the issue: cnn_int8 122,472 B, cnn_dynamic_range
# 161,832 B (x86-avx512's figures: 100,464 and 141,460). The x86-amx target's constants come from XNNPACK's
# sources (16x64c4 avx512amx for qs8 and qd8); these samples check them.
def test_the_amx_target_meets_the_issue_s_amx_measurements():
    int8 = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite", target="x86-amx").memory
    hybrid = tflite_flops.analyze(SAMPLES / "cnn_dynamic_range.tflite", target="x86-amx").memory
    assert int8.target == hybrid.target == "x86-amx"
    assert int8.runtime_xnnpack.delegate_bytes == 122_472  # to the byte
    assert abs(hybrid.runtime_xnnpack.delegate_bytes - 161_832) <= 0.01 * 161_832  # 160,420: 0.991
    avx512 = tflite_flops.analyze(SAMPLES / "cnn_int8.tflite", target="x86-avx512").memory
    assert avx512.runtime_xnnpack.delegate_bytes == 100_464 and avx512.target == "x86-avx512"


def test_the_target_changes_only_the_figures_it_holds():
    # the arenas (LiteRT's, TFLite Micro's) are the same on every target; XNNPACK's own bytes are not
    a = tflite_flops.analyze(SAMPLES / "cnn_float.tflite", target="x86-avx512").memory
    b = tflite_flops.analyze(SAMPLES / "cnn_float.tflite", target="arm-neon").memory
    assert (a.arena_bytes, a.runtime.total_bytes, a.tflm_arena_size_bytes) == (
        b.arena_bytes, b.runtime.total_bytes, b.tflm_arena_size_bytes)
    assert a.runtime_xnnpack.arena_bytes == b.runtime_xnnpack.arena_bytes
    assert a.runtime_xnnpack.delegate_bytes != b.runtime_xnnpack.delegate_bytes  # float tile 8 and alignment 16


def test_the_latency_law_s_tile_comes_from_the_profile_s_target():
    assert law_tile("x86-avx512") == CHANNEL_TILE == 16
    assert law_tile("arm-neon") == 8
    assert law_tile("") == law_tile("unknown") == CHANNEL_TILE  # a profile of an earlier version: as it was fitted
    m = Machine(cpu="c", cores=2, runtime="ai_edge_litert", runtime_version="2.3.0", threads=1, xnnpack=True,
                target="arm-dotprod-fp16")
    d = DeviceProfile(machine=m, laws=()).to_dict()
    assert d["machine"]["target"] == "arm-dotprod-fp16"
    assert DeviceProfile.from_dict(d).machine.target == "arm-dotprod-fp16"
    del d["machine"]["target"]  # a profile saved before targets existed still loads
    assert DeviceProfile.from_dict(d).machine.target == ""


def run_cli(*args: str):
    return cli_process.run(args, timeout=120)


@pytest.mark.slow
def test_targets_command_and_target_option():
    out = run_cli("targets", "--format", "json")
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    assert {t["name"] for t in listed["targets"]} == set(targets.targets())
    assert sum(t["host"] for t in listed["targets"]) == 1
    table = run_cli("targets")
    # a target derived from XNNPACK's source says so (x86-amx), a measured one what was measured (x86-avx2)
    assert "x86-amx           x86-64 AVX-512 with AMX (amx_tile, amx_int8) [from source]" in table.stdout
    assert "x86-avx2          x86-64 AVX2 + FMA3 [measured]" in table.stdout
    # a phone model: its table leads with XNNPACK (an MCU model such as cnn_int8 leads with TFLite Micro)
    report = run_cli("analyze", str(SAMPLES / "cnn_dynamic_range.tflite"), "--target", "x86-amx")
    assert report.returncode == 0 and "XNNPACK's own (target x86-amx)" in report.stdout
    bad = run_cli("analyze", str(SAMPLES / "cnn_int8.tflite"), "--target", "nope")
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "valid targets: host" in bad.stderr
    # every command that figures memory takes it, and names it in its output
    model = str(SAMPLES / "cnn_int8.tflite")
    rows = json.loads(run_cli("batch", model, "-j", "1", "--format", "json", "--target", "arm-neon").stdout)
    assert [r["memory_target"] for r in rows["models"]] == ["arm-neon"]
    compared = run_cli("compare", str(SAMPLES / "cnn_float.tflite"), model, "--target", "x86-avx2")
    assert compared.returncode == 0 and "XNNPACK own (estimate, target x86-avx2)" in compared.stdout
    swept = run_cli("sweep", str(SAMPLES / "fcn_dynamic.tflite"), "--input-shape", "1x32x32x3",
                    "--input-shape", "1x64x64x3", "--target", "arm-i8mm")
    assert swept.returncode == 0 and "memory (target arm-i8mm)" in swept.stdout


def test_a_host_that_fell_back_says_so_in_the_report(monkeypatch):
    # on a CPU that matches no target, the report's notes say whose figures these are; a named target has no note
    note = "this CPU (riscv64) matches no target: the figures are x86-avx512's (pass --target)"
    monkeypatch.setattr(targets, "host", lambda: (targets.targets()["x86-avx512"], note))
    assert note in tflite_flops.analyze(SAMPLES / "cnn_int8.tflite").notes
    assert note not in tflite_flops.analyze(SAMPLES / "cnn_int8.tflite", target="x86-avx512").notes


@pytest.mark.runtime
def test_float_filters_follow_the_kernel_xnnpack_picks():
    # x86-avx512: a 3x3 CONV_2D [1,8,8,16] -> 48 channels packs to the 7x32 kernel's 64 channels of
    # 3·3·16 weights + 1 bias: 64 · 145 · 4 = 37,120 bytes; 24 channels, below 32, to the nr2 kernel's 32:
    # 32 · 145 · 4 = 18,560; a pointwise one of 1000 channels (a fully connected operator) to 1008 (nr2: 32
    # pads 24, over 1% of them): 1008 · 17 · 4 = 68,544. On arm-neon (6x8, nr2 4x2), 48 and 24 channels
    # are multiples of 8: 48 · 145 · 4 = 27,840 and 24 · 145 · 4 = 13,920.
    from tflite_flops.analysis.placement import place_subgraph
    from tflite_flops.analysis.xnnpack_memory import xnnpack_bytes
    from tflite_flops.latency.suite import SuitePoint, build, conv
    from tflite_flops.measure import runtimes
    from tflite_flops.reader.load import load_model

    fb = runtimes.schema_module("litert")  # the schema module that writes the model (LiteRT's)
    expected = {(48, 3): (37_120, 27_840), (24, 3): (18_560, 13_920), (1000, 1): (68_544, 1000 * 17 * 4)}
    for (cout, k), (avx512, neon) in expected.items():
        model = load_model(build(fb, SuitePoint("c", "CONV_2D", "float32", True, True,
                                                 conv(8, 16, cout, k, 1, "NONE", "float32"))))
        sg = model.subgraphs[0]
        shapes = [t.shape for t in sg.tensors]
        got = [xnnpack_bytes(sg, place_subgraph(model, 0), shapes, target=targets.get(name))[1]
               for name in ("x86-avx512", "arm-neon")]
        assert got == [avx512, neon], (cout, k)


def test_arm_builtin_kernels_plan_the_same_arena_at_every_thread_count():
    # on Arm LiteRT's builtin CONV_2D is ruy's at every thread count (read under emulation on every sample,
    # tests/test_emulated_targets.py): the XNNPACK-off arena at 4 threads is the 1-thread one; on x86 the
    # multithreaded Eigen convolution plans other temporaries
    model = str(SAMPLES / "cnn_float.tflite")

    def arena(target, threads):
        return tflite_flops.analyze(model, target=target, threads=threads).memory.runtime.arena_bytes

    assert arena("arm-neon", 4) == arena("arm-neon", 1) == arena("arm-dotprod-fp16", 4)
    assert arena("x86-avx512", 4) != arena("x86-avx512", 1)
