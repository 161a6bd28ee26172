"""Bad input: every broken file gives one ``error:`` line on stderr, exit 1, no traceback.

Each case runs ``python -m tflite_flops analyze FILE`` in a subprocess. There is no timing
assertion beyond a generous hang guard (CI machines are noisy); the reader's own time on a
broken file is a few milliseconds.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import cli_process
import pytest
from tflite_builder import ADD, build_model, fc_model

from tflite_flops.errors import TfliteFlopsError
from tflite_flops.reader.load import load_model

ROOT = Path(__file__).resolve().parent.parent
HANG_GUARD = 30  # seconds; a real run takes well under one


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return cli_process.run(args, cwd=ROOT, env=env, timeout=HANG_GUARD)


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert proc.stdout == ""


def _sample() -> bytes:
    return (ROOT / "sample_models" / "cnn_float.tflite").read_bytes()


def _corrupt_vector_length(data: bytes) -> bytes:
    out = bytearray(data)
    (root,) = struct.unpack_from("<I", out, 0)
    vt = root - struct.unpack_from("<i", out, root)[0]
    (field,) = struct.unpack_from("<H", out, vt + 8)  # Model.subgraphs (slot 8)
    pos = root + field
    target = pos + struct.unpack_from("<I", out, pos)[0]
    struct.pack_into("<I", out, target, 0x7FFFFFF0)  # the subgraphs vector claims 2**31 - 16 tables
    return bytes(out)


def _corrupt_root_offset(data: bytes) -> bytes:
    return struct.pack("<I", 0xFFFFFF00) + data[4:]


def _bad_tensor_index() -> bytes:
    sg = {"tensors": [{"shape": [2]}, {"shape": [2]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0, 7], "outputs": [1]}]}
    return build_model([sg], [ADD])


def _bad_opcode_index() -> bytes:
    sg = {"tensors": [{"shape": [2]}, {"shape": [2]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 4, "inputs": [0, 0], "outputs": [1]}]}
    return build_model([sg], [ADD])


def _bad_io_index() -> bytes:
    sg = {"tensors": [{"shape": [2]}, {"shape": [2]}], "inputs": [0], "outputs": [-3],
          "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1]}]}
    return build_model([sg], [ADD])


def _cycle() -> bytes:
    sgs = [{"tensors": [{"shape": [1], "type": 2}, {"shape": [1], "type": 2}], "inputs": [0], "outputs": [1],
            "operators": [{"opcode": 0, "inputs": [0], "outputs": [1],
                           "options": ("IfOptions", {"then_subgraph_index": 1, "else_subgraph_index": 1})}]},
           {"tensors": [{"shape": [1], "type": 2}, {"shape": [1], "type": 2}], "inputs": [0], "outputs": [1],
            "operators": [{"opcode": 1, "inputs": [0], "outputs": [1],
                           "options": ("CallOnceOptions", {"init_subgraph_index": 0})}]}]
    return build_model(sgs, [118, 129])


def _shared_byte_vector() -> bytes:
    # 1,000 ops share one StableHLOCompositeOptions table holding a 100 KB byte vector: a 124 KB
    # file whose options would decode into 10**8 Python ints (800 MB), were the vector not
    # counted against the verifier's budget of decoded elements at every visit.
    shared: list[int] = []

    def options(b) -> int:
        import tflite

        if not shared:
            attributes = b.CreateByteVector(bytes(100_000))
            tflite.StableHLOCompositeOptionsStart(b)
            tflite.StableHLOCompositeOptionsAddCompositeAttributes(b, attributes)
            shared.append(tflite.StableHLOCompositeOptionsEnd(b))
        return shared[0]

    op = {"opcode": 0, "inputs": [0], "outputs": [1], "raw_options_2": (21, options)}  # 21: StableHLOCompositeOptions
    sg = {"tensors": [{"shape": [2]}, {"shape": [2]}], "inputs": [0], "outputs": [1], "operators": [op] * 1000}
    return build_model([sg], [206])  # STABLEHLO_COMPOSITE


CASES = {
    "empty": (lambda: b"", "empty"),
    "text": (lambda: b"this is a text file, not a model\n" * 4, "file identifier"),
    "random": (lambda: bytes(__import__("random").Random(7).randbytes(4096)), "file identifier"),
    "tiny": (lambda: b"TFL3", "too small"),
    "wrong-identifier": (lambda: _sample()[:4] + b"XXXX" + _sample()[8:], "file identifier"),
    "truncated-header": (lambda: _sample()[:64], ""),
    "truncated-half": (lambda: _sample()[: len(_sample()) // 2], ""),
    "truncated-one-byte": (lambda: _sample()[:-1], ""),
    "root-offset": (lambda: _corrupt_root_offset(_sample()), "root table offset"),
    "vector-length": (lambda: _corrupt_vector_length(_sample()), "claims"),
    "tensor-index": (_bad_tensor_index, "tensor 7"),
    "opcode-index": (_bad_opcode_index, "opcode index 4"),
    "io-index": (_bad_io_index, "tensor -3"),
    "subgraph-cycle": (_cycle, "cycle"),
    "shared-options-vector": (_shared_byte_vector, "refusing to allocate"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_file(case, tmp_path):
    make, fragment = CASES[case]
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(make())
    proc = run_cli("analyze", str(path))
    assert_one_line_error(proc, fragment)
    if case.startswith("truncated"):
        # truncation at any point either loads (only padding lost) or fails cleanly: this one fails
        assert "truncated" in proc.stderr or "outside" in proc.stderr or "past the end" in proc.stderr


def test_missing_file(tmp_path):
    assert_one_line_error(run_cli("analyze", str(tmp_path / "nope.tflite")), "no such file")


def test_directory(tmp_path):
    assert_one_line_error(run_cli("analyze", str(tmp_path)), "directory")


def test_debug_shows_the_traceback(tmp_path):
    path = tmp_path / "text.tflite"
    path.write_bytes(b"not a model at all")
    proc = run_cli("analyze", str(path), "--debug")
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "ModelFormatError" in proc.stderr


def test_unknown_opcode_is_unsupported_not_an_error(tmp_path):
    path = tmp_path / "unknown_op.tflite"
    path.write_bytes(fc_model({"builtin": 250, "deprecated": 127}))
    proc = run_cli("analyze", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"UNKNOWN_250": 1' in proc.stdout
    assert "not counted: UNKNOWN_250" in proc.stderr


def test_truncation_at_every_point_in_process():
    # Truncating at every byte of the first kilobyte and every 97th byte after: each prefix
    # either parses (only trailing padding was cut) or raises our own error.
    data = _sample()
    cuts = list(range(0, 1024)) + list(range(1024, len(data), 97))
    loaded = 0
    for cut in cuts:
        try:
            load_model(data[:cut])
            loaded += 1
        except TfliteFlopsError:
            pass
    assert loaded < len(cuts) // 100  # almost every cut breaks the file, and none escapes


def test_static_analysis_does_not_import_tensorflow_or_litert():
    code = ("import sys, runpy; sys.argv = ['tflite_flops', 'analyze', 'sample_models/cnn_float.tflite'];\n"
            "try:\n    runpy.run_module('tflite_flops', run_name='__main__')\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "heavy = ('tensorflow', 'ai_edge_litert', 'tflite_runtime', 'keras')\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
            "print('HEAVY', bad, file=sys.stderr)\n"
            "print('BINDINGS', sorted(m for m in sys.modules if m.split('.')[0] == 'tflite'), file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr, proc.stderr
    assert "BINDINGS []" in proc.stderr, proc.stderr  # the schema's layouts come from schema_tables.json
    assert "CONV_2D" in proc.stdout
