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
from tflite_flops.report.headline import runtime_total
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


@pytest.mark.slow
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
        # the memory headline, as the model's own JSON names it (memory.runtime_total_bytes), and XNNPACK off
        assert int(r["runtime_total_bytes"]) == runtime_total(report.memory).total_bytes
        assert int(r["builtin_total_bytes"]) == report.memory.runtime.total_bytes
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
@pytest.mark.slow
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


# ---- budget limits and per-model shapes (issue 31) ------------------------------------------------


@pytest.mark.slow
def test_budget_limits_mark_the_rows_and_exit_3(zoo, tmp_path):
    # cnn_int8: 397,392 MACs, within 1M; kws_ds_cnn: 2,657,344 MACs, over; broken.tflite: not checked
    kws = SAMPLES / "mcu" / "kws_ds_cnn.tflite"
    out = tmp_path / "zoo.csv"
    proc = _cli(str(zoo / "cnn_int8.tflite"), str(kws), str(zoo / "broken.tflite"), "--max-macs", "1M",
                "-j", "1", "-o", str(out))
    assert proc.returncode == 3, proc.stderr  # after the rows are written
    rows = {r["model"].rsplit("/", 1)[-1]: r for r in csv.DictReader(io.StringIO(out.read_text()))}
    assert list(next(iter(rows.values())))[-2:] == ["budget", "budget_violations"]
    assert rows["cnn_int8.tflite"]["budget"] == "ok" and rows["cnn_int8.tflite"]["budget_violations"] == ""
    assert rows["kws_ds_cnn.tflite"]["budget"] == "exceeded"
    assert rows["kws_ds_cnn.tflite"]["budget_violations"] == "macs 2.657 M > 1 M"
    assert rows["broken.tflite"]["budget"] == "not checked"  # a model that cannot be read is not within budget
    assert f"budget exceeded: {kws}: macs 2.657 M > 1 M" in proc.stderr
    assert "2 over budget or not checked" in proc.stderr
    # within budget: exit 0; the table shows the budget column
    ok = _cli(str(zoo / "cnn_int8.tflite"), "--max-macs", "1M", "--max-arena", "1MiB", "-j", "1")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[0].split()[-1] == "budget" and ok.stdout.splitlines()[2].split()[-1] == "ok"
    # without limits the rows keep their columns (the goldens)
    assert "budget" not in _cli(str(zoo / "cnn_int8.tflite"), "-f", "csv").stdout.splitlines()[0]


@pytest.mark.slow  # analyze runs once per model beside the batch
def test_budget_file_and_every_limit_of_analyze(zoo, tmp_path):
    budget = tmp_path / "budget.toml"
    budget.write_text('[budget]\nmax_arena = "10KiB"\nmax_partitions = 1\n')
    proc = _cli(str(zoo / "cnn_int8.tflite"), str(zoo / "cnn_float.tflite"), "--budget", str(budget), "-j", "1",
                "-f", "json")
    assert proc.returncode == 3, proc.stderr
    models = {m["model"].rsplit("/", 1)[-1]: m for m in json.loads(proc.stdout)["models"]}
    # the same verdicts as analyze's gate on each model
    for name, row in models.items():
        a = cli_process.run(["analyze", str(zoo / name), "--budget", str(budget)])
        lines = [line.removeprefix("budget exceeded: ") for line in a.stderr.splitlines()
                 if line.startswith("budget exceeded: ")]
        assert (a.returncode == 3) == (row["budget"] == "exceeded")
        assert (row["budget_violations"] or "").split("; ") == (lines or [""])
    assert "partitions 2 > 1" in models["cnn_int8.tflite"]["budget_violations"]
    bad = _cli(str(zoo / "cnn_int8.tflite"), "--max-predicted-ms", "3")  # no --predict: refused before any work
    assert bad.returncode == 2 and "--predict" in bad.stderr


@pytest.mark.slow
def test_shapes_file_gives_each_model_its_shapes(zoo, tmp_path):
    shapes = tmp_path / "shapes.json"
    # fcn_dynamic: MACs = 176·H·W = 176·64·64 = 720,896 at 1x64x64x3 (tests/test_shapes.py)
    shapes.write_text(json.dumps({"fcn_dynamic.tflite": "image=1x64x64x3", "sub/lstm.tflite": ["1x8x16"]}))
    fcn = SAMPLES / "fcn_dynamic.tflite"
    proc = _cli(str(fcn), str(zoo / "cnn_float.tflite"), "--shapes-file", str(shapes), "-j", "1", "-f", "json")
    assert proc.returncode == 2 and "'sub/lstm.tflite' names none of the models" in proc.stderr
    shapes.write_text(json.dumps({"fcn_dynamic.tflite": "image=1x64x64x3"}))
    proc = _cli(str(fcn), str(zoo / "cnn_float.tflite"), "--shapes-file", str(shapes), "-j", "2", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    fcn_row, cnn_row = json.loads(proc.stdout)["models"]
    assert fcn_row["status"] == "ok" and fcn_row["macs"] == 720_896
    assert cnn_row["macs"] == tflite_flops.analyze(zoo / "cnn_float.tflite").totals.macs  # --input-shape's, none
    # the model's own shapes replace --input-shape (which the other models keep)
    proc = _cli(str(fcn), "--shapes-file", str(shapes), "--input-shape", "image=1x32x32x3", "-f", "json")
    assert json.loads(proc.stdout)["models"][0]["macs"] == 720_896


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "expected a JSON object"),
    ("{not json", "not a JSON object"),
    ('{"fcn_dynamic.tflite": 3}', "expected an --input-shape spec"),
    ('{"fcn_dynamic.tflite": "image=1xAx3"}', "cannot read"),
    ('{"nope.tflite": "1x2"}', "names none of the models"),
])
def test_a_bad_shapes_file_is_one_line_before_any_work(tmp_path, content, message):
    shapes = tmp_path / "shapes.json"
    shapes.write_text(content)
    proc = _cli(str(SAMPLES / "fcn_dynamic.tflite"), "--shapes-file", str(shapes))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: --shapes-file") and message in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_batch_options_limits_and_shapes_in_the_library():
    fcn = str(SAMPLES / "fcn_dynamic.tflite")
    opts = BatchOptions(limits={"max_macs": 500_000}, shapes={fcn: ("image=1x64x64x3",)})
    row = analyze_one(fcn, opts)
    assert row["macs"] == 720_896 and row["budget"] == "exceeded" and row["budget_violations"] == "macs 720.9 K > 500 K"
    assert "budget" not in analyze_one(fcn, BatchOptions())


def test_shards_cover_a_zoo_once_and_a_jsonl_log_resumes_it(tmp_path, capsys):
    """A zoo split across CI jobs (``--shard I/N``) and resumed after a runner died (``--jsonl``): issue 45."""
    import shutil

    from tflite_flops.cli import main
    from tflite_flops.errors import InputSpecError
    from tflite_flops.studies.batch import expand_sources, read_done, shard

    zoo = tmp_path / "zoo"
    zoo.mkdir()
    for name in ("cnn_float", "cnn_int8", "lstm", "mlp_dynamic_batch", "fcn_dynamic"):
        shutil.copy(SAMPLES / f"{name}.tflite", zoo)
    paths = expand_sources([str(zoo)])
    parts = [shard(paths, f"{i}/3") for i in (1, 2, 3)]
    assert sorted(p for part in parts for p in part) == sorted(paths) and [len(p) for p in parts] == [2, 2, 1]
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "¹/2"):
        with pytest.raises(InputSpecError, match="--shard"):
            shard(paths, bad)
    log = tmp_path / "zoo.jsonl"
    assert main(["batch", str(zoo), "-j", "1", "--shard", "1/3", "--jsonl", str(log), "-f", "json"]) == 0
    assert len(log.read_text().splitlines()) == 2 and set(read_done(str(log))) == set(parts[0])
    # the runner died in the middle of a line, and an earlier model had failed: both run again, nothing else
    with log.open("a") as f:
        f.write(json.dumps({"model": parts[1][0], "status": "error", "error": "killed"}) + "\n")
        f.write('{"model": "' + parts[1][1] + '", "stat')
    capsys.readouterr()
    assert main(["batch", str(zoo), "-j", "1", "--jsonl", str(log), "-f", "json"]) == 0
    out = capsys.readouterr()
    assert "2 of 5 model(s) already done, not analysed again" in out.err
    rows = json.loads(out.out)["models"]
    assert [r["model"] for r in rows] == paths and all(r["status"] != "error" for r in rows)
    assert set(read_done(str(log))) == set(paths)
    # a line that is not a row, in the middle of the log, is one error line
    row = {"model": "x", "status": "ok", "macs": 1, "flops": 2, "params": 3, "param_bytes": 4, "size_bytes": 5}
    log.write_text(json.dumps(row) + '\nnot json\n{"model": "y", "status": "ok"}\n')
    with pytest.raises(InputSpecError, match="line 2 is not a batch row"):
        read_done(str(log))
    # a row whose figures are not what the outputs format is refused, never rendered (the log is untrusted input)
    for bad in ({"macs": "many"}, {"flops": -1}, {"params": True}, {"note": [1]}, {"macs": 1e400}):
        log.write_text(json.dumps({**row, **bad}) + "\n")
        with pytest.raises(InputSpecError, match="line 1"):  # Infinity: not a row at all
            read_done(str(log))
    log.write_text(json.dumps(row) + "\n")
    assert read_done(str(log)) == {"x": row}


@pytest.mark.slow  # 200 models in ten shards, real processes: about a minute on 2 cores
def test_a_zoo_of_200_models_in_ten_shards_one_killed_and_resumed_gives_one_runs_table(tmp_path):
    """Issue 45's zoo check: ten ``--shard I/10 --jsonl`` runs, one killed mid-run and run again, their logs
    joined, read back by ``batch --jsonl``: the same table as one run over the whole zoo."""
    import os
    import signal

    zoo = tmp_path / "zoo"
    zoo.mkdir()
    samples = sorted(SAMPLES.glob("*.tflite"))
    for i in range(200):
        src = samples[i % len(samples)]
        shutil.copy(src, zoo / f"m{i:03d}_{src.name}")
    cmd = [sys.executable, "-m", "tflite_flops", "batch", str(zoo), "-j", "1"]
    logs = [tmp_path / f"shard{i}.jsonl" for i in range(1, 11)]
    for i, log in enumerate(logs, 1):
        if i == 4:  # this runner dies: killed once its log holds a few rows, in the middle of its shard
            proc = subprocess.Popen([*cmd, "--shard", f"{i}/10", "--jsonl", str(log)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, cwd=tmp_path)
            for _ in range(2400):  # at most 2 minutes of 50 ms waits
                if log.exists() and len(log.read_text().splitlines()) >= 5:
                    break
                try:
                    proc.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            assert 0 < len(log.read_text().splitlines()) < 20
        run = subprocess.run([*cmd, "--shard", f"{i}/10", "--jsonl", str(log)], capture_output=True, text=True,
                             cwd=tmp_path, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        if i == 4:
            assert "already done, not analysed again" in run.stderr
    joined = tmp_path / "zoo.jsonl"
    joined.write_text("".join(log.read_text() for log in logs))
    assert len(joined.read_text().splitlines()) == 200
    merged = subprocess.run([*cmd, "--jsonl", str(joined)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert merged.returncode == 0 and "200 of 200 model(s) already done" in merged.stderr, merged.stderr[-2000:]
    one = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert one.returncode == 0, one.stderr[-2000:]
    assert merged.stdout == one.stdout and one.stdout.count("\n") > 200
