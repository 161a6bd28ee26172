"""batch DIR_OR_GLOB...: a row per model, failures in their rows, worker processes, atomic output."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys

import cli_process
import pytest

import tflite_flops
from render_helpers import SAMPLES
from tflite_flops.studies.batch import COLUMNS, BatchOptions, analyze_one, expand_sources, run_batch
from tflite_flops.render.batch import rows_csv
from tflite_flops.errors import InputSpecError
from tflite_flops.settings import Settings

MODELS = sorted(p.name for p in SAMPLES.glob("*.tflite"))


@pytest.fixture()
def zoo(tmp_path):
    """The sample models plus a broken file and a non-model file, in a directory with a subfolder."""
    d = tmp_path / "zoo"
    (d / "sub").mkdir(parents=True)
    for name in MODELS:
        shutil.copy(SAMPLES / name, d / ("sub" if name.startswith("lstm") else "") / name)
    (d / "broken.tflite").write_bytes(b"\x00" * 7 + b"not a flatbuffer at all" * 10)
    (d / "README.txt").write_text("not a model")
    return d


def _cli(*args: str) -> subprocess.CompletedProcess:
    return cli_process.run(["batch", *args], timeout=300)


def test_directory_with_a_broken_model(zoo, tmp_path):
    out = tmp_path / "zoo.csv"
    proc = _cli(str(zoo), "-o", str(out), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert list(rows[0]) == COLUMNS
    assert len(rows) == len(MODELS) + 1
    broken = [r for r in rows if r["model"].endswith("broken.tflite")]
    assert len(broken) == 1 and broken[0]["status"] == "error" and "flatbuffer" in broken[0]["error"].lower()
    good = [r for r in rows if r["status"] != "error"]
    assert len(good) == len(MODELS)
    for r in good:  # the same numbers as a direct analysis, as raw integers
        report = tflite_flops.analyze(r["model"])
        assert int(r["macs"]) == report.totals.macs and int(r["flops"]) == report.totals.flops
        assert int(r["params"]) == report.totals.params
        split = sum(int(r[c]) for c in COLUMNS if c.startswith("flops_"))
        assert split == report.totals.flops  # the precision columns add up to the total
        assert int(r["runtime_total_bytes"]) == report.memory.runtime.total_bytes
        assert int(r["xnnpack_total_bytes"]) == report.memory.runtime_xnnpack.total_bytes
    assert "1 failed" in proc.stderr and "\r" not in proc.stderr  # no progress bar when stderr is not a TTY
    assert not list(tmp_path.glob(".tflite_flops-*"))


def test_fail_on_error_and_formats(zoo, tmp_path):
    j, md = tmp_path / "zoo.json", tmp_path / "zoo.md"
    proc = _cli(str(zoo / "*.tflite"), "--fail-on-error", "-o", str(j), "-o", str(md), "-j", "1")
    assert proc.returncode == 1
    models = json.loads(j.read_text())["models"]
    assert len(models) == len(MODELS)  # the glob is not recursive: sub/lstm.tflite is not matched
    assert sum(m["status"] == "error" for m in models) == 1
    assert "| broken.tflite | error |" in md.read_text()


def test_stdout_table_and_order(zoo):
    proc = _cli(str(zoo / "cnn_int8.tflite"), str(zoo / "broken.tflite"), str(zoo / "cnn_float.tflite"))
    assert proc.returncode == 0
    names = [line.split()[0] for line in proc.stdout.splitlines()[2:]]
    assert names == ["cnn_int8.tflite", "broken.tflite", "cnn_float.tflite"]  # input order, not finish order


def test_usage_errors(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in ([str(empty)], [str(tmp_path / "nothing*.tflite")], [str(SAMPLES), "-o", "zoo.xlsx"],
                 [str(SAMPLES), "--jobs", "0"]):
        proc = _cli(*args)
        assert proc.returncode == 2, args
        if "--jobs" in args:  # a bad option value: argparse's message under batch's usage
            assert proc.stderr.startswith("usage: tflite-flops batch") and "error: argument -j/--jobs" in proc.stderr
        else:
            assert proc.stderr.startswith("error:")
        assert "Traceback" not in proc.stderr


def test_expand_sources(zoo):
    paths = expand_sources([str(zoo), str(zoo / "cnn_float.tflite"), str(zoo / "missing.tflite")])
    assert len(paths) == len(MODELS) + 2  # duplicates dropped, a missing explicit file kept for its row
    assert paths[-1].endswith("missing.tflite")
    assert any(p.endswith("lstm.tflite") for p in paths)  # directories are searched recursively
    with pytest.raises(InputSpecError):
        expand_sources([str(zoo / "*.onnx")])


def test_run_batch_in_workers_keeps_order(zoo):
    paths = [str(zoo / n) for n in ("transformer_block.tflite", "broken.tflite", "cnn_int8.tflite")]
    seen = []
    rows = run_batch(paths, BatchOptions(), jobs=2, progress=lambda done, total, path: seen.append((done, total)))
    assert [r["model"] for r in rows] == paths
    assert [r["status"] for r in rows] == ["ok", "error", "ok"]
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]
    assert rows_csv(rows).count("\n") == 4


def test_analyze_one_options(zoo):
    row = analyze_one(str(zoo / "mlp_dynamic_batch.tflite"), BatchOptions(Settings(batch=8)))
    one = analyze_one(str(zoo / "mlp_dynamic_batch.tflite"), BatchOptions())
    assert row["status"] == "ok" and row["macs"] == 8 * one["macs"]
    missing = analyze_one(str(zoo / "missing.tflite"), BatchOptions())
    assert missing["status"] == "error" and missing["error"]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal(zoo, tmp_path):
    import os
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "tflite_flops", "batch", str(zoo), "-o", str(tmp_path / "z.csv"),
                               "-j", "2"], stdout=subprocess.PIPE, stderr=slave, timeout=300)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the terminal has no writer left
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    err = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0
    assert f"] {len(MODELS) + 1}/{len(MODELS) + 1}" in err and "[####" in err
