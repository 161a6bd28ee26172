"""The phone flow (issue 29 part 4): the whole-model times phones and device farms return, the pack's runner
and its import, end to end.

Recorded outputs (tests/fixtures/phone/): ``litert_benchmark_cnn_float.json`` and ``.txt`` are what the
ai-edge-litert wheel's ``litert-benchmark`` wrote and printed here for sample_models/cnn_float.tflite (the
model path shortened). No phone ran here: ``benchmark_model_cnn_float.log`` (a recent benchmark_model's
``INFO:``-prefixed stdout) and ``logcat_benchmark_app_cnn_float.txt`` (a logcat capture of the Android
benchmark app) are written in the formats benchmark_model's sources print (``benchmark_model.cc``:
``BenchmarkModel::Run``'s ``count=`` statistics, ``OnBenchmarkEnd``'s "Inference timings in us" line) and its
documentation shows. The adb mode runs against a stand-in adb that copies files.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import cli_process
import pytest

from tflite_flops.device.benchmark_logs import (BENCHMARK_MODEL, LITERT_BENCHMARK, parse_timing, read_timing,
                                                timing_latency)
from tflite_flops.errors import ModelFormatError

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).resolve().parent / "fixtures" / "phone"
CNN = ROOT / "sample_models" / "cnn_float.tflite"


def cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return cli_process.run(args, cwd=ROOT, timeout=timeout)


# ---- the formats, recorded -----------------------------------------------------------------------------


def test_logcat_of_the_benchmark_app():
    t = read_timing(str(FIX / "logcat_benchmark_app_cnn_float.txt"))
    assert (t.tool, t.form) == (BENCHMARK_MODEL, "logcat")
    assert (t.init_us, t.first_us, t.warmup_avg_us, t.avg_us) == (5685.0, 1853.0, 1004.6, 1003.9)
    # the timed runs' count= line (the one before it is the warm-up's); this version prints no median
    assert (t.runs, t.warmup_runs, t.min_us, t.max_us, t.std_us, t.median_us) == (996, 497, 979.0, 1270.0, 19.0, None)
    assert t.typical_us == 1003.9 and t.graph == "/data/local/tmp/cnn_float.tflite" and t.threads == 4


def test_benchmark_model_log_with_percentiles():
    t = read_timing(str(FIX / "benchmark_model_cnn_float.log"))
    assert (t.tool, t.form, t.avg_us, t.median_us, t.runs, t.warmup_runs) == (BENCHMARK_MODEL, "log", 1362.8, 1355.0,
                                                                                184, 2)
    assert t.typical_us == 1355.0 and t.graph == "models/cnn_float.tflite" and t.resolution_us == 1.0


def test_litert_benchmark_json_and_stdout_agree():
    j = read_timing(str(FIX / "litert_benchmark_cnn_float.json"))
    s = read_timing(str(FIX / "litert_benchmark_cnn_float.txt"))
    assert (j.tool, j.form, s.form) == (LITERT_BENCHMARK, "json", "stdout")
    for field in ("avg_us", "median_us", "min_us", "max_us", "runs", "warmup_runs", "init_us", "first_us",
                  "warmup_avg_us", "resolution_us"):
        assert getattr(j, field) == pytest.approx(getattr(s, field)), field
    assert j.median_us == pytest.approx(20.0) and j.runs == 50 and j.threads == 1 and j.resolution_us == 10.0
    assert j.graph == "sample_models/cnn_float.tflite"


def test_several_results_scientific_notation_and_the_latency_record():
    text = ("INFO: Graph: [a.tflite]\nINFO: count=3 first=9 curr=9 min=9 max=9 avg=9 std=0\n"
            "INFO: Inference timings in us: Init: 1, First inference: 9, Warmup (avg): 9, Inference (avg): 9\n"
            "INFO: Graph: [b.tflite]\n"
            "INFO: count=1 curr=1357602 p5=1357602 median=1357602 p95=1357602\n\n"
            "INFO: count=50 first=1249964 curr=1240143 min=1238588 max=1252566 avg=1.24027e+06 std=2565 "
            "p5=1238753 median=1239807 p95=1247415\n\n"
            "INFO: Inference timings in us: Init: 5579, First inference: 1357602, Warmup (avg): 1.3576e+06, "
            "Inference (avg): 1.24027e+06\n")
    t = parse_timing(text.encode())
    assert t.results == 2 and t.graph == "b.tflite" and t.avg_us == 1.24027e6 and t.median_us == 1239807.0
    assert (t.runs, t.warmup_runs) == (50, 1)
    lat = timing_latency(t, "x.log")
    assert lat.mean_ms == 1240.27 and lat.median_ms == 1239.807 and lat.runs == 50
    assert "the last of 2 results" in lat.method and lat.extra["results_in_file"] == 2


@pytest.mark.parametrize("data, message", [
    (b"nothing here\n", "no whole-model time found"),
    (b"{not json", "not valid JSON"),
    (b'{"latency": {"median_ms": 1}}', "without latency.avg_ms"),
    (b'{"latency": {"avg_ms": "fast"}}', "latency.avg_ms is not a number"),
    (b'{"latency": {"avg_ms": -1}}', "latency.avg_ms is not a time"),
    (b"I tflite  : Inference timings in us: Init: 1, First inference: oops\n", "malformed 'Inference timings in us'"),
    (b"=====\n BENCHMARK RESULTS\n=====\nWarmup (avg): 1.00 ms (2 runs)\n", "without 'Inference (avg)'"),
])
def test_malformed_input_is_one_error(data, message):
    with pytest.raises(ModelFormatError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        parse_timing(data, "f")
    assert "\n" not in str(info.value) and str(info.value).startswith("f: ")


@pytest.mark.parametrize("name, mean_ms", [("logcat_benchmark_app_cnn_float.txt", 1.0039),
                                           ("benchmark_model_cnn_float.log", 1.3628),
                                           ("litert_benchmark_cnn_float.json", 0.02)])
def test_import_profile_reads_the_whole_model_time(name, mean_ms, tmp_path):
    out = tmp_path / "r.json"
    r = cli("import-profile", str(CNN), "--result", str(FIX / name), "-o", str(out))
    assert r.returncode == 0, r.stderr
    latency = json.loads(out.read_text())["latency"]
    assert latency["mean_ms"] == mean_ms and latency["runtime"].endswith("(device)")


def test_a_phone_s_log_and_op_profile_join_together(tmp_path):
    """What the pack's runner brings back for one model: the log as --result, the CSV as the op profile."""
    out = tmp_path / "r.json"
    r = cli("import-profile", str(CNN), str(FIX / "benchmark_model_cnn_float.csv"), "--result",
            str(FIX / "benchmark_model_cnn_float.log"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["latency"]["median_ms"] == 1.355 and d["latency"]["per_op_sum_ms"] == pytest.approx(1.408)
    assert all(o["latency_ms"] is not None for o in d["ops"])


def test_a_mean_without_a_median_is_shown():
    """The benchmark app's logcat gives the mean, not the median: the text report shows what there is."""
    r = cli("import-profile", str(CNN), "--result", str(FIX / "logcat_benchmark_app_cnn_float.txt"))
    assert r.returncode == 0, r.stderr
    assert "Latency (benchmark_model (device), 4 thread(s), 996 runs)\n  mean 1.004 ms  min 0.979 ms" in r.stdout


def test_import_profile_refuses_a_result_of_another_model_and_malformed_input(tmp_path):
    int8 = str(ROOT / "sample_models" / "cnn_int8.tflite")
    r = cli("import-profile", int8, "--result", str(FIX / "logcat_benchmark_app_cnn_float.txt"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "the result was taken of 'cnn_float.tflite', not 'cnn_int8.tflite'" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"latency": {"avg_ms": null}}')
    r = cli("import-profile", str(CNN), "--result", str(bad))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "without latency.avg_ms" in r.stderr


# ---- a pack: export, outputs in every format a phone writes, import -----------------------------------


def _export(folder: Path, *prefixes: str, quick: bool = True) -> dict:
    pytest.importorskip("ai_edge_litert")
    from tflite_flops.latency.pack import export_pack
    from tflite_flops.measure.runtime import RuntimeSettings

    return export_pack(str(folder), RuntimeSettings(), quick, prefixes)


def _us(folder: Path, entry: dict) -> float:
    """A phone's time for a run: 20 us an invoke, 100 us an op, 0.01 us per input element read."""
    from tflite_flops.analysis import analyze_model

    ops = [o for o in analyze_model((folder / entry["model"]).read_bytes()).ops if o.phase == "inference"]
    return 20.0 + sum(100.0 + 0.01 * sum(_elements(s) for s in o.inputs) for o in ops)


def _elements(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


LOG = ("INFO: Graph: [models/{model}]\nINFO: Use xnnpack: [{xnn}]\n"
       "INFO: count=2 first={t} curr={t} min={t} max={t} avg={t} std=0 p5={t} median={t} p95={t}\n\n"
       "INFO: count=40 first={t} curr={t} min={t} max={t} avg={t} std=1 p5={t} median={t} p95={t}\n\n"
       "INFO: Inference timings in us: Init: 900, First inference: {t}, Warmup (avg): {t}, Inference (avg): {t}\n")
LOGCAT = ("11-27 10:00:00.100  4321  4321 I tflite  : Graph: [/data/local/tmp/{model}]\n"
          "11-27 10:00:01.100  4321  4321 I tflite  : count=40 first={t} curr={t} min={t} max={t} avg={t} std=1\n"
          "11-27 10:00:01.100  4321  4321 I tflite  : Inference timings in us: Init: 900, First inference: {t}, "
          "Warmup (avg): {t}, Inference (avg): {t}\n")


def _write_outputs(pack: Path, manifest: dict) -> int:
    """Each run's output, in turn: a benchmark_model log (+ CSV), a logcat capture, a litert-benchmark JSON
    (XNNPACK runs only: that tool cannot turn it off). Returns how many were written."""
    (pack / "profiles").mkdir(exist_ok=True)
    for i, entry in enumerate(manifest["points"]):
        t = round(_us(pack, entry), 1)
        model = Path(entry["model"]).name
        form = i % 3 if entry["delegate"] else i % 2
        if form == 0:
            (pack / entry["log"]).write_text(LOG.format(model=model, xnn=int(entry["delegate"]), t=t))
            (pack / entry["profile"]).write_text("Operator-wise Profiling Info for Regular Benchmark Runs:\n"
                                                 "==== Run Order ====\nnode type, start, first, avg_ms, %, cdf%, "
                                                 f"mem KB, times called, name\nADD, 0, 1, {t / 1e3}, 100%, 100%, 0, 1, o\n")
        elif form == 1:
            (pack / entry["log"]).write_text(LOGCAT.format(model=model, t=t))
        else:
            ms = round(t / 1e3, 2)
            (pack / entry["json"]).write_text(json.dumps({"model": entry["model"], "num_threads": 1, "latency": {
                "avg_ms": ms, "median_ms": ms, "min_ms": ms, "max_ms": ms, "num_runs": 20}}))
    return len(manifest["points"])


@pytest.mark.runtime
def test_a_pack_imports_every_format_a_phone_writes_and_fits_the_law_they_hold(tmp_path):
    from tflite_flops.latency.pack import import_pack

    pack = tmp_path / "pack"
    manifest = _export(pack, "ADD-float32", "overhead")
    # ADD-float32 quick: 6 shapes x (XNNPACK, builtin), and the 5 overhead chains x 2
    assert manifest["estimate"]["runs"] == len(manifest["points"]) == 22
    assert manifest["estimate"]["models"] == 11  # a model timed with and without XNNPACK is one file
    assert len(list((pack / "models").iterdir())) == 11
    assert 0 < manifest["estimate"]["typical_s"] < manifest["estimate"]["max_s"]
    readme = (pack / "README.txt").read_text()
    assert "android_aarch64_benchmark_model" in readme and "What was not checked" in readme
    _write_outputs(pack, manifest)
    profile = import_pack(str(pack))
    assert profile.machine.runtime == BENCHMARK_MODEL and profile.machine.cpu == "device"
    assert "benchmark_model and litert-benchmark outputs" in profile.notes[1] and "(22 of 22 runs)" in profile.notes[1]
    add = next(law for law in profile.laws if law.key == ("ADD", "float32", "xnnpack"))
    # 100 us + 0.01 us per input element: the law holds it (the JSON runs are rounded to 0.01 ms)
    assert add.median_abs_error < 0.01
    assert profile.invoke_overhead_us == pytest.approx(20.0, rel=0.05)


ARM_DEVICE = ("cores=8\nmodel=Pixel 9 Pro\nmachine=aarch64\ntool=benchmark_model\n"
              "features= fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop "
              "asimddp sve asimdfhm sve2 svei8mm i8mm bf16\ncore=cpu7\ncache_L1d=64K\ncache_L2=1024K\ncache_L3=8192K\n")


@pytest.mark.runtime
@pytest.mark.parametrize("device, target, caches", [
    (ARM_DEVICE, "arm-i8mm", {"L1d": 64 << 10, "L2": 1 << 20, "L3": 8 << 20}),
    ("cores=8\nmachine=aarch64\n", "arm-neon", {}),  # no features recorded: the plainest Arm target, said so
    ("cores=8\nmodel=old pack\n", "", {}),  # a pack of an earlier version: no architecture, no target
])
def test_an_imported_pack_is_fitted_with_the_devices_target_and_records_it(device, target, caches, tmp_path,
                                                                            monkeypatch):
    """``calibrate --import`` fitted a phone's pack with the host's CPU target and recorded no target and no caches
    (issue 42, 43): the device's own target (from the feature flags run_calibration.sh records) and its last core's
    caches are the profile's, and the laws are fitted on features computed with them."""
    from tflite_flops.latency import pack as pack_module

    pack = tmp_path / "pack"
    manifest = _export(pack, "ADD-float32")
    _write_outputs(pack, manifest)
    (pack / "profiles" / "device.txt").write_text(device)
    seen = set()
    real = pack_module.analyse

    def analyse(point, blob, settings=None, caches_=None):
        seen.add((settings.target.xnnpack, tuple(sorted((caches_ or {}).items()))))
        return real(point, blob, settings, caches_)

    monkeypatch.setattr(pack_module, "analyse", analyse)
    profile = pack_module.import_pack(str(pack))
    assert profile.machine.target == target and dict(profile.machine.caches) == caches
    assert seen == {(target or None, tuple(sorted(caches.items())))}  # every point fitted at the device's target
    said = " ".join(profile.notes)
    assert ("features were not recorded: taken as arm-neon" in said) == (target == "arm-neon")
    assert ("names no CPU target" in said) == (target == "")
    assert ("cache sizes were not recorded" in said) == (not caches)


@pytest.mark.runtime
def test_one_logcat_capture_of_many_runs_is_split_by_graph_and_xnnpack(tmp_path):
    """A device farm returns one capture of the benchmark app run on every model of the pack."""
    from tflite_flops.latency.pack import import_pack

    pack = tmp_path / "pack"
    manifest = _export(pack, "ADD-float32", "overhead")
    prefix = "11-27 10:00:00.000  4321  4321 I tflite  : "
    lines = []
    for entry in manifest["points"]:
        t = round(_us(pack, entry), 1)
        lines += [f"{prefix}Graph: [/data/local/tmp/pack/{entry['model']}]",
                  f"{prefix}Use xnnpack: [{int(entry['delegate'])}]", f"{prefix}count=40 first={t} avg={t} std=1",
                  f"{prefix}Inference timings in us: Init: 900, First inference: {t}, Warmup (avg): {t}, "
                  f"Inference (avg): {t}", "11-27 10:00:00.500  1502  1530 I ActivityManager: Process died"]
    # a result that does not say whether XNNPACK was on, of a model with two runs: matched to neither
    lines += [f"{prefix}Graph: [/data/local/tmp/pack/{manifest['points'][0]['model']}]",
              f"{prefix}Inference timings in us: Init: 1, First inference: 1, Warmup (avg): 1, Inference (avg): 1"]
    (pack / "profiles").mkdir()
    (pack / "profiles" / "farm_logcat.txt").write_text("\n".join(lines) + "\n")
    profile = import_pack(str(pack), device="farm phone")
    assert "(22 of 22 runs)" in profile.notes[1]
    add = next(law for law in profile.laws if law.key == ("ADD", "float32", "xnnpack"))
    assert add.median_abs_error < 0.01 and profile.invoke_overhead_us == pytest.approx(20.0, rel=0.05)


@pytest.mark.runtime
def test_a_malformed_output_in_a_pack_is_one_line(tmp_path):
    pack = tmp_path / "pack"
    manifest = _export(pack, "overhead-add1")
    (pack / "profiles").mkdir()
    (pack / manifest["points"][0]["json"]).write_text('{"latency": {"avg_ms": "soon"}}')
    r = cli("calibrate", "--import", str(pack), "-o", str(tmp_path / "p.json"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "latency.avg_ms is not a number" in r.stderr and manifest["points"][0]["json"] in r.stderr


@pytest.mark.runtime
def test_a_hostile_manifest_is_one_error_each(tmp_path):
    from tflite_flops.latency.pack import import_pack
    from tflite_flops.latency.profile import ProfileError

    pack = tmp_path / "pack"
    base = _export(pack, "overhead-add1")
    entry = base["points"][0]
    (pack / "profiles").mkdir()
    (pack / entry["log"]).write_text("Inference timings in us: Init: 1, First inference: 2, Warmup (avg): 3, "
                                     "Inference (avg): 40\n")
    (pack / "not_a_model.tflite").write_text("abc")
    other = _export(tmp_path / "other", "ADD-float32")["points"][0]
    cases = [({"threads": "four"}, "field threads: 'four' is not a thread count"),
             ({"threads": 0}, "field threads: 0 is not a thread count (an integer from 1 to 1024)"),
             ({"points": 3}, "field points: not a list"),
             ({"points": []}, "field points: 0 runs"),
             ({"points": [{k: v for k, v in entry.items() if k != "model"}]}, "field points[0].model: not models/"),
             ({"points": [{**entry, "key": "NOPE@x"}]}, "a calibration model this tool does not know"),
             ({"points": [{**entry, "model": "models"}]}, "field points[0].model: not models/NAME.tflite"),
             ({"points": [{**entry, "model": "not_a_model.tflite"}]}, "field points[0].model"),
             ({"points": [{**entry, "model": other["model"], "model_sha256": other["model_sha256"]}]},
              "names the model"),
             ({"points": [{**entry, "model_sha256": "0" * 64}]}, "not the model this pack exported"),
             ({"points": [{**entry, "log": 5}]}, "field points[0].log: not profiles/NAME"),
             ({"points": [{**entry, "delegate": "yes"}]}, "field points[0].delegate: not true or false"),
             ({"estimate": {**base["estimate"], "runs": 0}}, "field estimate.runs: 0 is not a finite number >= 1"),
             ({"version": 1}, "calibration pack version 1; this tool reads version 2"),
             ({"points": [entry, entry]}, "names the run 'overhead-add1@x' twice")]
    for change, message in cases:
        (pack / "manifest.json").write_text(json.dumps({**base, **change}))
        with pytest.raises(ProfileError, match=re.escape(message)) as info:
            import_pack(str(pack))
        assert "\n" not in str(info.value)
    # a run at another thread count than the pack's
    (pack / "manifest.json").write_text(json.dumps(base))
    (pack / entry["json"]).write_text(json.dumps({"num_threads": 4, "latency": {"avg_ms": 0.05}}))
    with pytest.raises(ProfileError, match="ran at 4 thread\\(s\\), the pack is for 1"):
        import_pack(str(pack))


def test_a_points_filter_that_keeps_nothing_is_refused(tmp_path):
    r = cli("calibrate", "--export-pack", str(tmp_path / "p"), "--points", "NO_SUCH_OP")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no calibration model's id starts with" in r.stderr


# ---- the runner ---------------------------------------------------------------------------------------


def _sh(pack: Path, *args: str, env: dict | None = None, shell: str = "sh") -> subprocess.CompletedProcess:
    return subprocess.run([shell, str(pack / "run_calibration.sh"), *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})}, cwd=pack.parent)


FAKE_ADB = r"""#!/bin/sh
# a stand-in for adb: the "phone" is this machine; push and pull copy, shell runs sh -c
cmd=$1; shift
case "$cmd" in
  get-state) echo device ;;
  shell) ${DEVICE_SH:-sh} -c "$*" ;;
  push|pull)
    n=$#; i=0; eval "dest=\${$n}"
    for src in "$@"; do
      i=$((i + 1)); [ "$i" -lt "$n" ] || break
      if [ -d "$dest" ]; then cp -R "$src" "$dest/"; else cp -R "$src" "$dest"; fi || exit 1
    done ;;
  *) echo "fake adb: $cmd?" >&2; exit 1 ;;
esac
"""

FAKE_BENCHMARK_MODEL = r"""#!/bin/sh
# a stand-in for benchmark_model: prints a recorded log, writes a one-row op profile; fails on $FAIL_ON
for a in "$@"; do
  case "$a" in
    --graph=*) graph=${a#--graph=} ;;
    --op_profiling_output_file=*) csv=${a#--op_profiling_output_file=} ;;
    --max_secs=*) max=${a#--max_secs=} ;;
  esac
done
case "$graph" in *"${FAIL_ON:-no such model}"*) echo "ERROR: failed" ; exit 1 ;; esac
echo "INFO: Graph: [$graph]"
echo "INFO: Max runs duration (seconds): [$max]"
echo "INFO: count=40 first=300 curr=300 min=290 max=310 avg=300 std=5 p5=290 median=300 p95=310"
echo "INFO: Inference timings in us: Init: 900, First inference: 320, Warmup (avg): 305, Inference (avg): 300"
printf 'Run Order\nnode type, start, first, avg_ms, %%, cdf%%, mem KB, times called, name\nADD, 0, 0.3, 0.3, 100%%, 100%%, 0, 1, o\n' > "$csv"
"""


@pytest.mark.runtime
def test_the_runner_says_what_is_missing(tmp_path):
    pack = tmp_path / "pack"
    _export(pack, "overhead-add1")
    r = _sh(pack, env={"ADB": str(tmp_path / "no-adb-here")})
    assert r.returncode == 2 and "adb not found: install Android platform-tools" in r.stderr
    fake_adb = tmp_path / "adb"
    fake_adb.write_text(FAKE_ADB)
    fake_adb.chmod(0o755)
    r = _sh(pack, str(tmp_path / "missing_benchmark_model"), env={"ADB": str(fake_adb)})
    assert r.returncode == 2 and "no benchmark_model binary at" in r.stderr and "README.txt" in r.stderr
    r = _sh(pack, "--local", str(tmp_path / "missing_benchmark_model"))
    assert r.returncode == 2 and "no benchmark tool at" in r.stderr
    r = _sh(pack, "--local", str(pack / "README.txt"))
    assert r.returncode == 2 and "is not executable" in r.stderr


@pytest.mark.runtime
def test_the_runner_is_plain_sh_by_shellcheck(tmp_path):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    pack = tmp_path / "pack"
    _export(pack, "overhead-add1")
    r = subprocess.run(["shellcheck", "-s", "sh", "-S", "warning", str(pack / "run_calibration.sh")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout


@pytest.mark.slow
@pytest.mark.runtime
@pytest.mark.parametrize("shell", ["sh", "mksh"])
def test_the_adb_mode_pushes_runs_pulls_and_resumes(tmp_path, shell):
    """Against a stand-in adb and a stand-in benchmark_model: the flags passed, one model failing, the rerun.
    Also under mksh, the shell of Android's ``adb shell``, on both sides, when it is installed."""
    from tflite_flops.latency.pack import import_pack

    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    pack = tmp_path / "pack"
    manifest = _export(pack, "ADD-float32", "overhead-add1")
    fake_adb, bench = tmp_path / "adb", tmp_path / "android_aarch64_benchmark_model"
    fake_adb.write_text(FAKE_ADB)
    bench.write_text(FAKE_BENCHMARK_MODEL)
    for f in (fake_adb, bench):
        f.chmod(0o755)
    phone = tmp_path / "phone"
    env = {"ADB": str(fake_adb), "TFLITE_FLOPS_DEVICE_DIR": str(phone), "DEVICE_SH": shell}
    failing = manifest["points"][0]
    r = _sh(pack, str(bench), env={**env, "FAIL_ON": failing["id"]}, shell=shell)
    assert r.returncode == 2 and "some runs failed on the phone" in r.stderr
    runs = len(manifest["points"])
    assert f"done: {runs - 2} run now, 0 already done, 2 failed" in r.stdout  # the model's two runs (@x, @b)
    assert (phone / "benchmark_model").exists() and (phone / "profiles" / "device.txt").exists()
    got = sorted(p.name for p in (pack / "profiles").glob("[!.]*.log"))  # the failed runs' output stays as .partial.*
    assert len(got) == runs - 2 and Path(failing["log"]).name not in got
    assert (pack / "profiles" / f".partial.{Path(failing['log']).name}").read_text().startswith("ERROR: failed")
    log = (pack / manifest["points"][2]["log"]).read_text()
    assert "Max runs duration (seconds): [0.5]" in log  # the --quick budget reached the tool
    # the rerun pushes what came back, so the phone runs only the failed model
    r = _sh(pack, str(bench), env=env, shell=shell)
    assert r.returncode == 0, r.stderr
    assert f"done: 2 run now, {runs - 2} already done, 0 failed, 0 not run, of {runs}" in r.stdout
    assert len(list((pack / "profiles").glob("[!.]*.log"))) == runs and "calibrate --import" in r.stdout
    profile = import_pack(str(pack), device="stand-in phone")
    assert profile.machine.cpu == "stand-in phone" and profile.machine.cores >= 1
    # the runner recorded the CPU it ran on (here this host's): its target and its caches are the profile's
    from tflite_flops.latency.calibrate import cache_sizes
    from tflite_flops.targets import host

    assert profile.machine.target == host()[0].name and profile.machine.caches
    assert set(profile.machine.caches) <= set(cache_sizes()) or not cache_sizes()
    assert f"({runs} of {runs} runs)" in profile.notes[1]


@pytest.mark.slow
@pytest.mark.runtime
def test_end_to_end_with_litert_benchmark_standing_in_for_the_phone(tmp_path):
    """Export a small pack, run its runner locally with the wheel's litert-benchmark, import, predict."""
    if shutil.which("litert-benchmark") is None:
        pytest.skip("litert-benchmark (the ai-edge-litert wheel's console script) is not on PATH")
    pack = tmp_path / "pack"
    r = cli("calibrate", "--export-pack", str(pack), "--quick", "--points",
            "CONV_2D-float32-56,CONV_2D-float32-14,overhead-add1,overhead-add16")
    assert r.returncode == 0, r.stderr
    assert "estimated time on a mid-range phone" in r.stdout and "README.txt" in r.stdout
    manifest = json.loads((pack / "manifest.json").read_text())
    runs = len(manifest["points"])
    delegate = sum(1 for p in manifest["points"] if p["delegate"])
    r = _sh(pack, "--local", "litert-benchmark")
    assert r.returncode == 0, r.stderr
    assert f"done: {delegate} run now, 0 already done, 0 failed, {runs - delegate} not run" in r.stdout
    assert len(list((pack / "profiles").glob("*.json"))) == delegate
    r = _sh(pack, "--local", "litert-benchmark")  # resumable: nothing left to run
    assert f"done: 0 run now, {delegate} already done" in r.stdout
    profile_path = tmp_path / "standin.json"
    r = cli("calibrate", "--import", str(pack), "--device", "litert-benchmark stand-in", "-o", str(profile_path))
    assert r.returncode == 0, r.stderr
    profile = json.loads(profile_path.read_text())
    assert profile["machine"]["runtime"] == LITERT_BENCHMARK and profile["machine"]["cores"] >= 1
    assert any(law["family"] == "CONV_2D" for law in profile["laws"])
    r = cli("analyze", str(CNN), "--predict", str(profile_path))
    assert r.returncode == 0, r.stderr
    assert "Predicted latency" in r.stdout and "litert-benchmark stand-in" in r.stdout


@pytest.mark.slow
@pytest.mark.runtime
def test_the_phone_flow_with_an_arm_runtime_under_emulation(tmp_path):
    """The phone flow end to end with the aarch64 LiteRT (issue 43): the pack's runner times its models with the
    aarch64 wheel's litert-benchmark under qemu-user on a Cortex-A76, and records that core (its ``/proc/cpuinfo``
    and caches, as the emulation lab lays them out: the runner's shell is the host's); the import fits the laws with
    the A76's target, records it and its caches, and every prediction with the profile runs at that target.
    Timings under emulation mean nothing: this checks the path, not the numbers."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import targets_lab

    lab = targets_lab.TARGETS["cortex-a76"]
    why = targets_lab.missing(lab)
    if why:
        (pytest.fail if os.environ.get("CI", "").lower() in ("1", "true", "yes") else pytest.skip)(
            f"the Arm lab is not installed: {why}")
    bench = tmp_path / "bin" / "litert-benchmark"  # the phone's tool: the aarch64 wheel's, emulated
    bench.parent.mkdir()
    python = " ".join(shlex.quote(a) for a in targets_lab.python_command(lab, tmp_path))
    bench.write_text("#!/bin/sh\nexec " + python + " -c 'import sys; from ai_edge_litert.tools.benchmark_litert_model "
                     "import main; sys.argv[0] = \"litert-benchmark\"; sys.exit(main())' \"$@\"\n")
    bench.chmod(0o755)
    sysfs = tmp_path / "sys" / "cpu3" / "cache"  # the A76's 64 KiB L1d and 512 KiB L2 (a Pixel's big core)
    for index, (level, kind, size) in enumerate(((1, "Data", "64K"), (1, "Instruction", "64K"),
                                                  (2, "Unified", "512K"))):
        (sysfs / f"index{index}").mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("size", size)):
            (sysfs / f"index{index}" / name).write_text(f"{value}\n")
    pack = tmp_path / "pack"
    r = cli("calibrate", "--export-pack", str(pack), "--quick", "--points", "CONV_2D-float32-14,overhead-add1")
    assert r.returncode == 0, r.stderr
    env = {"TFLITE_FLOPS_CPUINFO": str(targets_lab.overlay(lab, tmp_path) / "proc" / "cpuinfo"),
           "TFLITE_FLOPS_SYSFS_CPU": str(tmp_path / "sys"), "TFLITE_FLOPS_MACHINE": "aarch64"}
    r = _sh(pack, "--local", str(bench), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    profile_path = tmp_path / "a76.json"
    r = cli("calibrate", "--import", str(pack), "--device", "emulated Cortex-A76", "-o", str(profile_path))
    assert r.returncode == 0, r.stderr
    profile = json.loads(profile_path.read_text())
    assert profile["machine"]["target"] == "arm-dotprod-fp16"  # the A76's features (asimddp), not this host's
    assert profile["machine"]["caches"] == {"L1d": 64 << 10, "L2": 512 << 10}
    assert any(law["family"] == "CONV_2D" for law in profile["laws"])
    r = cli("analyze", str(CNN), "--predict", str(profile_path), "-f", "json")
    assert r.returncode == 0, r.stderr
    assert "arm-dotprod-fp16 (emulated Cortex-A76) governs the prediction" in r.stderr
    report = json.loads(r.stdout)
    assert report["memory"]["target"] == "arm-dotprod-fp16" and report["prediction"]["latency_ms"] > 0
    assert "no_target" not in report["prediction"]["flags"] and "no_caches" not in report["prediction"]["flags"]
