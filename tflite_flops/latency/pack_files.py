"""The text files of a phone calibration pack: the runner script ``run_calibration.sh`` and ``README.txt``.

Pure text, filled in by :func:`tflite_flops.latency.pack.export_pack`. The script is POSIX ``sh`` (it runs
under a Linux shell and under Android's ``mksh`` alike) and has two modes:

* **adb** (default, on the computer the phone is plugged into): checks ``adb``, the phone and the
  ``benchmark_model`` binary; pushes the binary, the models, the manifest and itself to
  ``$TFLITE_FLOPS_DEVICE_DIR`` (default ``/data/local/tmp/tflite_flops_pack``) together with any
  outputs already here; runs itself there in the local mode in one ``adb shell``; pulls ``profiles/`` back.
* **--local** (on the device itself: a Linux/Arm board, a phone's shell, or this machine as a stand-in):
  runs each model once with the tool and writes its outputs to ``profiles/``.

Either mode is resumable: a model's outputs are written under a temporary name and renamed only when
the run succeeded, and a model whose ``profiles/STEM.log`` exists is skipped. Two tools are driven,
told apart by their file name (or ``BENCH_KIND=benchmark_model|litert``):

* TFLite/LiteRT's ``benchmark_model``: ``--graph``, ``--num_threads``, ``--use_xnnpack``, the time budget
  (``--warmup_runs --warmup_min_secs=0 --num_runs --min_secs --max_secs``) and op profiling to CSV; its
  stdout is the log (whose "Inference timings in us" line the import reads);
* the ai-edge-litert wheel's ``litert-benchmark`` (Python; a stand-in for a Linux board, not a phone):
  ``--model``, ``--num_threads``, ``--warmup_runs``, ``--num_runs`` and ``--result_json``; it has no
  switch for XNNPACK (its CPU path is XNNPACK) and no time budget, so the builtin-kernel models are
  not run with it and each model runs a fixed number of times.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

SCRIPT_HEAD = r"""#!/bin/sh
# tflite_flops calibration pack runner ({models} runs of {files} models; read README.txt first).
#
#   sh run_calibration.sh [BENCH]           adb mode: push to the phone, run there, pull profiles/ back
#   sh run_calibration.sh --local [BENCH]   run here: a Linux/Arm board, a phone's own shell, a stand-in
#
# BENCH: the benchmark_model binary (default: ./benchmark_model in this folder), or in --local mode
# litert-benchmark (the ai-edge-litert wheel's tool). Reruns skip the models whose outputs exist.
# Environment: ADB (the adb to use), TFLITE_FLOPS_DEVICE_DIR (the folder on the phone), BENCH_KIND.
THREADS={threads}
WARMUP_RUNS={warmup_runs}
NUM_RUNS={num_runs}
MIN_SECS={min_secs}
MAX_SECS={max_secs}
LITERT_RUNS={litert_runs}
DEVICE_DIR=${{TFLITE_FLOPS_DEVICE_DIR:-/data/local/tmp/tflite_flops_pack}}
ADB=${{ADB:-adb}}
TOTAL={models}
"""

SCRIPT_BODY = r"""
die() { echo "run_calibration.sh: error: $*" >&2; exit 2; }

cd "$(dirname "$0")" || die "cannot enter the pack's folder"
[ -f manifest.json ] && [ -d models ] || die "run this script from an exported pack (no manifest.json or models/)"

kind_of() {  # the tool's kind from its name
  if [ -n "${BENCH_KIND:-}" ]; then echo "$BENCH_KIND"; return; fi
  case "$(basename "$1")" in
    *litert-benchmark*|*litert_benchmark*|benchmark_litert_model.py) echo litert ;;
    *) echo benchmark_model ;;
  esac
}

N=0; DONE=0; SKIPPED=0; FAILED=0; NOT_RUN=0

run() {  # run STEM MODEL_ID XNNPACK(true|false): one model, once
  N=$((N + 1))
  if [ -f "profiles/$1.log" ]; then SKIPPED=$((SKIPPED + 1)); return 0; fi
  tmp="profiles/.partial.$1"
  rm -f "$tmp.log" "$tmp.csv" "$tmp.json"
  if [ "$KIND" = litert ]; then
    if [ "$3" = false ]; then
      NOT_RUN=$((NOT_RUN + 1))
      echo "[$N/$TOTAL] $1: not run (litert-benchmark cannot turn XNNPACK off)"
      return 0
    fi
    echo "[$N/$TOTAL] $1"
    "$BENCH" --model="models/$2.tflite" --num_threads="$THREADS" --warmup_runs="$WARMUP_RUNS" \
      --num_runs="$LITERT_RUNS" --result_json="$tmp.json" > "$tmp.log" 2>&1 \
      && [ -s "$tmp.json" ] && mv "$tmp.json" "profiles/$1.json" && mv "$tmp.log" "profiles/$1.log"
  else
    echo "[$N/$TOTAL] $1"
    "$BENCH" --graph="models/$2.tflite" --num_threads="$THREADS" --use_xnnpack="$3" \
      --warmup_runs="$WARMUP_RUNS" --warmup_min_secs=0 --num_runs="$NUM_RUNS" --min_secs="$MIN_SECS" \
      --max_secs="$MAX_SECS" --enable_op_profiling=true --op_profiling_output_mode=csv \
      --op_profiling_output_file="$tmp.csv" > "$tmp.log" 2>&1 \
      && grep -q "Inference timings in us" "$tmp.log" \
      && { [ ! -f "$tmp.csv" ] || mv "$tmp.csv" "profiles/$1.csv"; } && mv "$tmp.log" "profiles/$1.log"
  fi
  if [ -f "profiles/$1.log" ]; then
    DONE=$((DONE + 1))
  else
    FAILED=$((FAILED + 1))
    echo "  failed: $1 (its output: $tmp.log)" >&2
  fi
}

local_mode() {
  BENCH=${1:-./benchmark_model}
  case "$BENCH" in
    */*) ;;
    *) if command -v "$BENCH" >/dev/null 2>&1; then BENCH=$(command -v "$BENCH"); else BENCH="./$BENCH"; fi ;;
  esac
  [ -f "$BENCH" ] || die "no benchmark tool at $BENCH: get benchmark_model for this device (README.txt, step 1) and pass its path"
  [ -x "$BENCH" ] || die "$BENCH is not executable: chmod +x $BENCH"
  KIND=$(kind_of "$BENCH")
  mkdir -p profiles || die "cannot create profiles/ here"
  {  # what the import records of the device: its CPU count, Android model, architecture and the tool
    echo "cores=$(grep -c '^processor' "${TFLITE_FLOPS_CPUINFO:-/proc/cpuinfo}" 2>/dev/null)"
    echo "model=$(getprop ro.product.model 2>/dev/null)"
    echo "machine=${TFLITE_FLOPS_MACHINE:-$(uname -m 2>/dev/null)}"
    echo "tool=$KIND"
    # its CPU target (the feature flags XNNPACK's kernels are picked by) and the caches of its last core (on a
    # phone, a big core: where a one-thread benchmark runs when the device is busy)
    # (TFLITE_FLOPS_CPUINFO and TFLITE_FLOPS_SYSFS_CPU: the emulated phone of the tests, whose shell is the host's)
    cpuinfo=${TFLITE_FLOPS_CPUINFO:-/proc/cpuinfo}; sysfs=${TFLITE_FLOPS_SYSFS_CPU:-/sys/devices/system/cpu}
    echo "features=$(grep -m1 -iE '^(features|flags)[[:space:]]*:' "$cpuinfo" 2>/dev/null | cut -d: -f2-)"
    last=$(ls -d "$sysfs"/cpu[0-9]* 2>/dev/null | sed 's/.*cpu//' | sort -n | tail -1)
    echo "core=cpu$last"
    for c in "$sysfs"/cpu"$last"/cache/index*; do
      t=$(cat "$c/type" 2>/dev/null)
      [ -n "$t" ] && [ "$t" != Instruction ] || continue
      d=""; [ "$t" = Data ] && d=d
      echo "cache_L$(cat "$c/level" 2>/dev/null)$d=$(cat "$c/size" 2>/dev/null)"
    done
  } > profiles/device.txt
  echo "running $TOTAL calibration runs with $BENCH ($KIND, $THREADS thread(s)); outputs in profiles/"
  runs
  echo "done: $DONE run now, $SKIPPED already done, $FAILED failed, $NOT_RUN not run, of $TOTAL"
  [ "$FAILED" -eq 0 ] || exit 1
}

adb_mode() {
  BENCH=${1:-./benchmark_model}
  command -v "$ADB" >/dev/null 2>&1 || die "adb not found: install Android platform-tools and put adb on PATH (or run 'sh run_calibration.sh --local BENCH' on the device itself)"
  state=$("$ADB" get-state 2>&1)
  [ "$state" = device ] || die "no phone ready for adb ($state): plug it in with USB debugging on, accept the prompt, check 'adb devices'"
  [ -f "$BENCH" ] || die "no benchmark_model binary at $BENCH: download android_aarch64_benchmark_model (README.txt, step 1) and run 'sh run_calibration.sh PATH_TO_IT'"
  [ "$(kind_of "$BENCH")" = benchmark_model ] || die "$BENCH is litert-benchmark, a Python tool that does not run on a phone: use benchmark_model, or --local on a Linux board"
  echo "pushing the pack to the phone ($DEVICE_DIR)"
  "$ADB" shell mkdir -p "$DEVICE_DIR/profiles" || die "cannot create $DEVICE_DIR on the phone"
  "$ADB" push "$BENCH" "$DEVICE_DIR/benchmark_model" >/dev/null || die "adb push of $BENCH failed"
  "$ADB" shell chmod 755 "$DEVICE_DIR/benchmark_model" || die "cannot make benchmark_model executable on the phone"
  "$ADB" push models manifest.json run_calibration.sh "$DEVICE_DIR/" >/dev/null || die "adb push of the models failed"
  if ls profiles/*.log >/dev/null 2>&1; then  # outputs pulled by an earlier run: the phone skips their models
    "$ADB" push profiles "$DEVICE_DIR/" >/dev/null || die "adb push of profiles/ failed"
  fi
  "$ADB" shell "cd $DEVICE_DIR && sh run_calibration.sh --local ./benchmark_model"
  status=$?
  echo "pulling profiles/ back"
  "$ADB" pull "$DEVICE_DIR/profiles" . >/dev/null || die "adb pull of $DEVICE_DIR/profiles failed"
  [ "$status" -eq 0 ] || die "some runs failed on the phone (see above); run the script again to retry them"
  echo "next: tflite_flops calibrate --import $(pwd) --device 'PHONE NAME' -o phone.json"
}

case "${1:-}" in
  -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
  --local) shift; local_mode "$@" ;;
  *) adb_mode "$@" ;;
esac
exit 0
"""


def script(budget: Mapping[str, Any], threads: int, runs: Sequence[tuple[str, str, bool]], files: int) -> str:
    """``run_calibration.sh`` for ``runs`` (stem, model id, XNNPACK) at ``threads`` with the time ``budget``."""
    head = SCRIPT_HEAD.format(models=len(runs), files=files, threads=threads, **budget)
    calls = "\n".join(f"  run {stem} {model} {'true' if xnnpack else 'false'}" for stem, model, xnnpack in runs)
    return head + SCRIPT_BODY.replace("\ncase \"${1:-}\"", f"\nruns() {{\n{calls}\n}}\n\ncase \"${{1:-}}\"", 1)


LARGEST_MACS = 115_605_504  # the suite's largest op: a 3x3 CONV_2D on 56x56x64 to 64 channels (and its like)
NIGHTLY = "https://storage.googleapis.com/tensorflow-nightly-public/prod/tensorflow/release/lite/tools/nightly/latest/"


def duration(seconds: float) -> str:
    """``95`` -> "2 min", ``40`` -> "40 s"."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def readme(m: Mapping[str, Any]) -> str:
    """``README.txt``: what the pack is, how long it takes, and the steps, from the manifest ``m``."""
    b, e = m["budget"], m["estimate"]
    builtin = sum(1 for p in m["points"] if not p["delegate"])
    return f"""tflite_flops calibration pack
=============================

{e['runs']} calibration runs of {e['models']} single-op models ({e['bytes'] / 1e6:.1f} MB), written with
{m['runtime']} {m['runtime_version']}, for {m['threads']} thread(s) with XNNPACK {'on' if m['xnnpack'] else 'off'}
({'the --quick suite' if m['quick'] else 'the full suite'}{', filtered: ' + ', '.join(m['only']) if m.get('only') else ''}).
Run them on the phone with benchmark_model, bring the outputs back, and fit a device profile:
tflite_flops then predicts any model's time on that phone (analyze --predict).

Estimated time on a mid-range phone: about {duration(e['typical_s'])}, at most about {duration(e['max_s'])}.
How: each run is bounded by benchmark_model's own flags, which run_calibration.sh passes:
{b['warmup_runs']} warm-up runs (--warmup_runs={b['warmup_runs']} --warmup_min_secs=0), then timed runs until both
{b['num_runs']} runs and {b['min_secs']} s are reached, stopping at {b['max_secs']} s (--num_runs={b['num_runs']} --min_secs={b['min_secs']}
--max_secs={b['max_secs']}; benchmark_model finishes the run under way). ASSUMED: {e['startup_s']} s a run for
starting benchmark_model, loading the model and creating the delegate, and every op of the suite
under {b['min_secs'] / b['num_runs'] * 1e3:.0f} ms a run (true of its largest op, a 3x3 CONV_2D of 116 M MACs, on
a phone doing over {LARGEST_MACS / (b['min_secs'] / b['num_runs']) / 1e9:.1f} GMAC/s on {m['threads']} thread(s); a slower op makes
its run longer, within --max_secs). Typical: runs x ({e['startup_s']} s + {b['min_secs']} s); at most: runs x
({e['startup_s']} s + {b['max_secs']} s + 3 runs of the slowest op). A phone that throttles when hot, or a slower
phone, takes longer: the script prints each model as it goes, and a rerun continues where it stopped.

What you need
-------------
* adb (Android platform-tools) on this computer, and the phone plugged in with USB debugging on
  ("adb devices" lists it as "device").
* benchmark_model for the phone's CPU, a native command-line binary (not the benchmark APK):
  - 64-bit Arm phones (almost all current ones): android_aarch64_benchmark_model
  - 32-bit Arm: android_arm_benchmark_model
  - a Linux Arm board: linux_aarch64_benchmark_model or linux_arm_benchmark_model
  The LiteRT/TensorFlow Lite documentation ("Performance measurement", "Native benchmark binary")
  links nightly prebuilt binaries, for example
    {NIGHTLY}android_aarch64_benchmark_model
  Those are built from the latest sources, not from {m['runtime']} {m['runtime_version']}. For the same
  version, build it from the LiteRT (or TensorFlow) sources at that version's tag:
    bazel build -c opt --config=android_arm64 //tflite/tools/benchmark:benchmark_model
  (TensorFlow: //tensorflow/lite/tools/benchmark:benchmark_model). The suite's ops are classic
  builtin ops that every recent version runs; kernel speed can differ between versions.

Steps
-----
1. Put the binary in this folder as ./benchmark_model (or pass its path in step 2).
2. Run, from this folder:
     sh run_calibration.sh                      # or: sh run_calibration.sh PATH/TO/android_aarch64_benchmark_model
   It checks adb, the phone and the binary, pushes everything to /data/local/tmp/tflite_flops_pack
   (set TFLITE_FLOPS_DEVICE_DIR for another folder), runs every model there, and pulls profiles/
   back here. Keep the phone plugged in with its screen on (adb shell svc power stayon usb keeps it
   awake), close other apps, and leave it alone while it runs.
   Interrupted? Run the same command again: models already done are skipped.
   On a Linux board (no adb): copy this folder there and run
     sh run_calibration.sh --local ./benchmark_model
   then copy profiles/ back here.
3. Import and predict, on this computer:
     tflite_flops calibrate --import PATH/TO/THIS/FOLDER --device "PHONE NAME" -o phone.json
     tflite_flops analyze model.tflite --predict phone.json --threads {m['threads']}{'' if m['xnnpack'] else ' --no-xnnpack'}

What comes back, and what the import reads
------------------------------------------
profiles/STEM.log (benchmark_model's stdout: the "Inference timings in us" line, and the timed runs'
"count=... median=..." line when the version prints it) and profiles/STEM.csv (the op profile).
Each model's time is its median (else its average) from the log. Device farms: a logcat capture of
the Android benchmark app, or litert-benchmark's --result_json, saved as profiles/STEM.log or
profiles/STEM.json, is read the same way (STEM: the names the script prints; manifest.json lists them);
so is one logcat capture of many runs put in profiles/ under any other name (each result matched to
its run by the "Graph: [.../ID.tflite]" and "Use xnnpack: [0|1]" lines it logged).
{builtin} of the runs use the builtin kernels (--use_xnnpack=false): litert-benchmark cannot run those.

What was not checked where this pack was made
---------------------------------------------
The script, the time budget and the import were tested with litert-benchmark standing in for
benchmark_model on a Linux x86 machine, and with a stand-in for adb that copies files; the formats
read were taken from benchmark_model's sources and documentation. Neither a real phone, adb, nor
the Android benchmark_model binary ran there, and the time estimate is an assumption, not a
measurement: the first real run tells (the script prints each model as it goes).
"""
