"""The red-team cases: crafted inputs, file-system oddities, extreme options, signals and misuse of the
library, each with the outcome the tool promises (issue 32).

The promise: bad input gets one clear line on stderr (``error: ...``) and a documented non-zero exit,
never a traceback, an "internal error", a hang, unbounded memory or a half-written file; good input,
however odd, gets its report. Each case here states that outcome for one input, and
``tests/test_redteam.py`` runs every case:

* a **CLI case** (:func:`cli`) builds its files in a fresh directory and returns the command's
  arguments; the command runs in a child process under an address-space limit (``RLIMIT_AS``: the
  child's own size plus :data:`MEMORY_LIMIT`) and a timeout (:data:`TIMEOUT_S`, a hang detector, never a
  measure). It must end with one of the case's exit codes; on a non-zero exit stderr holds exactly
  one line that starts with ``error:`` (and contains the case's ``needle``), and never a traceback or
  an internal error. A ``check`` sees the finished process for what the exit code cannot say
  (the MACs of a CASE's branches, a file left untouched).
* a **library case** (:func:`lib`) calls the package in-process under a work limit
  (:func:`work_counter.count_calls`, function calls, the same on every machine); it must raise the
  case's exception (a :class:`~tflite_flops.errors.TfliteFlopsError` subclass) with ``needle`` in its
  message, or return when ``raises`` is None.
* a **signal case** (:func:`sig`) starts the CLI, waits until it is working, sends a signal and
  expects the exit code and one line.

Adding a case is one row in :data:`CASES` (and, for a new kind of input, one generator function
here). ``quick=True`` puts it in the quick lane's fixed sample (keep that sample under ~10 s in
all); every other case is ``slow`` (CI runs them all). ``xfail="issue N: what"`` marks a case that
fails today for a known bug (strict: it fails the suite once the bug is fixed, so the marker goes).
See docs/contributing.md, "Adding a red-team case".
"""

from __future__ import annotations

import json
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import flatbuffers
import numpy as np

import tflite_builder as tb
from bundle_helpers import TFLITE_MODEL, header_flatbuffer
from tflite_builder import ADD, CUSTOM, FULLY_CONNECTED, INT32, WHILE, build_model, control_flow_model

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
CNN = str(SAMPLES / "cnn_float.tflite")
MEMORY_LIMIT = 768 << 20  # bytes of address space a CLI case may add to the child's own (issue 32: 500 MB)
TIMEOUT_S = 60  # a CLI case that runs longer has hung (the timeout detects, it does not measure)
LIBRARY_CALLS = 5_000_000  # a library case that makes more function calls has run away

RANGE, LESS, STABLEHLO_CASE = 96, 58, 209
CASE_OPTIONS_2 = 23  # BuiltinOptions2.StablehloCaseOptions { branch_subgraph_indices: [int] }


@dataclass(frozen=True)
class Case:
    """One red-team case: what to run, and the outcome it must have."""

    name: str
    kind: str  # one of KINDS: crafted | files | options | signals | library (issue 32), device-files | profiles |
    # packs | reports | writes (issue 44)
    run: Callable[..., Any]  # CLI: (tmp) -> args; library: (tmp) -> a callable; signal: (tmp) -> (args, signal,
    # the child processes to wait for before signalling)
    codes: frozenset[int] = frozenset({1})  # CLI and signal cases: the exit codes allowed
    needle: str | None = None  # in the one error line (CLI) or the exception's message (library)
    raises: type | None = None  # library cases: the exception expected (None: must return)
    check: Callable[[Any, Path], None] | None = None  # CLI cases: more to check on the finished process
    quick: bool = False  # in the quick lane's fixed sample
    xfail: str | None = None  # "issue N: what is broken" while it is
    flaky: bool = False  # the xfail shows only on some runs (a race): not strict
    mode: str = "cli"  # cli | library | signal


def cli(name: str, kind: str, run: Callable[[Path], list], codes: set[int] = frozenset({1}), needle: str | None = None,
        **kw: Any) -> Case:
    """A case that runs ``python -m tflite_flops ARGS`` (``run(tmp)`` builds the files and returns ARGS)."""
    return Case(name, kind, run, frozenset(codes), needle, mode="cli", **kw)


def lib(name: str, run: Callable[[Path], Callable[[], Any]], raises: type | None, needle: str | None = None,
        **kw: Any) -> Case:
    """A case that calls the library in-process under a work limit."""
    return Case(name, "library", run, frozenset(), needle, raises=raises, mode="library", **kw)


def sig(name: str, run: Callable[[Path], tuple[list, int, int]], codes: set[int], needle: str, **kw: Any) -> Case:
    """A case that signals the running CLI (``run(tmp)`` returns (ARGS, signal number, the number of child
    processes it has once it is working: a batch's workers, the process running the interpreter))."""
    return Case(name, "signals", run, frozenset(codes), needle, mode="signal", **kw)


# ---- generators of crafted files ------------------------------------------------------------------------


def write(tmp: Path, name: str, data: bytes) -> str:
    """``data`` written to ``tmp/name``; its path."""
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def if_chain(n: int) -> bytes:
    """IF(then=i+1, else=i+1) chained ``n`` deep: an expanding walk visits 2**n subgraphs."""
    return control_flow_model(
        {i: ("IfOptions", {"then_subgraph_index": i + 1, "else_subgraph_index": i + 1}) for i in range(n - 1)}, n)


def while_nest(n: int) -> bytes:
    """A valid chain of ``n`` nested WHILEs: subgraph i's body is subgraph i+1; one shared condition."""
    cond = n + 1
    return control_flow_model(
        {i: ("WhileOptions", {"cond_subgraph_index": cond, "body_subgraph_index": i + 1}) for i in range(n)}, n + 2)


def _finish(b: flatbuffers.Builder, subgraphs: list[int], codes: list[int], pad: int = 0) -> bytes:
    """The model of the subgraph tables at the offsets ``subgraphs`` (an offset may repeat: one table named
    by many entries), opcodes ``codes``, and ``pad`` bytes of buffer data."""
    import tflite

    sgs = tb._tables(b, subgraphs)
    opcodes = tb._tables(b, [tb._opcode(b, c) for c in codes])
    buffers = [tb._buffer(b, None)]
    if pad:
        data = b.CreateByteVector(bytes(pad))
        tflite.BufferStart(b)
        tflite.BufferAddData(b, data)
        buffers.append(tflite.BufferEnd(b))
    bufs = tb._tables(b, buffers)
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, 3)
    tflite.ModelAddOperatorCodes(b, opcodes)
    tflite.ModelAddSubgraphs(b, sgs)
    tflite.ModelAddBuffers(b, bufs)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


_ADD_SUBGRAPH = {"tensors": [{"shape": [1, 4]}, {"shape": [1, 4]}],
                 "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1]}], "inputs": [0], "outputs": [1]}


def repeated_subgraphs(copies: int) -> bytes:
    """One subgraph table (an ADD) named ``copies`` times by the model's subgraph vector: 4 bytes a copy."""
    b = flatbuffers.Builder(copies * 4 + 1024)
    return _finish(b, [tb._subgraph(b, _ADD_SUBGRAPH)] * copies, [ADD])


def shared_operator(n: int, pad: int = 0) -> bytes:
    """One subgraph whose operator vector names one ADD table ``n`` times: 4 bytes an operator (and ``pad``
    bytes of buffer data, for a file big enough for its operators)."""
    import tflite

    b = flatbuffers.Builder(n * 4 + 1024)
    op = tb._operator(b, {"opcode": 0, "inputs": [0, 0], "outputs": [1]})
    ops = tb._tables(b, [op] * n)
    tensors = tb._tables(b, [tb._tensor(b, {"shape": [1, 4]}), tb._tensor(b, {"shape": [1, 4]})])
    inputs, outputs = tb._ints(b, [0]), tb._ints(b, [1])
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tensors)
    tflite.SubGraphAddOperators(b, ops)
    tflite.SubGraphAddInputs(b, inputs)
    tflite.SubGraphAddOutputs(b, outputs)
    return _finish(b, [tflite.SubGraphEnd(b)], [ADD], pad=pad)


def many_signatures(n: int) -> bytes:
    """A one-FULLY_CONNECTED model (12 MACs) with ``n`` signatures, all on subgraph 0."""
    w = np.ones((3, 4), np.float32).tobytes()
    sg = {"tensors": [{"name": "x", "shape": [1, 4]}, {"name": "w", "shape": [3, 4], "buffer": 1},
                      {"name": "y", "shape": [1, 3]}],
          "operators": [{"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]}], "inputs": [0], "outputs": [2]}
    sigs = [{"key": f"s{i}", "inputs": {"x": 0}, "outputs": {"y": 2}} for i in range(n)]
    return build_model([sg], [FULLY_CONNECTED], buffers=[None, w], signatures=sigs)


def flex_bomb(depth: int) -> bytes:
    """A FlexBuffer of about 5·depth bytes whose vectors each name the previous one twice: 2**depth leaves."""
    int_, vector = 1 << 2, 10 << 2  # packed types: INT and VECTOR, 1-byte children
    out = bytearray([2, 1, 1, int_, int_])
    prev = 1
    for _ in range(depth - 1):
        here = len(out) + 1
        out += bytes([2, here - prev, here + 1 - prev, vector, vector])
        prev = here
    root = len(out)
    return bytes(out + bytes([root - prev, vector, 1]))


def flex_bomb_model(depth: int) -> bytes:
    """A custom op whose options are :func:`flex_bomb` (``depth``)."""
    sg = {"tensors": [{"name": "x", "shape": [1, 8]}, {"name": "y", "shape": [1, 8]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1], "custom_options": flex_bomb(depth)}]}
    return build_model([sg], [{"builtin": CUSTOM, "custom": "Bomb"}])


def while_forever() -> bytes:
    """A WHILE whose condition stays true (x < 1e30, and the body adds 0): an interpreter runs it forever."""
    big, zero = np.float32(1e30).tobytes(), np.float32(0).tobytes()
    main = {"tensors": [{"name": "x", "shape": [1]}, {"name": "y", "shape": [1]}], "inputs": [0], "outputs": [1],
            "operators": [{"opcode": 0, "inputs": [0], "outputs": [1],
                           "options": ("WhileOptions", {"cond_subgraph_index": 1, "body_subgraph_index": 2})}]}
    cond = {"tensors": [{"name": "a", "shape": [1]}, {"name": "c", "shape": [1], "buffer": 1},
                        {"name": "go", "shape": [1], "type": 6}], "inputs": [0], "outputs": [2],
            "operators": [{"opcode": 1, "inputs": [0, 1], "outputs": [2]}]}
    body = {"tensors": [{"name": "a", "shape": [1]}, {"name": "z", "shape": [1], "buffer": 2},
                        {"name": "b", "shape": [1]}], "inputs": [0], "outputs": [2],
            "operators": [{"opcode": 2, "inputs": [0, 1], "outputs": [2]}]}
    return build_model([main, cond, body], [WHILE, LESS, ADD], buffers=[None, big, zero])


def range_model(limit: int, delta: int = 1) -> bytes:
    """RANGE(0, limit, delta) on constant int64 scalars: ``limit/delta`` elements asked for."""
    consts = [np.int64(v).tobytes() for v in (0, limit, delta)]
    sg = {"tensors": [{"name": n, "shape": [], "type": 4, "buffer": i + 1} for i, n in enumerate("sld")]
          + [{"name": "out", "shape": [-1], "shape_signature": [-1], "type": 4}],
          "inputs": [], "outputs": [3], "operators": [{"opcode": 0, "inputs": [0, 1, 2], "outputs": [3]}]}
    return build_model([sg], [RANGE], buffers=[None, *consts])


def huge_dims_model(rank: int = 40) -> bytes:
    """An ADD over tensors of ``rank`` dims of 2**31-1: ~1e373 elements, a count past any float."""
    shape = [2**31 - 1] * rank
    sg = {"tensors": [{"name": "a", "shape": shape}, {"name": "y", "shape": shape}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1]}]}
    return build_model([sg], [ADD])


def _case_options(indices: list[int]) -> Callable[[flatbuffers.Builder], int]:
    def build(b: flatbuffers.Builder) -> int:
        vec = b.CreateNumpyVector(np.asarray(indices, np.int32))
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, vec, 0)
        return b.EndObject()
    return build


def case_model(branches: list[int], n_branch_subgraphs: int = 2, branch_refs: dict[int, list[int]] | None = None,
               units: int = 256) -> bytes:
    """Subgraph 0: STABLEHLO_CASE(index, x) over ``branches``; subgraphs 1..n: each one FULLY_CONNECTED of
    ``units``x``units`` (``units**2`` MACs), or a CASE of its own over ``branch_refs[i]``."""
    def sg(i: int) -> dict:
        t = [{"name": "index", "shape": [], "type": INT32}, {"name": "x", "shape": [1, units]},
             {"name": "w", "shape": [units, units]}, {"name": "y", "shape": [1, units]}]
        refs = branches if i == 0 else (branch_refs or {}).get(i)
        if refs is not None:
            op = {"opcode": 1, "inputs": [0, 1], "outputs": [3], "raw_options_2": (CASE_OPTIONS_2, _case_options(refs))}
            return {"tensors": t, "operators": [op], "inputs": [0, 1], "outputs": [3]}
        return {"tensors": t, "operators": [{"opcode": 0, "inputs": [1, 2, -1], "outputs": [3]}],
                "inputs": [0, 1], "outputs": [3]}
    return build_model([sg(i) for i in range(n_branch_subgraphs + 1)],
                       [FULLY_CONNECTED, {"builtin": STABLEHLO_CASE, "deprecated": 127}])


def repeated_sections_bundle(copies: int) -> bytes:
    """A LiteRT-LM bundle whose section table names one model section (the MLP sample) ``copies`` times."""
    model = (SAMPLES / "mlp_dynamic_batch.tflite").read_bytes()
    fb = header_flatbuffer([(TFLITE_MODEL, 16384, 16384 + len(model), {})] * copies, {})
    head = b"LITERTLM" + struct.pack("<3I", 1, 7, 0) + b"\0" * 4 + struct.pack("<Q", 32 + len(fb)) + fb
    return head + b"\0" * (16384 - len(head)) + model


# ---- checks on a finished CLI run ----------------------------------------------------------------------


def json_total(key: str, at_least: int) -> Callable[[Any, Path], None]:
    """The JSON report on stdout has ``totals[key] >= at_least``."""
    def check(proc: Any, tmp: Path) -> None:
        totals = json.loads(proc.stdout)["totals"]
        assert totals[key] >= at_least, (key, totals[key])
    return check


def unchanged(name: str, data_of: Callable[[], bytes]) -> Callable[[Any, Path], None]:
    """``tmp/name`` still holds what ``data_of()`` gives."""
    def check(proc: Any, tmp: Path) -> None:
        assert (tmp / name).read_bytes() == data_of()
    return check


def nothing_written(name: str) -> Callable[[Any, Path], None]:
    """``tmp/name`` does not exist (no half-written output)."""
    def check(proc: Any, tmp: Path) -> None:
        assert not (tmp / name).exists()
    return check


# ---- file-system oddities -------------------------------------------------------------------------------


def fifo(tmp: Path, name: str) -> str:
    """A FIFO at ``tmp/name`` (no writer: ``open()`` would block forever)."""
    path = tmp / name
    os.mkfifo(path)
    return str(path)


def non_utf8(tmp: Path) -> str:
    """A copy of the sample CNN at a path whose name is not UTF-8 (``\\xff``, surrogate-escaped)."""
    path = os.path.join(os.fsencode(tmp), b"\xff\xfe.tflite")
    with open(path, "wb") as f:
        f.write(Path(CNN).read_bytes())
    return os.fsdecode(path)


def copy_cnn(tmp: Path, name: str) -> str:
    """The sample CNN copied to ``tmp/name``."""
    return write(tmp, name, Path(CNN).read_bytes())


def batch_dir(tmp: Path, n: int, model: str = "lstm.tflite") -> str:
    """``tmp/models`` holding ``n`` copies of a sample model (``batch``'s input)."""
    d = tmp / "models"
    d.mkdir()
    data = (SAMPLES / model).read_bytes()
    for i in range(n):
        (d / f"m{i:04d}.tflite").write_bytes(data)
    return str(d)


def _lib_analyze(**kwargs: Any) -> Callable[[Path], Callable[[], Any]]:
    def make(tmp: Path) -> Callable[[], Any]:
        import tflite_flops

        settings = {k: v for k, v in kwargs.items() if k != "model"}
        return lambda: tflite_flops.analyze(kwargs.get("model", CNN), **settings)
    return make


def _lib_analyze_data(data_of: Callable[[], bytes], **kwargs: Any) -> Callable[[Path], Callable[[], Any]]:
    """``analyze(load_model(data_of()), **kwargs)``: the work of reading and analysing counted together."""
    def make(tmp: Path) -> Callable[[], Any]:
        import tflite_flops
        from tflite_flops.reader.load import load_model

        data = data_of()
        return lambda: tflite_flops.analyze(load_model(data), **kwargs)
    return make


def _lib_from_json(text: str) -> Callable[[Path], Callable[[], Any]]:
    def make(tmp: Path) -> Callable[[], Any]:
        from tflite_flops import Report

        return lambda: Report.from_json(text)
    return make


def _lib_load(data_of: Callable[[], bytes]) -> Callable[[Path], Callable[[], Any]]:
    def make(tmp: Path) -> Callable[[], Any]:
        from tflite_flops.reader.load import load_model

        data = data_of()
        return lambda: load_model(data)
    return make


def _errors() -> Any:
    from tflite_flops import errors

    return errors


E = _errors()
CF = "issue 32: control flow and bounds (walk.py, reader/) are being fixed on another branch"

# ---- the cases ------------------------------------------------------------------------------------------
# One row each. CLI exit codes: 0 report, 1 error (bad model, bad file), 2 usage (bad option or spec).

CASES: list[Case] = [
    # crafted flatbuffers and bundles
    cli("if-chain-120", "crafted", lambda t: ["analyze", write(t, "m.tflite", if_chain(120))], {1}, "nest more than 64 levels",
        quick=True),
    cli("if-chain-4000", "crafted", lambda t: ["analyze", write(t, "m.tflite", if_chain(4000))], {1}, None),
    cli("if-chain-9mb", "crafted", lambda t: ["analyze", write(t, "m.tflite", if_chain(60_000))], {1}, None),
    cli("subgraph-table-240k", "crafted", lambda t: ["analyze", write(t, "m.tflite", repeated_subgraphs(240_000))],
        {0, 1}),
    cli("signatures-300", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", many_signatures(300)), "--all-signatures", "-f", "json"], {0, 1}),
    lib("signatures-20k-work", _lib_analyze_data(lambda: many_signatures(20_000), all_signatures=True),
        E.ModelFormatError, "analysing every one would visit"),
    cli("sections-100k", "crafted",
        lambda t: ["analyze", write(t, "b.litertlm", repeated_sections_bundle(100_000))], {0, 1}),
    lib("sections-100k-work", _lib_analyze_data(lambda: repeated_sections_bundle(100_000), all_sections=True),
        E.ModelFormatError, "sections (limit 256)"),
    cli("sections-3", "crafted",
        lambda t: ["analyze", write(t, "b.litertlm", repeated_sections_bundle(3)), "--all-sections"], {0, 1}),
    cli("flexbuffer-bomb", "crafted", lambda t: ["analyze", write(t, "m.tflite", flex_bomb_model(20))], {0, 1},
        quick=True),  # bounded: a custom op's options are decoded when read, within a budget
    cli("flexbuffer-deep", "crafted", lambda t: ["analyze", write(t, "m.tflite", flex_bomb_model(40))], {0, 1}),
    cli("range-2**40", "crafted", lambda t: ["analyze", write(t, "m.tflite", range_model(2**40))], {0}, quick=True),
    cli("range-delta-0", "crafted", lambda t: ["analyze", write(t, "m.tflite", range_model(10, 0))], {0, 1}),
    cli("huge-dims-render", "crafted", lambda t: ["analyze", write(t, "m.tflite", huge_dims_model())], {0}),
    cli("huge-dims-batch-csv", "crafted",
        lambda t: ["batch", (write(t, "d/a.tflite", huge_dims_model()) and str(t / "d")), "-o", str(t / "r.csv")],
        {0}, check=lambda p, t: len((t / "r.csv").read_text().splitlines()) >= 2),
    cli("case-branches-counted", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", case_model([1, 2])), "-f", "json"], {0},
        check=json_total("macs", 65_536)),
    cli("case-self-cycle", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", case_model([1], 1, {1: [1]}))], {1}, "cycle"),
    cli("case-cycle-to-main", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", case_model([1, 2], 2, {2: [0]}))], {1}, "cycle"),
    cli("while-nest-1500", "crafted", lambda t: ["analyze", write(t, "m.tflite", while_nest(1500))], {0, 1}),
    cli("while-nest-5000", "crafted", lambda t: ["analyze", write(t, "m.tflite", while_nest(5000))], {0, 1}),
    cli("while-nest-50", "crafted", lambda t: ["analyze", write(t, "m.tflite", while_nest(50))], {0}, quick=True),
    cli("truncated-model", "crafted", lambda t: ["analyze", write(t, "m.tflite", Path(CNN).read_bytes()[:100])], {1}),
    cli("empty-file", "crafted", lambda t: ["analyze", write(t, "m.tflite", b"")], {1}),
    # file-system oddities
    cli("fifo-model", "files", lambda t: ["analyze", fifo(t, "m.tflite")], {1}, "a FIFO, not a regular file",
        quick=True),
    cli("fifo-budget", "files", lambda t: ["analyze", CNN, "--budget", fifo(t, "b.toml")], {2}, "a FIFO"),
    cli("fifo-in-batch-dir", "files",
        lambda t: ["batch", (fifo(t, "m.tflite") and copy_cnn(t, "a.tflite") and str(t)), "-o", str(t / "r.csv")],
        {0, 1}, check=lambda p, t: "a.tflite" in (t / "r.csv").read_text() if p.returncode == 0 else None),
    cli("dev-zero-model", "files", lambda t: ["analyze", "/dev/zero"], {1}, "a character device"),
    cli("dev-zero-profile", "files", lambda t: ["analyze", CNN, "--predict", "/dev/zero"], {1}, "a character device"),
    cli("dev-zero-import-profile", "files", lambda t: ["import-profile", CNN, "/dev/zero"], {1}, "a character device"),
    cli("directory-model", "files", lambda t: ["analyze", str(t)], {1}),
    cli("missing-model", "files", lambda t: ["analyze", str(t / "missing.tflite")], {1}),
    cli("non-utf8-name", "files", lambda t: ["analyze", non_utf8(t), "-o", str(t / "r.json")], {0}),
    cli("non-utf8-name-table", "files", lambda t: ["analyze", non_utf8(t)], {0}),
    cli("output-is-input", "files", lambda t: ["analyze", copy_cnn(t, "m.txt"), "-o", str(t / "m.txt")], {2},
        "that is an input of this command", check=unchanged("m.txt", lambda: Path(CNN).read_bytes()), quick=True),
    cli("output-under-a-file", "files",
        lambda t: ["analyze", CNN, "-o", copy_cnn(t, "f.tflite") + "/r.json"], {1, 2}),
    cli("output-dir-missing", "files", lambda t: ["analyze", CNN, "-o", str(t / "no" / "r.json")], {1, 2},
        check=nothing_written("no")),
    cli("output-is-directory", "files", lambda t: ["analyze", CNN, "-o", str(t) + "/"], {1, 2}),
    cli("output-dev-full", "files", lambda t: ["analyze", CNN, "-o", "/dev/full"], {1, 2}),
    # extreme options
    cli("max-macs-1e999", "options", lambda t: ["analyze", CNN, "--max-macs", "1e999"], {2}, quick=True),
    *[cli(f"{opt.strip('-')}-{value}", "options", lambda t, o=opt, v=value: ["analyze", CNN, f"{o}={v}"], {2})
      for opt in ("--max-flops", "--max-params", "--max-partitions", "--max-arena", "--max-latency-ms")
      for value in ("1e999", "nan", "-inf")],
    cli("threads-1e400", "options", lambda t: ["analyze", CNN, "--threads", "1e400"], {2}),
    cli("threads-10**400", "options", lambda t: ["analyze", CNN, "--threads", "1" + "0" * 400], {2}),
    cli("min-time-inf", "options", lambda t: ["analyze", CNN, "--latency", "--min-time", "inf"], {2}),
    cli("min-time-nan", "options", lambda t: ["analyze", CNN, "--latency", "--min-time", "nan"], {2}, quick=True),
    cli("batch-5000-digits", "options", lambda t: ["analyze", CNN, "--batch", "9" * 5000], {2}),
    cli("while-trips-5000-digits", "options", lambda t: ["analyze", CNN, "--while-trips", "9" * 5000], {2}),
    cli("while-trips-negative", "options", lambda t: ["analyze", CNN, "--while-trips", "-5"], {2}),
    cli("runs-0", "options", lambda t: ["analyze", CNN, "--latency", "--runs", "0"], {2}),
    cli("shape-5000-digits", "options",
        lambda t: ["analyze", str(SAMPLES / "fcn_dynamic.tflite"), "--input-shape", "1x" + "9" * 5000 + "x32x3"], {2},
        "as a shape"),
    cli("top-negative", "options", lambda t: ["analyze", CNN, "--top", "-1"], {0, 2}),
    # signals
    sig("sigint-batch", lambda t: (["batch", batch_dir(t, 200), "--jobs", "2", "-o", str(t / "r.csv")], 2, 2), {130},
        "interrupted", check=nothing_written("r.csv")),
    sig("sigterm-batch", lambda t: (["batch", batch_dir(t, 200), "--jobs", "2", "-o", str(t / "r.csv")], 15, 2), {143},
        "terminated", check=nothing_written("r.csv")),
    sig("sigint-latency-while-forever",
        lambda t: (["analyze", write(t, "m.tflite", while_forever()), "--latency"], 2, 1), {130}, "interrupted"),
    cli("latency-while-forever", "signals",
        lambda t: ["analyze", write(t, "m.tflite", while_forever()), "--latency", "--time-limit", "3"], {1},
        "time limit of 3 s"),
    # misuse of the library
    lib("analyze-batch-abc", _lib_analyze(batch="abc"), E.InputSpecError, "batch: expected an integer", quick=True),
    lib("analyze-batch-1.5", _lib_analyze(batch=1.5), E.InputSpecError, "batch: expected an integer"),
    lib("analyze-while-trips-negative", _lib_analyze(while_trips=-5), E.InputSpecError, "while_trips"),
    lib("analyze-threads-huge", _lib_analyze(threads=10**400), E.InputSpecError, "threads"),
    lib("analyze-signature-int", _lib_analyze(signature=3), E.InputSpecError, "signature"),
    lib("analyze-model-none", _lib_analyze(model=None), E.TfliteFlopsError),
    lib("analyze-model-int", _lib_analyze(model=12), E.TfliteFlopsError),
    lib("analyze-model-empty-bytes", _lib_analyze(model=b""), E.TfliteFlopsError),
    lib("analyze-model-garbage-bytes", _lib_analyze(model=b"\0" * 64), E.TfliteFlopsError),
    lib("analyze-fifo", lambda t: (lambda p: (lambda: __import__("tflite_flops").analyze(p)))(fifo(t, "m.tflite")),
        E.ModelLoadError, "a FIFO"),
    *[lib(f"from-json-{i}", _lib_from_json(text), E.ReportFormatError, "not a tflite_flops JSON report",
          quick=i == 0)
      for i, text in enumerate(["garbage", "[1, 2]", '{"x": 1}', "null", "[" * 100_000, '{"ops": 3}', "\udcff"])],
    lib("load-flexbuffer-bomb", _lib_load(lambda: flex_bomb_model(20)), E.ModelFormatError, "share children"),
    lib("load-if-chain", _lib_load(lambda: if_chain(160)), E.ModelFormatError, "nest more than 64 levels"),
]


def _surface_cases() -> list[Case]:
    """The cases of each surface that issue 44 added, one module a surface (``tests/redteam_<surface>.py``, a
    ``CASES`` list of its own built with :func:`cli` and :func:`lib`), in the order of their names."""
    import importlib
    cases: list[Case] = []
    for path in sorted(Path(__file__).resolve().parent.glob("redteam_*.py")):
        cases += importlib.import_module(path.stem).CASES
    return cases


if __name__ != "__main__":  # run as a script, the listing below imports this module as ``redteam``
    CASES += _surface_cases()

# The classes of cases: issue 32's (crafted files, paths, options, signals, library misuse) and issue 44's surfaces
# (files that come from a device, a colleague or an earlier run, and what the tool writes).
KINDS = frozenset({"crafted", "files", "options", "signals", "library",
                   "device-files", "profiles", "packs", "reports", "writes"})


def by_name() -> dict[str, Case]:
    """The cases by name (names are unique)."""
    named = {c.name: c for c in CASES}
    assert len(named) == len(CASES), "two red-team cases share a name"
    return named


if __name__ == "__main__":  # list the cases: python tests/redteam.py
    import redteam  # every surface's cases (their modules import ``redteam``, not ``__main__``)
    CASES = redteam.CASES
    for c in CASES:
        print(f"{c.kind:9} {c.mode:8} {'quick' if c.quick else 'slow':5} {c.name}{'  [xfail]' if c.xfail else ''}")
    print(f"{len(CASES)} cases", file=sys.stderr)
