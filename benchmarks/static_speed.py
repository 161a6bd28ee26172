"""Static-analysis speed and memory: tflite_flops vs the official C++ analyzer vs a naive bindings walk.

    python benchmarks/static_speed.py             # everything (~2 min; writes ~0.6 GB to a temp dir)
    python benchmarks/static_speed.py --quick     # skips the 500 MB model and the 20,000-op model
    python benchmarks/static_speed.py --tf        # also tf.lite.experimental.Analyzer (imports TensorFlow)
    python benchmarks/static_speed.py --keep DIR  # generate the models into DIR and keep them

Models are generated, never committed: a ~600-op MobileNet-like chain, the same chain at
5,000 / 10,000 / 20,000 ops (cost must grow linearly), a ~500 MB model of four huge
FULLY_CONNECTED layers (memory must not grow with the weights), and a 4 GB model written as a
sparse file (goal: analysed in under 1 s and under 100 MB peak RSS; always run, even with --quick). They are written directly with
the flatbuffers Builder and the ``tflite`` builder functions, so no TensorFlow is needed.

Every (tool, model) pair runs in its own child process, so that peak RSS (``VmHWM``) is the
tool's own. Each child reports the time of the first call (cold: includes lazy set-up) and
the best of ``--repeat`` calls, its RSS after imports (the baseline) and its peak RSS. On the
600-op and the 4 GB models, the tools' children run in turn ``--rounds`` times (default 3) and
the best of all rounds is kept, so that a burst of load from other jobs on a shared machine hits
every tool alike instead of one tool's only run.

Tools:

* ``tflite_flops``: ``tflite_flops.analyze(path)`` (full report: shapes, costs, totals; the file's sha256
  is lazy, computed when a renderer or ``to_dict`` first reads ``report.model.sha256``).
* ``tflite_flops_read``: ``tflite_flops.load_model(path)`` alone (verify + read, no analysis).
* ``cpp_analyzer``: ``ai_edge_litert``'s C++ model analyzer (``_pywrap_analyzer_wrapper.ModelAnalyzer``,
  the code behind ``tf.lite.experimental.Analyzer.analyze``), which returns its text dump.
* ``tf_analyzer`` (``--tf``): ``tf.lite.experimental.Analyzer.analyze(model_path=...)``, stdout suppressed.
* ``naive_bindings``: ``open(path).read()`` + the ``tflite`` generated bindings, visiting every op,
  its options and every tensor's shape, type and buffer size (what a quick script would do).

Also timed: the whole process ``python -m tflite_flops analyze sample_models/cnn_float.tflite``,
and whether it imported TensorFlow or LiteRT.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("tflite_flops", "tflite_flops_read", "cpp_analyzer", "naive_bindings")

# ---------------------------------------------------------------------------------------------
# Model generation (flatbuffers Builder + tflite builder functions)

FLOAT32 = 0
CONV_2D, DEPTHWISE_CONV_2D, ADD, FULLY_CONNECTED = 3, 4, 0, 9


def _vec(b, values, dtype="int32"):
    import numpy as np

    return b.CreateNumpyVector(np.asarray(values, dtype=dtype))


def _offsets(b, offsets):
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


class _Graph:
    """Collects tensors, buffers and ops, then serializes one single-subgraph model."""

    def __init__(self) -> None:
        self.tensors: list[tuple[str, tuple[int, ...], int]] = []  # (name, shape, buffer)
        self.buffers: list[object] = [None]  # numpy arrays (or None) by buffer index
        self.ops: list[tuple[int, list[int], list[int], tuple | None]] = []

    def tensor(self, name: str, shape, data=None) -> int:
        """A float32 tensor; ``data``: an array stored inline, or (offset, size) of bytes after the flatbuffer."""
        buf = 0
        if data is not None:
            self.buffers.append(data)
            buf = len(self.buffers) - 1
        self.tensors.append((name, tuple(shape), buf))
        return len(self.tensors) - 1

    def op(self, opcode_index: int, inputs, outputs, options=None) -> None:
        self.ops.append((opcode_index, list(inputs), list(outputs), options))

    def serialize(self, opcodes: list[int], inputs, outputs, initial: int = 1 << 20) -> memoryview:
        import flatbuffers
        import numpy as np
        import tflite

        b = flatbuffers.Builder(initial)
        tensors = []
        for name, shape, buf in self.tensors:
            n = b.CreateString(name)
            s = _vec(b, shape)
            tflite.TensorStart(b)
            tflite.TensorAddShape(b, s)
            tflite.TensorAddType(b, FLOAT32)
            tflite.TensorAddBuffer(b, buf)
            tflite.TensorAddName(b, n)
            tensors.append(tflite.TensorEnd(b))
        ops = []
        for opcode, ins, outs, options in self.ops:
            i = _vec(b, ins)
            o = _vec(b, outs)
            opt = None
            if options is not None:
                kind, values = options
                getattr(tflite, f"{kind}Start")(b)
                for key, value in values.items():
                    getattr(tflite, f"{kind}Add{key}")(b, value)
                opt = (getattr(tflite.BuiltinOptions, kind), getattr(tflite, f"{kind}End")(b))
            tflite.OperatorStart(b)
            tflite.OperatorAddOpcodeIndex(b, opcode)
            tflite.OperatorAddInputs(b, i)
            tflite.OperatorAddOutputs(b, o)
            if opt is not None:
                tflite.OperatorAddBuiltinOptionsType(b, opt[0])
                tflite.OperatorAddBuiltinOptions(b, opt[1])
            ops.append(tflite.OperatorEnd(b))
        t_vec, o_vec = _offsets(b, tensors), _offsets(b, ops)
        sg_in, sg_out, sg_name = _vec(b, inputs), _vec(b, outputs), b.CreateString("main")
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, t_vec)
        tflite.SubGraphAddOperators(b, o_vec)
        tflite.SubGraphAddInputs(b, sg_in)
        tflite.SubGraphAddOutputs(b, sg_out)
        tflite.SubGraphAddName(b, sg_name)
        sg = tflite.SubGraphEnd(b)
        bufs = []
        for data in self.buffers:
            if isinstance(data, tuple):  # (offset, size) of data stored after the flatbuffer
                tflite.BufferStart(b)
                tflite.BufferAddOffset(b, data[0])
                tflite.BufferAddSize(b, data[1])
                bufs.append(tflite.BufferEnd(b))
                continue
            vec = None
            if data is not None:
                vec = b.CreateNumpyVector(np.ascontiguousarray(data).view(np.uint8).reshape(-1))
            tflite.BufferStart(b)
            if vec is not None:
                tflite.BufferAddData(b, vec)
            bufs.append(tflite.BufferEnd(b))
        codes = []
        for code in opcodes:
            tflite.OperatorCodeStart(b)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            tflite.OperatorCodeAddBuiltinCode(b, code)
            tflite.OperatorCodeAddVersion(b, 1)
            codes.append(tflite.OperatorCodeEnd(b))
        sgs, cvec, bvec = _offsets(b, [sg]), _offsets(b, codes), _offsets(b, bufs)
        desc = b.CreateString("generated by benchmarks/static_speed.py")
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        tflite.ModelAddOperatorCodes(b, cvec)
        tflite.ModelAddSubgraphs(b, sgs)
        tflite.ModelAddDescription(b, desc)
        tflite.ModelAddBuffers(b, bvec)
        b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
        return memoryview(b.Bytes)[b.Head():]


def make_chain(n_ops: int, hw: int = 14, ch: int = 32) -> memoryview:
    """A MobileNet-like chain: blocks of CONV 1×1 (RELU6) -> DEPTHWISE 3×3 -> CONV 1×1 -> ADD residual."""
    import numpy as np

    g = _Graph()
    rng = np.random.default_rng(0)
    act = (1, hw, hw, ch)
    x = g.tensor("input", act)
    first = x
    conv_opts = ("Conv2DOptions", {"Padding": 0, "StrideW": 1, "StrideH": 1, "FusedActivationFunction": 3,
                                   "DilationWFactor": 1, "DilationHFactor": 1})
    dw_opts = ("DepthwiseConv2DOptions", {"Padding": 0, "StrideW": 1, "StrideH": 1, "DepthMultiplier": 1,
                                          "FusedActivationFunction": 3, "DilationWFactor": 1, "DilationHFactor": 1})
    add_opts = ("AddOptions", {"FusedActivationFunction": 0})
    for blk in range(n_ops // 4):
        w1 = g.tensor(f"b{blk}/pw1/w", (ch, 1, 1, ch), rng.standard_normal((ch, 1, 1, ch), np.float32))
        b1 = g.tensor(f"b{blk}/pw1/b", (ch,), np.zeros(ch, np.float32))
        y1 = g.tensor(f"b{blk}/pw1", act)
        g.op(0, [x, w1, b1], [y1], conv_opts)
        wd = g.tensor(f"b{blk}/dw/w", (1, 3, 3, ch), rng.standard_normal((1, 3, 3, ch), np.float32))
        bd = g.tensor(f"b{blk}/dw/b", (ch,), np.zeros(ch, np.float32))
        y2 = g.tensor(f"b{blk}/dw", act)
        g.op(1, [y1, wd, bd], [y2], dw_opts)
        w2 = g.tensor(f"b{blk}/pw2/w", (ch, 1, 1, ch), rng.standard_normal((ch, 1, 1, ch), np.float32))
        b2 = g.tensor(f"b{blk}/pw2/b", (ch,), np.zeros(ch, np.float32))
        y3 = g.tensor(f"b{blk}/pw2", act)
        g.op(0, [y2, w2, b2], [y3], conv_opts)
        y4 = g.tensor(f"b{blk}/add", act)
        g.op(2, [x, y3], [y4], add_opts)
        x = y4
    return g.serialize([CONV_2D, DEPTHWISE_CONV_2D, ADD], [first], [x], initial=64 << 20)


def make_big_fc(total_bytes: int = 512 << 20, layers: int = 4) -> memoryview:
    """``layers`` FULLY_CONNECTED layers whose float32 weights add up to ``total_bytes``."""
    import numpy as np

    per_layer = total_bytes // layers // 4  # float32 elements per weight
    units = 1 << ((per_layer.bit_length() - 1) // 2)  # square-ish power of two
    inner = per_layer // units
    g = _Graph()
    x = g.tensor("input", (1, inner))
    first = x
    weight = np.full((units, inner), 0.01, np.float32)  # one array, stored once per layer
    for i in range(layers):
        out_dim, in_dim = (units, inner) if i % 2 == 0 else (inner, units)
        w = g.tensor(f"fc{i}/w", (out_dim, in_dim), weight.reshape(out_dim, in_dim))
        b = g.tensor(f"fc{i}/b", (out_dim,), np.zeros(out_dim, np.float32))
        y = g.tensor(f"fc{i}", (1, out_dim))
        g.op(0, [x, w, b], [y], ("FullyConnectedOptions", {"FusedActivationFunction": 1}))
        x = y
    return g.serialize([FULLY_CONNECTED], [first], [x], initial=total_bytes + (64 << 20))


def write_sparse_fc(path: Path, total_bytes: int = 4 << 30, layers: int = 8) -> None:
    """A model of ``layers`` FULLY_CONNECTED layers whose float32 weights (``total_bytes`` in all) are
    stored after the flatbuffer, as converters write models over 2 GB (buffer offset/size), in a
    **sparse file**: the weight bytes are holes, so a 4 GB model takes no disk space and no time to write.
    """
    import numpy as np

    per_layer = total_bytes // layers // 4
    units = 1 << ((per_layer.bit_length() - 1) // 2)
    inner = per_layer // units
    layer_bytes = units * inner * 4

    def graph(base: int) -> _Graph:
        g = _Graph()
        x = g.tensor("input", (1, inner))
        first = x
        for i in range(layers):
            out_dim, in_dim = (units, inner) if i % 2 == 0 else (inner, units)
            w = g.tensor(f"fc{i}/w", (out_dim, in_dim), (base + i * layer_bytes, layer_bytes))
            b = g.tensor(f"fc{i}/b", (out_dim,), np.zeros(out_dim, np.float32))
            y = g.tensor(f"fc{i}", (1, out_dim))
            g.op(0, [x, w, b], [y], ("FullyConnectedOptions", {"FusedActivationFunction": 1}))
            x = y
        g.first, g.last = first, x
        return g

    probe = graph(1 << 40)  # placeholder offsets: the serialized size does not depend on their values
    size = len(probe.serialize([FULLY_CONNECTED], [probe.first], [probe.last]))
    base = -(-size // 64) * 64
    g = graph(base)
    data = g.serialize([FULLY_CONNECTED], [g.first], [g.last])
    assert len(data) == size
    with open(path, "wb") as f:
        f.write(data)
        f.truncate(base + layers * layer_bytes)  # the weights: holes, read back as zeros


SPARSE = "sparse_4GB"
SPARSE_TOOLS = ("tflite_flops", "tflite_flops_read", "cpp_analyzer", "tf_analyzer")  # naive_bindings would read 4 GB

# ---------------------------------------------------------------------------------------------
# Child process: one tool on one model


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _child(tool: str, path: str, repeat: int) -> None:
    t0 = time.perf_counter()
    if tool == "tflite_flops":
        import tflite_flops

        def run():
            return tflite_flops.analyze(path)
    elif tool == "tflite_flops_read":
        from tflite_flops.reader.load import load_model

        def run():
            return load_model(path)
    elif tool == "cpp_analyzer":
        from ai_edge_litert import _pywrap_analyzer_wrapper as wrapper

        def run():
            return wrapper.ModelAnalyzer(path, True, False)
    elif tool == "tf_analyzer":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        def run():
            with contextlib.redirect_stdout(io.StringIO()):
                return tf.lite.experimental.Analyzer.analyze(model_path=path)
    elif tool == "naive_bindings":
        import tflite

        def run():
            with open(path, "rb") as f:
                data = f.read()
            model = tflite.Model.GetRootAs(data, 0)
            seen = 0
            for s in range(model.SubgraphsLength()):
                sg = model.Subgraphs(s)
                for i in range(sg.OperatorsLength()):
                    op = sg.Operators(i)
                    code = model.OperatorCodes(op.OpcodeIndex())
                    max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
                    op.BuiltinOptions()
                    for t in list(op.InputsAsNumpy()) + list(op.OutputsAsNumpy()):
                        if t < 0:
                            continue
                        tensor = sg.Tensors(int(t))
                        tensor.ShapeAsNumpy()
                        tensor.Type()
                        seen += model.Buffers(tensor.Buffer()).DataLength()
            return seen
    else:
        raise SystemExit(f"unknown tool {tool}")
    imported = time.perf_counter() - t0
    baseline = _rss_kb("VmRSS")
    times = []
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    print(json.dumps({"tool": tool, "import_s": imported, "first_s": times[0], "best_s": min(times),
                      "median_s": statistics.median(times), "baseline_kb": baseline, "hwm_kb": _rss_kb("VmHWM"),
                      "heavy": sorted(m for m in ("tensorflow", "ai_edge_litert") if m in sys.modules)}))


def measure(tool: str, path: Path, repeat: int) -> dict:
    """Run one tool on one model in a fresh child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TF_CPP_MIN_LOG_LEVEL": "3"}
    proc = subprocess.run([sys.executable, __file__, "--child", tool, str(path), str(repeat)],
                          capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        return {"tool": tool, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli_process_time(runs: int = 5) -> tuple[float, list[str]]:
    """Median wall time of ``python -m tflite_flops analyze sample_models/cnn_float.tflite``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = ("import runpy, sys; sys.argv = ['tflite_flops', 'analyze', 'sample_models/cnn_float.tflite'];\n"
            "import atexit; atexit.register(lambda: sys.stderr.write('HEAVY ' + ','.join(sorted(m for m in "
            "('tensorflow', 'ai_edge_litert', 'tflite_runtime') if m in sys.modules)) + '\\n'))\n"
            "runpy.run_module('tflite_flops', run_name='__main__')")
    times, heavy = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
        times.append(time.perf_counter() - start)
        heavy = [line for line in proc.stderr.splitlines() if line.startswith("HEAVY")]
    return statistics.median(times), heavy


def _best_of(previous: dict | None, result: dict) -> dict:
    """One tool's figures over rounds: the first round's cold call and RSS, the best time of all rounds."""
    if previous is None or "error" in previous:
        return result
    if "error" in result:
        return previous
    return {**previous, "best_s": min(previous["best_s"], result["best_s"])}


# ---------------------------------------------------------------------------------------------


def _fmt_ms(s: float) -> str:
    return f"{s * 1000:9.1f}"


def main(argv: list[str] | None = None) -> int:
    """Generate the models, run every tool on each, print the comparison."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="skip the 500 MB and 20,000-op models")
    p.add_argument("--tf", action="store_true", help="also time tf.lite.experimental.Analyzer (imports TensorFlow)")
    p.add_argument("--keep", metavar="DIR", help="generate models into DIR and keep them (reused when present)")
    p.add_argument("--repeat", type=int, default=5, help="calls per tool per model (the best is reported)")
    p.add_argument("--rounds", type=int, default=3,
                   help="runs of every tool in turn on the 600-op and 4 GB models (the best of all is reported)")
    p.add_argument("--child", nargs=3, metavar=("TOOL", "MODEL", "REPEAT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return 0

    tools = TOOLS + (("tf_analyzer",) if args.tf else ())
    rounds = max(args.rounds, 1)
    specs = [("chain_600", lambda: make_chain(600), args.repeat, rounds)]
    if not args.quick:
        specs += [("chain_5000", lambda: make_chain(5000), 3, 1), ("chain_10000", lambda: make_chain(10000), 3, 1),
                  ("chain_20000", lambda: make_chain(20000), 3, 1), ("fc_500MB", make_big_fc, 3, 1)]
    specs.append((SPARSE, None, 3, rounds))
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tflite_flops_bench_"))
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, dict]] = {}
    try:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s); models in {workdir}")
        cli_s, heavy = cli_process_time()
        print(f"whole process `python -m tflite_flops analyze sample_models/cnn_float.tflite`: "
              f"{cli_s * 1000:.0f} ms median of 5; heavy modules imported: {heavy[-1][6:] or 'none' if heavy else '?'}")
        print()
        header = (f"{'model':<12} {'ops':>6} {'MB':>7}  {'tool':<17} {'first ms':>9} {'best ms':>9} {'x C++':>6}"
                  f" {'base MB':>8} {'peak MB':>8} {'peak-base':>9}")
        print(header)
        print("-" * len(header))
        for name, make, repeat, n_rounds in specs:
            path = workdir / f"{name}.tflite"
            if not path.exists() and make is None:
                write_sparse_fc(path)
            elif not path.exists():
                data = make()
                with open(path, "wb") as f:
                    f.write(data)
                del data
            n_ops = int(name.split("_")[1]) if name.startswith("chain") else 8 if name == SPARSE else 4
            size_mb = path.stat().st_size / 1e6
            row = results[name] = {}
            model_tools = [t for t in tools if name != SPARSE or t in SPARSE_TOOLS]
            for _ in range(n_rounds):  # the tools in turn, so that machine noise hits them alike
                for tool in model_tools:
                    row[tool] = _best_of(row.get(tool), measure(tool, path, repeat))
            ref = row.get("cpp_analyzer", {}).get("best_s")
            for tool in model_tools:
                r = row[tool]
                if "error" in r:
                    print(f"{name:<12} {n_ops:>6} {size_mb:>7.1f}  {tool:<17} error: {r['error']}")
                    continue
                ratio = f"{r['best_s'] / ref:6.1f}" if ref else "     -"
                print(f"{name:<12} {n_ops:>6} {size_mb:>7.1f}  {tool:<17} {_fmt_ms(r['first_s'])}"
                      f" {_fmt_ms(r['best_s'])} {ratio} {r['baseline_kb'] / 1024:8.1f} {r['hwm_kb'] / 1024:8.1f}"
                      f" {(r['hwm_kb'] - r['baseline_kb']) / 1024:9.1f}")
        chain = results.get("chain_600", {})
        ours, ref = chain.get("tflite_flops", {}).get("best_s"), chain.get("cpp_analyzer", {}).get("best_s")
        if ours and ref:
            print()
            print(f"chain_600: tflite_flops.analyze {ours / ref:.2f}x the C++ analyzer, best of {rounds} round(s) "
                  f"(goal <= 2x: {'met' if ours <= 2 * ref else 'NOT met'})")
        sparse = results.get(SPARSE, {}).get("tflite_flops", {})
        if "best_s" in sparse:
            print()
            print(f"{SPARSE} (sparse file, {8} FULLY_CONNECTED, weights stored after the flatbuffer): "
                  f"tflite_flops.analyze first {sparse['first_s'] * 1000:.0f} ms, best {sparse['best_s'] * 1000:.0f} ms "
                  f"(goal < 1000 ms: {'met' if sparse['first_s'] < 1 else 'NOT met'}); peak RSS "
                  f"{sparse['hwm_kb'] / 1024:.1f} MB (goal < 100 MB: {'met' if sparse['hwm_kb'] < 100 * 1024 else 'NOT met'})")
        chains = [n for n in ("chain_5000", "chain_10000", "chain_20000") if n in results]
        if chains:
            print()
            print("linearity (best time per op):")
            for tool in tools:
                per_op = []
                for n in chains:
                    r = results[n][tool]
                    if "best_s" in r:
                        ops = int(n.split("_")[1])
                        per_op.append(f"{ops:>6} ops {r['best_s'] / ops * 1e6:7.1f} µs/op")
                print(f"  {tool:<17} " + " | ".join(per_op))
    finally:
        if not args.keep:
            for f in workdir.glob("*.tflite"):
                f.unlink()
            workdir.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
