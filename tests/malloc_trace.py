"""The reference for XNNPACK's own memory on models of any size: every allocation LiteRT makes while
it allocates the tensors and runs the first invoke, with the call stack that made it
(``malloc_trace.c``, preloaded into a child process), attributed to XNNPACK and its delegate when a
frame of the stack is theirs.

glibc's heap counters (``litert_arena.heap_in_use``) measure the same on models of megabytes, but
on small models TFLite's own bookkeeping and Python's allocations are as large as XNNPACK's
structures: only the call stacks tell them apart. Needs a C compiler (``cc``) and ``addr2line``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

HERE = Path(__file__).resolve().parent

_CHILD = """
import ctypes, json, os, sys
import numpy as np
tracer = ctypes.CDLL(sys.argv[1])
from ai_edge_litert.interpreter import Interpreter, OpResolverType
threads, out, paths = int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])

def run(path, dump=None):
    interpreter = Interpreter(model_path=path, num_threads=threads, experimental_op_resolver_type=OpResolverType.AUTO)
    inputs = [(d["index"], np.zeros(d["shape"], d["dtype"])) for d in interpreter.get_input_details()]
    if dump:
        tracer.mt_on()
    interpreter.allocate_tensors()
    for index, value in inputs:
        interpreter.set_tensor(index, value)
    interpreter.invoke()
    if dump:
        tracer.mt_off()
        if tracer.mt_dump(dump.encode()) != 0:
            raise SystemExit("the allocation table overflowed")

run(paths[0])  # XNNPACK's one-time initialisation of the process, not the model's
for i, path in enumerate(paths):
    run(path, os.path.join(out, f"{i}.txt"))
"""

# A frame of XNNPACK (its functions are xnn_*), of its threadpool, or of LiteRT's XNNPACK delegate.
_DELEGATE = ("xnn_", "pthreadpool", "tflite::xnnpack::", "TfLiteXNNPack")
_ARENA = "ResizableAlignedBuffer"  # TFLite's arenas, measured apart (litert_arena)


def build(directory: Path, compiler: str | None = None) -> Path:
    """Compiles the tracer into ``directory``, with ``compiler`` (default: the system's ``cc``; a cross
    compiler builds it for an emulated target)."""
    compiler = compiler or shutil.which("cc") or shutil.which("gcc")
    if compiler is None or shutil.which(compiler) is None or shutil.which("addr2line") is None:
        raise RuntimeError("the allocation tracer needs a C compiler (cc) and addr2line (binutils)")
    library = directory / "malloc_trace.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(library), str(HERE / "malloc_trace.c"), "-ldl"],
                   check=True, capture_output=True)
    return library


def delegate_bytes(paths: list[str], threads: int, directory: Path, functions: tuple[str, ...] = (), *,
                   compiler: str | None = None, python: Callable[[Path], Sequence[str]] | None = None
                   ) -> list[dict[str, int]]:
    """Per model: the bytes XNNPACK and its delegate hold after ``allocate_tensors`` and one invoke
    (``"delegate"``), and apart, ``"tflite"`` (the rest of the interpreter's, arenas aside) and ``"arena"``;
    and for each name of ``functions``, the bytes allocated under a function of that name.

    ``compiler`` and ``python``: for another target (``benchmarks/targets_lab.py``), the compiler that
    builds the tracer and ``python(library)``, the command that runs that target's Python with the
    tracer preloaded (by default this Python, with ``LD_PRELOAD``)."""
    library = build(directory, compiler)
    command = list(python(library)) if python else [sys.executable]
    env = os.environ if python else {**os.environ, "LD_PRELOAD": str(library)}
    run = subprocess.run([*command, "-c", _CHILD, str(library), str(threads), str(directory), json.dumps(paths)],
                         env=env, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    return [_attribute(directory / f"{i}.txt", functions) for i in range(len(paths))]


def _attribute(dump: Path, functions: tuple[str, ...] = ()) -> dict[str, int]:
    """Sums a dump's live allocations by owner, from the names of their stacks' frames (and under each
    of ``functions``)."""
    records = []
    for line in dump.read_text().splitlines():
        size, *frames = line.split()
        records.append((int(size), [int(f, 16) for f in frames if f != "(nil)" and int(f, 16)]))
    name = _symbolizer(Path(str(dump) + ".maps"), {a for _, frames in records for a in frames})
    out: Counter[str] = Counter()
    for size, frames in records:
        names = [name(a) for a in frames]
        for f in functions:
            if f in names:
                out[f] += size
        if any(_ARENA in n for n in names):
            out["arena"] += size
        elif any(n.startswith(_DELEGATE) or any(d in n for d in _DELEGATE[2:]) for n in names):
            out["delegate"] += size
        else:
            out["tflite"] += size
    return {k: out.get(k, 0) for k in ("delegate", "tflite", "arena", *functions)}


def _symbolizer(maps: Path, addresses: set[int]):
    """``address -> function name`` for ``addresses``, through the process's memory map and addr2line."""
    regions = []
    base: dict[str, int] = {}
    for line in maps.read_text().splitlines():
        parts = line.split()
        if len(parts) < 6:
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        regions.append((lo, hi, parts[5]))
        if int(parts[2], 16) == 0:
            base.setdefault(parts[5], lo)
    where: dict[int, tuple[str, int]] = {}
    wanted: dict[str, set[int]] = {}
    for a in addresses:
        for lo, hi, path in regions:
            if lo <= a < hi:
                where[a] = (path, a - base.get(path, lo))
                wanted.setdefault(path, set()).add(a - base.get(path, lo))
                break
    names: dict[tuple[str, int], str] = {}
    for path, offsets in wanted.items():
        if not path.startswith("/"):
            continue
        ordered = sorted(offsets)
        lines = subprocess.run(["addr2line", "-f", "-C", "-e", path, *map(hex, ordered)], capture_output=True,
                               text=True).stdout.splitlines()
        for i, offset in enumerate(ordered):
            names[(path, offset)] = lines[2 * i] if 2 * i < len(lines) else "??"
    return lambda a: names.get(where.get(a, ("", 0)), "??")
