"""The tool's figures against the real LiteRT runtime on other CPUs, under emulation (the lab:
``benchmarks/targets_lab.py``, installed by ``.ci/install_emulation.sh``).

Per target (Cortex-A53 and Cortex-A76 under ``qemu-aarch64`` with the aarch64 wheel of ai-edge-litert;
x86-64 with AVX2 only under ``qemu-x86_64 -cpu Haswell``), on every sample: XNNPACK's placement and
partitions, and LiteRT's arena and persistent arena with XNNPACK off and on, at 1 and 4 threads,
are the tool's to the byte, as on the host (Arm's builtin convolutions take the same memory at every
thread count, and the tool's Arm targets say so: ``CpuTarget.builtin_threaded_kernels``); XNNPACK's own bytes, traced by the allocation tracer preloaded
into the emulated process, within 10% of the tool's figure for that target once the tool has a target
for that CPU class (``LabTarget.tool``: ``arm-neon``, ``arm-dotprod-fp16``, ``x86-avx2``), and until then of the
tool's figure with the constants measured for it (``benchmarks/targets_measured.json``) in place of the
x86-64 AVX-512 build's.

Without the lab these tests skip, naming what is missing; in CI (``CI=true``) they fail instead:
``.ci/run`` installs the lab.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import targets_lab  # noqa: E402

pytestmark = pytest.mark.runtime

MEASURED = Path(__file__).resolve().parent.parent / "benchmarks" / "targets_measured.json"
EMULATED = ("cortex-a53", "cortex-a76", "x86-avx2")
ARM = ("cortex-a53", "cortex-a76")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


_PROBES: dict[tuple[str, int], dict] = {}


def _probe(target: str, threads: int) -> dict:
    """The lab's probe of every sample on ``target`` (traced at 1 thread), run once per session."""
    key = (target, threads)
    if key not in _PROBES:
        why = targets_lab.missing(targets_lab.TARGETS[target])
        if why:
            (pytest.fail if _in_ci() else pytest.skip)(f"{target} cannot be emulated here: {why}")
        _PROBES[key] = targets_lab.probe(target, targets_lab.default_models(), threads, trace=threads == 1)
    return _PROBES[key]


def _ours(threads: int, target: str | None = None) -> dict[str, dict]:
    return {targets_lab._key(m): targets_lab.ours(m, threads, target) for m in targets_lab.default_models()}


@pytest.mark.slow
@pytest.mark.parametrize("target", EMULATED)
def test_placement_and_partitions_under_emulation(target):
    real = _probe(target, 1)
    assert real["machine"] == targets_lab.TARGETS[target].machine
    ours = _ours(1)
    assert len(real["models"]) == len(ours) == 14
    for name, mine in ours.items():
        plan = real["models"][name]["plan"]
        assert plan["ambiguous"] == [], name
        assert mine["delegated"] == plan["delegated"], (target, name)
        assert mine["partitions"] == plan["partitions"], (target, name)


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("target", EMULATED)
def test_arenas_under_emulation(target, threads):
    real = _probe(target, threads)
    # on Arm the builtin CONV_2D is ruy's at every thread count: the arena at 4 threads is the 1-thread one, and
    # the tool says so for the Arm targets (CpuTarget.builtin_threaded_kernels)
    for name, mine in _ours(threads, target).items():
        got = real["models"][name]
        for config in ("builtin", "xnnpack"):
            arena = sum(got[config]["arena"][i] for i in mine["reached"])
            persistent = sum(got[config]["persistent"][i] for i in mine["reached"])
            assert (mine[config]["arena"], mine[config]["persistent"]) == (arena, persistent), (
                target, threads, name, config)


@pytest.mark.slow
def test_each_core_runs_its_own_kernels():
    # the emulated core's CPU detection read its features: without fp16 arithmetic (Cortex-A53) XNNPACK keeps
    # the float32 copy of cnn_fp16's weights it unpacked, with it (Cortex-A76) it packs them from the file
    # (170,100 against 160,276 bytes with ai-edge-litert 2.3.0; the float32 model holds 151,848 on both)
    a53, a76 = (_probe(t, 1)["models"]["cnn_fp16"]["traced"]["delegate"] for t in ARM)
    assert a53 > a76 + 5_000, (a53, a76)


@pytest.mark.slow
@pytest.mark.parametrize("target", EMULATED)
def test_xnnpack_bytes_under_emulation(target):
    # XNNPACK's own bytes on every sample against the tracer's in the emulated process: within 10%, as on the
    # host. The tool's figure for that target once it knows the target; until then the constants measured for
    # it (benchmarks/targets_measured.json) put in place of the AVX-512 build's (targets_lab.fitted_constants)
    real = _probe(target, 1)
    known = targets_lab.tool_target(target) is not None
    if known:
        ours = _ours(1, target)
    else:
        measured = json.loads(MEASURED.read_text())["targets"][target]["constants"]
        with targets_lab.fitted_constants(measured):
            ours = _ours(1)
    rows = []
    for name, mine in ours.items():
        assert mine["target"] == (targets_lab.TARGETS[target].tool if known else None), name
        rows.append((name, mine["xnnpack"]["delegate_bytes"], real["models"][name]["traced"]["delegate"]))
    print(f"\nmodel, predicted delegate_bytes, traced on {target}, ratio")
    for name, predicted, traced in rows:
        print(f"{name}, {predicted:,}, {traced:,}, {predicted / traced:.3f}")
    misses = [row for row in rows if abs(row[1] - row[2]) > 0.10 * row[2]]
    assert not misses, misses


def test_arm_cpuinfo_names_the_emulated_core():
    # a feature the core lacks kills XNNPACK with an illegal instruction: the A53 has no dot product
    a53, a76 = (targets_lab.cpuinfo(targets_lab.TARGETS[t], 2) for t in ARM)
    assert a53.count("processor\t:") == 2 and "CPU part\t: 0xd03" in a53 and "asimddp" not in a53
    assert "CPU part\t: 0xd0b" in a76 and " asimddp" in a76 and " fphp" in a76
    assert targets_lab.parse_model("a/b.tflite:1x32x32x3") == ("a/b.tflite", (1, 32, 32, 3))
    assert targets_lab.parse_model("a/b.tflite") == ("a/b.tflite", None)


def test_x86_cpuinfo_is_detected_as_the_emulated_cpu(tmp_path):
    # the tool reads /proc/cpuinfo (XNNPACK reads CPUID): the emulated Haswell's overlay must say AVX2 and FMA3
    # and no AVX-512, and the emulated Python's children are emulated too (its sys.executable re-enters qemu)
    from tflite_flops import targets

    lab = targets_lab.TARGETS["x86-avx2"]
    text = targets_lab.cpuinfo(lab, 3)
    assert text.count("processor\t:") == 3 and targets.detect(text, "x86_64") == ("x86-avx2", None)
    assert (targets_lab.overlay(lab, tmp_path) / "proc" / "cpuinfo").read_text() == targets_lab.cpuinfo(
        lab, os.cpu_count() or 1)
    assert sorted(p.name for p in targets_lab.overlay(lab, tmp_path).iterdir()) == ["proc"]  # the rest is the host's
    if os.uname().machine == "x86_64":
        script = targets_lab.emulated_python(lab, tmp_path).read_text()
        assert f"-cpu {lab.qemu_cpu} " in script and f"-0 {tmp_path}/python-x86-avx2/bin/python " in script
        assert 'unset LD_PRELOAD' in script and '-E "LD_PRELOAD=$preload"' in script  # the guest's, not qemu's
