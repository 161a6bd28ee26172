"""The emulation lab: what the real LiteRT runtime does with a model on another CPU, read under qemu-user.

XNNPACK picks its microkernels, and so its packing, indirection tiles and buffers, from the CPU it
finds; LiteRT's arena and XNNPACK's placement do not depend on the ISA. This script runs a probe in
the Python of a target, emulated (``qemu-aarch64 -cpu cortex-a76`` with Debian's arm64 python3.11
and the aarch64 wheels of ai-edge-litert and numpy, installed by ``.ci/install_emulation.sh``;
``qemu-x86_64 -cpu Haswell`` with this Python for x86 with AVX2 only) or natively (``host``), and
prints JSON, per model:

* ``plan``: the ops each DELEGATE node replaced, per partition (``tests/litert_plan.py``);
* ``builtin`` and ``xnnpack``: LiteRT's arena and persistent arena per subgraph, XNNPACK off and on,
  and glibc's heap growth (``mallinfo2``) once the interpreter is built and over building,
  allocating and invoking it (``tests/litert_arena.py``); ``delegate_heap``: what XNNPACK adds to
  the heap (as ``tests/test_runtime_memory.py`` reads it);
* ``traced``: XNNPACK's and its delegate's own allocations, from the allocation tracer
  (``tests/malloc_trace.c``, cross-compiled with ``aarch64-linux-gnu-gcc`` for Arm) preloaded into
  the emulated process (``--trace``).

An Arm core's CPU detection reads ``/proc/cpuinfo``: the host's x86 one crashes it. qemu's ``-L``
prefix serves the guest's file opens from a directory first, so each Arm target runs with an overlay
of the sysroot holding an Arm ``proc/cpuinfo`` whose part number and features are the emulated
core's (a feature the core lacks, ``asimddp`` on a Cortex-A53, dies of an illegal instruction). No
privileges or mount namespace are needed.

Memory, placement and arenas read this way are exact (the same binary code runs, instruction for
instruction, as on the device); timing is meaningless (emulation is 10-50 times slower, and not
uniformly). Usage::

    .ci/install_emulation.sh
    python benchmarks/targets_lab.py probe --target cortex-a76 --trace sample_models/cnn_int8.tflite
    python benchmarks/targets_lab.py compare --target cortex-a53 sample_models/*.tflite
    python benchmarks/targets_lab.py measure -o benchmarks/targets_measured.json

The lab imports only the standard library at the top: the same file is the probe (``child``) the
emulated Python runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SAMPLES = ROOT / "sample_models"

_ARM_BASE = "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid"
_ARM_DOTPROD = _ARM_BASE + " atomics fphp asimdhp asimdrdm lrcpc dcpop asimddp"
_ARM_V9 = _ARM_DOTPROD + " jscvt fcma sha3 sm3 sm4 sha512 asimdfhm dit uscat ilrcpc flagm ssbs sb dcpodp i8mm bf16"
# an Intel Haswell's /proc/cpuinfo flags (a Xeon E5-2680 v3: AVX2 and FMA3, no AVX-512), what the tool's target
# detection reads in the emulated process (the lab's x86 overlay); XNNPACK reads CPUID, which qemu emulates
_HASWELL_FLAGS = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx "
                  "fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon pebs bts "
                  "rep_good nopl xtopology nonstop_tsc aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est "
                  "tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer "
                  "aes xsave avx f16c rdrand lahf_lm abm cpuid_fault epb invpcid_single pti intel_ppin ssbd ibrs "
                  "ibpb stibp tpr_shadow vnmi flexpriority ept vpid fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms "
                  "invpcid cqm xsaveopt cqm_llc cqm_occup_llc dtherm ida arat pln pts md_clear flush_l1d")
# qemu's Haswell without the features its TCG cannot emulate (none of them XNNPACK's), so that qemu warns of none on
# the stderr of every emulated process (a test reads a command's stderr)
_QUIET_HASWELL = "Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"


@dataclass(frozen=True)
class LabTarget:
    """A CPU the lab runs LiteRT on: under ``qemu-<machine> -cpu <qemu_cpu>``, or natively (``qemu_cpu=None``).
    An Arm target's ``/proc/cpuinfo`` names its core (``part``, ``variant``, ``revision``) and ``features``;
    an x86 one's, its ``flags`` (``features``) and model number (``part``)."""

    name: str
    machine: str  # "aarch64" or "x86_64"
    qemu_cpu: str | None
    about: str
    tool: str  # the tool's target of this CPU class (``--target``, ``tflite_flops.targets``)
    features: str = ""
    part: str = ""
    variant: str = "0x0"
    revision: int = 0


TARGETS = {t.name: t for t in (
    LabTarget("cortex-a53", "aarch64", "cortex-a53", "Armv8.0-A, NEON (no dot product)", "arm-neon",
              _ARM_BASE, "0xd03", "0x0", 4),
    LabTarget("cortex-a76", "aarch64", "cortex-a76", "Armv8.2-A, NEON with dot product and fp16 arithmetic",
              "arm-dotprod-fp16", _ARM_DOTPROD, "0xd0b", "0x4", 1),
    LabTarget("armv9", "aarch64", "max,sve=off,sme=off", "Armv9-A class (i8mm, bf16), as a Cortex-A710 without SVE",
              "arm-i8mm", _ARM_V9, "0xd47", "0x2", 0),
    LabTarget("x86-avx2", "x86_64", _QUIET_HASWELL, "x86-64 with AVX2 and FMA3, no AVX-512 (emulated Haswell)",
              "x86-avx2", _HASWELL_FLAGS, "60"),
    LabTarget("host", os.uname().machine, None, "this machine, natively", "host"),
)}


def sysroot() -> Path:
    """Where ``.ci/install_emulation.sh`` puts the aarch64 sysroot (``$TFLITE_FLOPS_SYSROOT`` overrides)."""
    if os.environ.get("TFLITE_FLOPS_SYSROOT"):
        return Path(os.environ["TFLITE_FLOPS_SYSROOT"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tflite_flops" / "aarch64-sysroot"


def missing(target: LabTarget) -> str | None:
    """Why ``target`` cannot run here, or None."""
    if target.qemu_cpu is None:
        return None
    qemu = f"qemu-{target.machine}"
    if target.machine == "x86_64" and os.uname().machine != "x86_64":
        return "it runs this Python under qemu-x86_64: it needs an x86-64 host"
    if shutil.which(qemu) is None:
        return f"{qemu} is not installed (run .ci/install_emulation.sh)"
    if target.machine == "aarch64" and not (sysroot() / ".installed").is_file():
        return f"no aarch64 sysroot at {sysroot()} (run .ci/install_emulation.sh)"
    return None


def cpuinfo(target: LabTarget, processors: int) -> str:
    """A ``/proc/cpuinfo`` for ``processors`` cores of ``target``: an Arm one, or an x86 one (Intel, family 6)."""
    if target.machine == "x86_64":
        entry = ("processor\t: {i}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: {p}\n"
                 "model name\t: {n} (emulated)\nflags\t\t: {f}\n\n")
        return "".join(entry.format(i=i, p=target.part, n=target.about.split(" (")[0], f=target.features)
                       for i in range(processors))
    entry = ("processor\t: {i}\nBogoMIPS\t: 50.00\nFeatures\t: {f}\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
             "CPU variant\t: {v}\nCPU part\t: {p}\nCPU revision\t: {r}\n\n")
    return "".join(entry.format(i=i, f=target.features, v=target.variant, p=target.part, r=target.revision)
                   for i in range(processors))


def overlay(target: LabTarget, directory: Path) -> Path:
    """A root for qemu's ``-L``: on Arm, the sysroot's entries (links); and the ``proc/cpuinfo`` of ``target``
    (on x86 the only file: every other path is the host's own)."""
    root = directory / f"root-{target.name}"
    if not root.is_dir():
        root.mkdir(parents=True)
        for entry in sysroot().iterdir() if target.machine == "aarch64" else ():
            if entry.name != "proc":
                (root / entry.name).symlink_to(entry)
        (root / "proc").mkdir()
        (root / "proc" / "cpuinfo").write_text(cpuinfo(target, os.cpu_count() or 1))
    return root


def python_command(target: LabTarget, directory: Path, preload: Path | None = None) -> list[str]:
    """The command that runs Python on ``target`` (arguments follow), with ``preload`` preloaded if given."""
    if target.qemu_cpu is None:
        return [sys.executable] if preload is None else ["env", f"LD_PRELOAD={preload}", sys.executable]
    command = [f"qemu-{target.machine}", "-cpu", target.qemu_cpu]
    if preload is not None:
        command += ["-E", f"LD_PRELOAD={preload}"]  # the guest's environment only, not qemu's own
    if target.machine == "aarch64":
        return command + ["-L", str(overlay(target, directory)), str(sysroot() / "usr" / "bin" / "python3.11")]
    return command + [sys.executable]


# the tests whose expectations depend on the CPU they run on (the detected host target): XNNPACK's own bytes
# against the tracer and the heap, its packing and buffers to the byte; then the target detection and settings
HOST_SUITE = ("tests/test_runtime_memory.py", "tests/test_targets.py", "tests/test_settings.py")


def emulated_python(target: LabTarget, directory: Path) -> Path:
    """An executable that runs this Python on the x86 ``target`` under qemu-x86_64 with its ``/proc/cpuinfo``
    (:func:`overlay`), written into ``directory``: the emulated Python's ``sys.executable`` is that file
    (qemu's ``-0``), so that the processes a test starts with ``sys.executable`` are emulated too, and an
    ``LD_PRELOAD`` (the allocation tracer) goes to the emulated process, not to qemu. A virtual environment
    stays one: its ``pyvenv.cfg`` and ``lib`` beside the file's folder."""
    if target.machine != "x86_64" or target.qemu_cpu is None:
        raise RuntimeError(f"{target.name}: only an emulated x86-64 target runs this Python")
    home = directory / f"python-{target.name}"
    script = home / "bin" / "python"
    if not script.is_file():
        script.parent.mkdir(parents=True)
        if sys.prefix != sys.base_prefix:  # a virtual environment: the emulated Python finds it beside its argv[0]
            shutil.copy(Path(sys.prefix) / "pyvenv.cfg", home / "pyvenv.cfg")
            (home / "lib").symlink_to(Path(sys.prefix) / "lib")
        real = Path(sys.executable).resolve() if sys.prefix == sys.base_prefix else Path(sys.executable)
        q = shlex.quote
        script.write_text(
            "#!/bin/sh\n"
            f"# {target.about}: this Python under qemu (benchmarks/targets_lab.py, emulated_python)\n"
            'preload="${LD_PRELOAD-}"; unset LD_PRELOAD\n'
            f"exec qemu-x86_64 -cpu {q(target.qemu_cpu)} -L {q(str(overlay(target, directory)))} -0 {q(str(script))} "
            f'${{preload:+-E "LD_PRELOAD=$preload"}} {q(str(real))} "$@"\n')
        script.chmod(0o755)
    return script


def host_suite(target: str, args: list[str]) -> int:
    """Runs pytest (``args``, default: :data:`HOST_SUITE`) in this checkout on the emulated ``target``, as the
    README's test command would run on a host of that CPU class: the tool detects ``target`` from the emulated
    ``/proc/cpuinfo`` and XNNPACK picks that CPU's kernels. Returns pytest's exit status.

    Raises:
        RuntimeError: the target cannot run here, or the emulated Python detects another target.
    """
    lab = TARGETS[target]
    why = missing(lab) or (None if lab.machine == "x86_64" and lab.qemu_cpu else
                           "host-suite runs this Python under qemu-x86_64: an emulated x86-64 target only")
    if why:
        raise RuntimeError(f"{target}: {why}")
    with tempfile.TemporaryDirectory(prefix="targets-lab-") as tmp:
        python = str(emulated_python(lab, Path(tmp)))
        check = subprocess.run([python, "-c", "from tflite_flops import targets; print(targets.host()[0].name)"],
                               cwd=ROOT, capture_output=True, text=True)
        detected = check.stdout.strip() or check.stderr[-500:]
        if detected != lab.tool:
            raise RuntimeError(f"{target}: the emulated Python detects {detected!r}, not {lab.tool!r}")
        print(f"{target}: pytest under {python} (detected target {lab.tool})", file=sys.stderr, flush=True)
        return subprocess.run([python, "-m", "pytest", *(args or HOST_SUITE)], cwd=ROOT).returncode


def _clean_env() -> dict[str, str]:
    """This environment without what would point another Python at this one's packages."""
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH")
    return {k: v for k, v in os.environ.items() if k not in drop}


def parse_model(spec: str) -> tuple[str, tuple[int, ...] | None]:
    """``path`` or ``path:1x32x32x3`` (the first input's shape)."""
    path, _, shape = spec.rpartition(":") if ":" in spec and spec.rsplit(":", 1)[1][:1].isdigit() else (spec, "", "")
    return path, tuple(int(d) for d in shape.split("x")) if shape else None


def probe(target: str, models: list[str], threads: int = 1, trace: bool = False, timeout: int = 900) -> dict:
    """Runs the probe on ``target`` (a name of :data:`TARGETS`) over ``models`` (``path[:shape]``) and
    returns its JSON (module docstring)."""
    lab = TARGETS[target]
    why = missing(lab)
    if why:
        raise RuntimeError(f"{target}: {why}")
    with tempfile.TemporaryDirectory(prefix="targets-lab-") as tmp:
        directory = Path(tmp)
        out = directory / "probe.json"
        absolute = [str(Path(parse_model(m)[0]).resolve()) + m[len(parse_model(m)[0]):] for m in models]
        run = subprocess.run([*python_command(lab, directory), str(Path(__file__).resolve()), "child", str(out),
                              str(threads), *absolute], env=_clean_env(), capture_output=True, text=True,
                             timeout=timeout)
        if run.returncode != 0 or not out.is_file():
            raise RuntimeError(f"{target}: the probe failed ({run.returncode}): {run.stderr[-3000:]}")
        result = json.loads(out.read_text())
        if trace:
            traced = _trace(lab, [str(Path(parse_model(m)[0]).resolve()) for m in models], threads, directory)
            for m, t in zip(models, traced):
                result["models"][_key(m)]["traced"] = t
    result.update(target=target, qemu_cpu=lab.qemu_cpu, threads=threads, about=lab.about)
    return result


def _trace(lab: LabTarget, paths: list[str], threads: int, directory: Path, functions: tuple[str, ...] = ()
           ) -> list[dict[str, int]]:
    """``tests/malloc_trace``'s allocations of ``paths`` on ``lab`` (the tracer built for its machine and
    preloaded into its Python), each model at the shapes its file gives."""
    sys.path.insert(0, str(TESTS))
    from malloc_trace import delegate_bytes

    compiler = "aarch64-linux-gnu-gcc" if lab.machine == "aarch64" and lab.qemu_cpu else None
    env, clean = os.environ.copy(), _clean_env()
    os.environ.clear()  # the tracer's child inherits this process's environment
    os.environ.update(clean)
    try:
        return delegate_bytes(paths, threads, directory, functions, compiler=compiler,
                              python=lambda library: python_command(lab, directory, library))
    finally:
        os.environ.clear()
        os.environ.update(env)


def _key(spec: str) -> str:
    path, shape = parse_model(spec)
    return Path(path).stem + (":" + "x".join(map(str, shape)) if shape else "")


def _child(out: str, threads: int, models: list[str]) -> None:
    """The probe, run by the target's Python: the plan, the arenas and the heap of every model."""
    import platform

    sys.path.insert(0, str(TESTS))
    from litert_arena import read_allocation
    from litert_plan import litert_plan

    result: dict = {"machine": platform.machine(), "models": {}}
    first = parse_model(models[0])
    read_allocation(first[0], threads, xnnpack=True,  # XNNPACK's one-time set-up of the process, not a model's
                    input_shapes={0: first[1]} if first[1] else None)
    for spec in models:
        path, shape = parse_model(spec)
        shapes = {0: shape} if shape else None
        plan = litert_plan(path, num_threads=threads, input_shapes={0: list(shape)} if shape else None)
        entry: dict = {"plan": {"ops": plan.ops, "partitions": sorted(sorted(p) for p in plan.partitions),
                                "delegated": sorted(plan.delegated), "ambiguous": sorted(plan.ambiguous)}}
        for name, xnnpack in (("builtin", False), ("xnnpack", True)):
            real = read_allocation(path, threads, input_shapes=shapes, xnnpack=xnnpack)
            count = len(real.subgraphs)
            entry[name] = {"arena": [real.arena(i) for i in range(count)],
                           "persistent": [real.persistent(i) for i in range(count)],
                           "heap": real.heap_bytes, "built_heap": real.built_heap_bytes,
                           "outside_arenas": real.heap_bytes - real.arena_bytes - real.persistent_bytes}
            if xnnpack:
                entry[name]["delegate_heap"] = (real.heap_bytes - real.built_heap_bytes - real.arena_bytes
                                                - real.persistent_bytes)
        result["models"][_key(spec)] = entry
    Path(out).write_text(json.dumps(result))


# ---- the tool's static figures, for comparison (host side) --------------------------------------------------------

def tool_target(name: str):
    """The tool's own target for the lab's target ``name`` (:attr:`LabTarget.tool`, from the package's
    ``targets``), or None while the tool has none: its XNNPACK figures are then those of the one x86-64
    build it models."""
    import inspect

    import tflite_flops

    if "target" not in inspect.signature(tflite_flops.analyze).parameters:
        return None  # no --target yet
    try:
        from tflite_flops import targets

        return targets.get(TARGETS[name].tool)
    except Exception:  # noqa: BLE001 - an unknown name (InputSpecError), or another API
        return None


def ours(spec: str, threads: int = 1, target: str | None = None) -> dict:
    """The tool's figures for the same model: placement of the primary subgraph, the arenas with
    XNNPACK off and on, XNNPACK's bytes (for the lab's ``target``, through the tool's own target of that
    CPU class when it has one; ``"target"``: the tool's target name used, or None)."""
    import tflite_flops
    from tflite_flops.analysis.placement import place_subgraph
    from tflite_flops.reader.load import load_model

    path, shape = parse_model(spec)
    kwargs: dict = {"threads": threads}
    if shape:
        kwargs["input_shapes"] = "x".join(map(str, shape))
    if target is not None and tool_target(target) is not None:
        kwargs["target"] = TARGETS[target].tool
    report = tflite_flops.analyze(path, **kwargs)
    placement = place_subgraph(load_model(path), 0)
    reached = [s.subgraph for s in report.memory.subgraphs]
    off, on = report.memory.runtime, report.memory.runtime_xnnpack
    return {"partitions": sorted(sorted(p.ops) for p in placement.partitions),
            "delegated": sorted(i for i, why in placement.reasons.items() if why is None),
            "reached": reached,
            "builtin": {"arena": off.arena_bytes, "persistent": off.persistent_arena_bytes},
            "xnnpack": {"arena": on.arena_bytes, "persistent": on.persistent_arena_bytes,
                        "delegate_bytes": on.delegate_bytes},
            "target": kwargs.get("target")}


def compare(result: dict, models: list[str]) -> list[dict]:
    """Per model: the runtime's figures against the tool's, side by side."""
    rows = []
    for spec in models:
        real = result["models"][_key(spec)]
        mine = ours(spec, result["threads"], result["target"])
        reached = mine["reached"]
        row = {"model": _key(spec), "target": result["target"], "tool_target": mine["target"],
               "placement_equal": (mine["partitions"] == real["plan"]["partitions"]
                                   and mine["delegated"] == real["plan"]["delegated"]),
               "partitions": [len(mine["partitions"]), len(real["plan"]["partitions"])]}
        for name in ("builtin", "xnnpack"):
            row[f"{name}_arena"] = [mine[name]["arena"], sum(real[name]["arena"][i] for i in reached)]
            row[f"{name}_persistent"] = [mine[name]["persistent"], sum(real[name]["persistent"][i] for i in reached)]
        traced = real.get("traced", {}).get("delegate") if parse_model(spec)[1] is None else None  # file's shapes
        row["delegate_bytes"] = [mine["xnnpack"]["delegate_bytes"], traced]
        row["delegate_heap"] = real["xnnpack"]["delegate_heap"]
        rows.append(row)
    return rows


# ---- the constants: XNNPACK's packing and tiles, fitted to one-op models -----------------------------------------

# the buffers operators allocate when reshaped, by the XNNPACK function that allocates them (as the host tests read)
RESHAPING = {"CONV_2D": "reshape_igemm", "DEPTHWISE_CONV_2D": "reshape_dwconv",
             "MAX_POOL_2D": "reshape_max_pooling2d_nhwc", "AVERAGE_POOL_2D": "reshape_average_pooling2d",
             "TRANSPOSE_CONV": "reshape_subconv2d_path", "RESIZE_BILINEAR": "xnn_reshape_resize_bilinear2d_nhwc"}
PACKING, PLANNING = "xnn_get_pointer_to_write_weights", "xnn_plan_memory"
# the values tried for the constants of analysis/xnnpack_memory.py that the kernels' choice changes
_TILES = (1, 2, 4, 8, 16, 32, 64)
_ALIGNMENTS = (16, 64)  # XNN_ALLOCATION_ALIGNMENT: 16 on Arm, 64 on x86-64


def _group(op, tensors) -> str | None:
    """Which packing rule sizes ``op``'s filter (module ``xnnpack_memory``): float, int8, hybrid; GEMM or depthwise."""
    from tflite_flops.analysis import xnnpack_memory as xm

    if len(op.inputs) < 2 or op.inputs[1] < 0:
        return None
    w, x = tensors[op.inputs[1]].dtype, tensors[op.inputs[0]].dtype
    role = "depthwise" if op.op_type == "DEPTHWISE_CONV_2D" else "gemm"
    if op.op_type not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"):
        return None
    if w not in ("INT8", "UINT8", "INT4"):
        return f"float {role}"
    if xm._hybrid(op, tensors):
        return "hybrid fully connected" if op.op_type == "FULLY_CONNECTED" or xm._pointwise(op, tensors) \
            else "hybrid convolution"
    return f"int8 {role}" if x in ("INT8", "UINT8") else None


def fit_constants(target: str, directory: Path, traced: list[dict] | None = None) -> dict:
    """Traces the calibration suite's one-op models (``--quick``, as ``test_runtime_memory`` does on the host)
    on ``target`` and finds, per packing rule, the channel tile (and an int8 convolution's input tile, kr)
    and per GEMM input type the indirection's rows (mr) that make our formulas give the traced bytes."""
    from tflite_flops.analysis import xnnpack_memory as xm
    from tflite_flops.latency import suite as calibration_suite
    from tflite_flops.measure import runtimes
    from tflite_flops.reader.load import load_model

    lab = TARGETS[target]
    fb = runtimes.schema_module("litert")
    paths = calibration_suite.write_single_op_models(fb, directory)
    if traced is None:  # else: the "raw" figures of an earlier run, refitted
        traced = _trace(lab, paths, 1, directory, (*RESHAPING.values(), PACKING, PLANNING))
    assert len(traced) == len(paths)
    raw = traced
    packs: dict[str, list] = {}
    indirections: dict[str, list] = {}
    totals = []
    cases: list[dict] = []  # per model, the traced buffers against ours today
    for path, real in zip(paths, traced):
        if real["delegate"] <= 2_000:  # the delegate's own bytes only: the op was not taken
            continue
        model = load_model(path)
        sg = model.subgraphs[0]
        op, shapes = sg.operators[-1], [t.shape for t in sg.tensors]
        totals.append((Path(path).stem, real["delegate"]))
        group = _group(op, sg.tensors)
        if group and real[PACKING]:
            packs.setdefault(group, []).append((op, sg.tensors, shapes, real[PACKING]))
            cases.append({"model": Path(path).stem, "group": group, "filter": list(shapes[op.inputs[1]]),
                          "packed": real[PACKING], "ours": xm._packed_weights(op, sg.tensors, shapes)})
        if op.op_type == "CONV_2D" and real["reshape_igemm"]:
            x = sg.tensors[op.inputs[0]].dtype
            kind = "hybrid" if xm._hybrid(op, sg.tensors) else "int8" if x in ("INT8", "UINT8") else "float"
            indirections.setdefault(kind, []).append((op, sg.tensors, shapes, real["reshape_igemm"]))
            cases.append({"model": Path(path).stem, "group": f"{kind} indirection",
                          "filter": list(shapes[op.inputs[1]]), "output": list(shapes[op.outputs[0]]),
                          "indirection": real["reshape_igemm"], "ours": xm._reshape_bytes(op, sg.tensors, shapes)})
    saved = {name: getattr(xm, name) for name in ("CHANNEL_TILE", "INT8_INPUT_TILE", "INT8_DEPTHWISE_TILE",
                                                   "HYBRID_GEMM_TILE", "GEMM_ROWS", "XNN_ALIGNMENT")}
    knobs = {"float gemm": ("CHANNEL_TILE",), "float depthwise": ("CHANNEL_TILE",),
             "int8 gemm": ("CHANNEL_TILE", "INT8_INPUT_TILE"), "int8 depthwise": ("INT8_DEPTHWISE_TILE",),
             "hybrid fully connected": ("HYBRID_GEMM_TILE",),
             "hybrid convolution": ("CHANNEL_TILE", "INT8_INPUT_TILE")}
    knobs = {group: (*names, "XNN_ALIGNMENT") for group, names in knobs.items()}  # the buffer's size rounding
    fitted: dict = {"packing": {}, "gemm_rows": {}}
    try:
        for group, found in sorted(packs.items()):
            names = knobs[group]
            scores = []
            for values in _grid(tuple(_ALIGNMENTS if name == "XNN_ALIGNMENT" else _TILES for name in names)):
                for name, value in zip(names, values):
                    setattr(xm, name, value)
                scores.append((sum(xm._packed_weights(op, t, sh) == real for op, t, sh, real in found), values))
                for name in names:
                    setattr(xm, name, saved[name])
            top = max(score for score, _ in scores)
            # of the values that fit as well, the largest tiles (the suite's channel counts, multiples of the
            # kernel's tile, fit its divisors too) and the smallest alignment first
            ties = sorted((dict(zip(names, values)) for score, values in scores if score == top),
                          key=lambda c: tuple(-v if k == "XNN_ALIGNMENT" else v for k, v in c.items()), reverse=True)
            today = sum(xm._packed_weights(op, t, sh) == real for op, t, sh, real in found)
            fitted["packing"][group] = {"models": len(found), "exact_today": today, "exact_fitted": top,
                                        "constants": ties[0], "also_fit": ties[1:]}
        for kind, found in sorted(indirections.items()):
            scores = []
            for rows in range(1, 17):
                xm.GEMM_ROWS = {**saved["GEMM_ROWS"], kind: rows}
                scores.append((sum(xm._reshape_bytes(op, t, sh) == real for op, t, sh, real in found), rows))
            xm.GEMM_ROWS = saved["GEMM_ROWS"]
            top = max(score for score, _ in scores)
            fitted["gemm_rows"][kind] = {"models": len(found), "exact": top,
                                         "rows": [rows for score, rows in scores if score == top],
                                         "today": saved["GEMM_ROWS"][kind]}
    finally:
        for name, value in saved.items():
            setattr(xm, name, value)
    fitted["one_op_models"] = len(totals)
    fitted["traced"] = dict(totals)
    fitted["residual"] = _residuals(fitted, {stem: str(directory / f"{stem}.tflite") for stem, _ in totals})
    # what the residuals show: a GEMM-family operator larger by the same bytes (float fully connected ops: one
    # operator each, nothing else unexplained), and fp16 weights unpacked to float32 and kept where the core has
    # no fp16 conversion (their residual far above the float32 ones')
    fitted["gemm_operator_extra"] = fitted["residual"].get("FULLY_CONNECTED-float32", [0, 0, 0])[1]
    fp16, fp32 = (fitted["residual"].get(f"CONV_2D-{p}", [0, 0, 0])[1] for p in ("fp16", "float32"))
    fitted["fp16_packed_from_file"] = fp16 - fp32 < 4_096
    fitted["residual_with_extra"] = _residuals(fitted, {stem: str(directory / f"{stem}.tflite") for stem, _ in totals})
    fitted["cases"] = cases
    fitted["raw"] = raw
    return fitted


def _residuals(fitted: dict, paths: dict[str, str]) -> dict[str, list[int]]:
    """What the fitted constants leave unexplained: per op family (op type and precision), the least, median
    and largest of traced minus our XNNPACK bytes over its one-op models (structures the packing rules do not
    model, such as a larger GEMM operator, and weights kept unpacked)."""
    import tflite_flops

    by_family: dict[str, list[int]] = {}
    with fitted_constants(fitted):
        for stem, path in paths.items():
            ours = tflite_flops.analyze(path).memory.runtime_xnnpack.delegate_bytes
            by_family.setdefault("-".join(stem.split("-")[:2]), []).append(fitted["traced"][stem] - ours)
    return {family: [min(d), sorted(d)[len(d) // 2], max(d)] for family, d in sorted(by_family.items())}


@contextmanager
def fitted_constants(fitted: dict):
    """The tool's XNNPACK figures with ``fitted`` (:func:`fit_constants`) in place of the x86-64 AVX-512
    constants while the block runs: each packing rule's tiles set for the ops of its group, the buffers'
    alignment and the GEMM rows (the largest that fit). A stand-in, in the lab, for the target data the
    tool takes these from."""
    from tflite_flops.analysis import xnnpack_memory as xm

    names = ("CHANNEL_TILE", "INT8_INPUT_TILE", "INT8_DEPTHWISE_TILE", "HYBRID_GEMM_TILE", "GEMM_ROWS",
             "XNN_ALIGNMENT", "_packed_weights", "_operator_bytes", "_gemm_filter_only")
    saved = {name: getattr(xm, name) for name in names}
    packing = {group: {k: v for k, v in entry["constants"].items() if k != "XNN_ALIGNMENT"}
               for group, entry in fitted["packing"].items()}
    admitted = [{c["XNN_ALIGNMENT"] for c in (entry["constants"], *entry["also_fit"])}
                for entry in fitted["packing"].values()]
    alignment = max(set.intersection(*admitted) or {saved["XNN_ALIGNMENT"]})  # one for every buffer

    def packed(op, tensors, shapes):
        tiles = packing.get(_group(op, tensors) or "", {})
        for name, value in tiles.items():
            setattr(xm, name, value)
        try:
            return saved["_packed_weights"](op, tensors, shapes)
        finally:
            for name in tiles:
                setattr(xm, name, saved[name])

    extra = fitted.get("gemm_operator_extra", 0)
    from tflite_flops.ops.facts import PACKED_OPERAND

    def operator_bytes(facts):
        own = saved["_operator_bytes"](facts)
        return own + extra if facts.weights or facts.workspace == PACKED_OPERAND else own

    def filter_only(readers, t):
        return fitted.get("fp16_packed_from_file", True) and saved["_gemm_filter_only"](readers, t)

    try:
        xm._operator_bytes = operator_bytes
        xm._gemm_filter_only = filter_only
        xm.XNN_ALIGNMENT = alignment
        xm.GEMM_ROWS = {**saved["GEMM_ROWS"], **{kind: max(entry["rows"])
                                                 for kind, entry in fitted["gemm_rows"].items()}}
        xm._packed_weights = packed
        yield
    finally:
        for name, value in saved.items():
            setattr(xm, name, value)


def _grid(candidates: tuple[tuple[int, ...], ...]):
    """Every combination of one value of each of ``candidates``."""
    if len(candidates) == 1:
        yield from ((v,) for v in candidates[0])
    else:
        for v in candidates[0]:
            for rest in _grid(candidates[1:]):
                yield (v, *rest)


def measure(targets: list[str], models: list[str], extra: list[str] = (), refit: list[str] = ()) -> dict:
    """Per target: every model's runtime figures beside the tool's (1 thread, traced), the fitted constants
    (:func:`fit_constants`, or refitted from ``TARGET=FILE`` of ``refit``), and the heap of ``extra`` models."""
    earlier = dict(item.split("=", 1) for item in refit)
    out: dict = {"runtime": _runtime_version(), "targets": {}}
    for target in targets:
        result = probe(target, models, 1, trace=True)
        with tempfile.TemporaryDirectory(prefix="targets-lab-") as tmp:
            raw = json.loads(Path(earlier[target]).read_text())["raw"] if target in earlier else None
            fitted = fit_constants(target, Path(tmp), raw)
        rows = compare(result, models)
        with fitted_constants(fitted):
            for row, spec in zip(rows, models):
                row["delegate_bytes_fitted"] = ours(spec)["xnnpack"]["delegate_bytes"]
        entry = {"about": TARGETS[target].about, "qemu_cpu": TARGETS[target].qemu_cpu,
                 "samples": {row.pop("model"): {k: v for k, v in row.items() if k not in ("target", "tool_target")}
                             for row in rows},
                 "constants": {k: fitted[k] for k in ("packing", "gemm_rows", "gemm_operator_extra",
                                                      "fp16_packed_from_file", "residual", "residual_with_extra",
                                                      "one_op_models")},
                 "one_op_traced": fitted["traced"]}
        if extra:
            heavy = probe(target, list(extra), 1)
            entry["heap"] = {name: {config: {k: got[config][k] for k in ("heap", "built_heap", "outside_arenas")}
                                    | {"arena": sum(got[config]["arena"]), "persistent": sum(got[config]["persistent"])}
                                    | ({"delegate_heap": got[config]["delegate_heap"]} if config == "xnnpack" else {})
                                    for config in ("builtin", "xnnpack")}
                             for name, got in heavy["models"].items()}
        out["targets"][target] = entry
        print(f"{target}: done", file=sys.stderr)
    return out


def _runtime_version() -> str:
    from importlib.metadata import version

    return f"ai-edge-litert {version('ai-edge-litert')}"


def default_models() -> list[str]:
    """Every sample, at the shapes its file gives (as the allocation tracer runs them)."""
    return [str(p) for p in sorted(SAMPLES.glob("*.tflite")) + sorted((SAMPLES / "mcu").glob("*.tflite"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("probe", "compare"):
        p = sub.add_parser(name)
        p.add_argument("--target", required=True, choices=sorted(TARGETS))
        p.add_argument("--threads", type=int, default=1)
        p.add_argument("--trace", action="store_true", help="also trace XNNPACK's own allocations")
        p.add_argument("models", nargs="*", help="path[:shape] (default: every sample)")
    f = sub.add_parser("constants", help="fit XNNPACK's tiles to the one-op models traced on a target")
    f.add_argument("--target", required=True, choices=sorted(TARGETS))
    f.add_argument("--refit", help="the output of an earlier run: fit its traced figures again, without tracing")
    m = sub.add_parser("measure", help="the figures of benchmarks/targets_measured.json: every sample probed, traced "
                       "and compared on every target, the constants fitted, the heap of --extra models")
    m.add_argument("--targets", default="cortex-a53,cortex-a76,armv9,x86-avx2,host")
    m.add_argument("--extra", nargs="*", default=[], help="models of megabytes: their heap only (not traced)")
    m.add_argument("--refit", nargs="*", default=[], help="TARGET=FILE: an earlier `constants` output to refit")
    m.add_argument("-o", "--output")
    m.add_argument("models", nargs="*")
    h = sub.add_parser("host-suite", help="pytest on an emulated x86 target (x86-avx2) as on a host of that CPU: "
                       "the tool detects it, XNNPACK runs its kernels, child processes are emulated too")
    h.add_argument("target", choices=sorted(n for n, t in TARGETS.items() if t.machine == "x86_64" and t.qemu_cpu))
    h.add_argument("pytest_args", nargs=argparse.REMAINDER, help=f"default: {' '.join(HOST_SUITE)}")
    c = sub.add_parser("child")
    c.add_argument("out")
    c.add_argument("threads", type=int)
    c.add_argument("models", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "child":
        _child(args.out, args.threads, args.models)
        return 0
    if args.command == "host-suite":
        try:
            return host_suite(args.target, args.pytest_args)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    models = getattr(args, "models", None) or default_models()
    try:
        if args.command == "constants":
            with tempfile.TemporaryDirectory(prefix="targets-lab-") as tmp:
                raw = json.loads(Path(args.refit).read_text())["raw"] if args.refit else None
                print(json.dumps(fit_constants(args.target, Path(tmp), raw), indent=1))
        elif args.command == "probe":
            print(json.dumps(probe(args.target, models, args.threads, args.trace), indent=1))
        elif args.command == "compare":
            print(json.dumps(compare(probe(args.target, models, args.threads, args.trace), models), indent=1))
        else:
            text = json.dumps(measure(args.targets.split(","), models, args.extra, args.refit), indent=1)
            if args.output:
                Path(args.output).write_text(text + "\n")
            else:
                print(text)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
