"""Files that are not what they claim: a FIFO, a device, a huge or deeply nested file, named where the
tool reads a model, a budget, a profile, input arrays, a device profile or a saved report.

Each gets one line on stderr and a non-zero exit, promptly: a FIFO is never waited on (``open()``
on one blocks until a writer comes), ``/dev/zero`` is never read until memory runs out, and a
file read whole is capped (:mod:`tflite_flops.files`). A hang fails the test by its timeout.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import cli_process
import pytest

from tflite_flops.errors import InputSpecError, ModelLoadError
from tflite_flops.files import NotARegularFile, TooLarge, open_regular, read_capped

ROOT = Path(__file__).resolve().parent.parent
CNN = str(ROOT / "sample_models" / "cnn_float.tflite")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs and /dev/zero")


def one_line_error(r, exit_codes, needle):
    assert r.returncode in exit_codes, (r.returncode, r.stderr)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0], r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


@pytest.fixture
def fifo(tmp_path):
    def make(name):
        path = tmp_path / name
        os.mkfifo(path)
        return str(path)
    return make


@pytest.mark.parametrize("suffix, args, codes", [
    (".tflite", ["analyze", "{f}"], {1}),  # the model
    (".toml", ["analyze", CNN, "--budget", "{f}"], {2}),
    (".json", ["analyze", CNN, "--predict", "{f}"], {1}),  # a device profile
    (".npz", ["analyze", CNN, "--inputs", "{f}"], {1, 2}),  # input arrays
    (".txt", ["import-profile", CNN, "{f}"], {1}),  # benchmark_model's op profile
    (".json", ["compare", "{f}", CNN], {1}),  # a saved report
])
def test_a_fifo_is_refused_never_waited_on(fifo, suffix, args, codes):
    path = fifo("x" + suffix)
    r = cli_process.run([path if a == "{f}" else a for a in args], cwd=ROOT, timeout=60)
    one_line_error(r, codes, "a FIFO, not a regular file")


@pytest.mark.parametrize("args, codes", [
    (["analyze", "/dev/zero"], {1}),
    (["analyze", CNN, "--budget", "/dev/zero"], {2}),
    (["analyze", CNN, "--predict", "/dev/zero"], {1}),
])
def test_a_device_is_never_read_until_memory_runs_out(args, codes):
    one_line_error(cli_process.run(args, cwd=ROOT, timeout=60), codes, "a character device, not a regular file")


def test_files_read_whole_are_capped_and_nesting_is_bounded(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:  # 2 MiB, sparse: a budget is a few lines
        f.truncate(2 << 20)
    one_line_error(cli_process.run(["analyze", CNN, "--budget", str(big)], cwd=ROOT, timeout=60), {2},
                   "larger than 1 MiB")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    one_line_error(cli_process.run(["analyze", CNN, "--predict", str(deep)], cwd=ROOT, timeout=60), {1},
                   "nested too deeply")
    one_line_error(cli_process.run(["compare", str(deep), CNN], cwd=ROOT, timeout=60), {1}, "nested too deeply")


def test_the_library_refuses_a_fifo_and_a_deep_budget(fifo, tmp_path):
    import tflite_flops
    from tflite_flops.report.budget import load_budget_file

    with pytest.raises(ModelLoadError, match="a FIFO, not a regular file"):
        tflite_flops.analyze(fifo("m.tflite"))
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000)
    with pytest.raises(InputSpecError, match="nested too deeply"):
        load_budget_file(str(deep))


def test_open_regular_and_read_capped(fifo, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("héllo")
    assert read_capped(path, 6) == "héllo".encode()  # 6 bytes: exactly the cap
    assert read_capped(path, 6, "r", encoding="utf-8") == "héllo"
    with pytest.raises(TooLarge, match="larger than 5 bytes"):
        read_capped(path, 5)
    with pytest.raises(NotARegularFile, match="a directory"):
        open_regular(tmp_path)
    with pytest.raises(NotARegularFile, match="a FIFO"):
        read_capped(fifo("p"), 10)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing")
    with pytest.raises(ValueError):
        open_regular(path, "w")


# ---- where the output goes: a full disk, a closed or ASCII stdout, an output that is an input --------------


def _shell(command: str, **env: str):
    import subprocess

    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})


@pytest.mark.parametrize("redirect, needle", [
    ("> /dev/full", "cannot write the output (No space left on device)"),
    pytest.param(">&-", "standard output is closed", marks=pytest.mark.slow),
])
def test_a_stdout_that_cannot_be_written_is_one_line_exit_1(redirect, needle):
    r = _shell(f'"{sys.executable}" -m tflite_flops analyze "{CNN}" {redirect}')
    one_line_error(r, {1}, needle)


@pytest.mark.slow
def test_an_ascii_stdout_gets_escapes_not_an_encoding_error():
    r = _shell(f'"{sys.executable}" -m tflite_flops analyze "{CNN}"', PYTHONIOENCODING="ascii")
    assert r.returncode == 0, r.stderr
    assert "tflite_flops 0.1.0 \\u2014 cnn_float.tflite" in r.stdout.splitlines()[0]


def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path):
    model = tmp_path / "m.txt"
    model.write_bytes(Path(CNN).read_bytes())
    r = cli_process.run(["analyze", str(model), "-o", str(model)], cwd=ROOT, timeout=60)
    one_line_error(r, {2}, "that is an input of this command")
    assert model.read_bytes() == Path(CNN).read_bytes()  # the model is untouched
    budget = tmp_path / "b.toml"
    budget.write_text("max_macs = '1G'\n")
    r = cli_process.run(["analyze", CNN, "--budget", str(budget), "-o", str(tmp_path / "." / "b.toml")], cwd=ROOT)
    one_line_error(r, {2}, "that is an input of this command")
    assert budget.read_text() == "max_macs = '1G'\n"


def test_a_model_path_that_is_not_utf8_is_written_escaped(tmp_path):
    model = os.path.join(os.fsencode(tmp_path), b"\xff.tflite")
    with open(model, "wb") as f:
        f.write(Path(CNN).read_bytes())
    out = tmp_path / "r.json"
    r = cli_process.run(["analyze", os.fsdecode(model), "-o", str(out)], cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads(out.read_text(encoding="utf-8"))["model"]["path"].endswith("\udcff.tflite")


def test_calibrate_refuses_a_directory_before_timing_anything(tmp_path):
    r = cli_process.run(["calibrate", "-o", str(tmp_path), "--quick"], cwd=ROOT, timeout=60)
    one_line_error(r, {2}, "a directory, not a regular file")  # refused with every -o, before any work
    assert list(tmp_path.iterdir()) == []  # no side file, no temporary


def test_a_profile_that_cannot_be_written_names_the_file_asked_for(tmp_path):
    from tflite_flops.latency.profile import DeviceProfile, Machine, ProfileError

    profile = DeviceProfile(Machine("test cpu", 2, "ai_edge_litert", "2.3.0", 1, True), (), invoke_overhead_us=1.0,
                            partition_overhead_us=1.0, created="2026-11-27T00:00:00+00:00", source="calibrate")
    target = tmp_path / "missing" / "p.json"
    with pytest.raises(ProfileError, match=r"p\.json: cannot write the profile \(No such file") as info:
        profile.save(str(target))
    assert ".profile-" not in str(info.value)
    with pytest.raises(ProfileError, match="is a directory"):
        profile.save(str(tmp_path))
    good = tmp_path / "p.json"
    profile.save(str(good))  # the one atomic writer: the usual permissions, no temporary left
    umask = os.umask(0)
    os.umask(umask)
    assert DeviceProfile.load(str(good)) == profile and (good.stat().st_mode & 0o777) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]


@pytest.mark.parametrize("change, needle", [
    (lambda d: d["laws"][0]["coefficients"].update({"1": -5.0}), "laws[0].coefficients.1 is -5.0, out of range"),
    (lambda d: d["laws"][0]["coefficients"].update({"1": float("nan")}), "laws[0].coefficients.1 is nan, out of range"),
    (lambda d: d.update(invoke_overhead_us=-1.0), "invoke_overhead_us is -1.0, out of range"),
    (lambda d: d["laws"][0].update(log_low=3.0, log_high=-3.0), "laws[0].log_low 3.0 is above log_high -3.0"),
    (lambda d: d["machine"].update(threads=0), "machine.threads is 0, out of range: an integer from 1"),
])
def test_a_degenerate_profile_is_refused_not_predicted_as_0_ms(change, needle):
    # A law with a negative coefficient predicted 0 ms for every op, with complete: true.
    from tflite_flops.latency.profile import DeviceProfile, Law, Machine, ProfileError

    good = DeviceProfile(Machine("test cpu", 2, "ai_edge_litert", "2.3.0", 1, True),
                         (Law("*", "float32", "xnnpack", {"1": 2.0}, log_low=-0.1, log_high=0.1, points=10),),
                         invoke_overhead_us=1.0, partition_overhead_us=1.0, created="2026-11-27T00:00:00+00:00",
                         source="calibrate")
    d = good.to_dict()
    assert DeviceProfile.from_dict(d) == good
    change(d)
    with pytest.raises(ProfileError, match="device profile out of range: .*" + re.escape(needle)):
        DeviceProfile.from_dict(d)


@pytest.mark.parametrize("spec, needle", [
    ("1x" + "9" * 5000 + "x32x3", "(5,007 characters)' as a shape"),  # echoed clipped, never parsed
    ("1x3000000000x32x3", "has a dim above 2,147,483,647"),
])
def test_shape_dims_past_an_int32_are_one_short_line(spec, needle):
    r = cli_process.run(["analyze", str(ROOT / "sample_models" / "fcn_dynamic.tflite"), "--input-shape", spec],
                        cwd=ROOT, timeout=60)
    one_line_error(r, {2}, needle)
    assert len(r.stderr) < 300


def test_names_reach_the_terminal_escaped(tmp_path):
    # A custom op named with an escape sequence and a newline: in the table and in the warning that names it,
    # it must neither colour the terminal nor start a line of its own that reads as the tool's error.
    from tflite_builder import CUSTOM, build_model

    evil = "Evil\x1b[2J\nerror: forged"
    sg = {"tensors": [{"name": "x\x1b]0;title\x07", "shape": [1, 8]}, {"name": "y", "shape": [1, 8]}],
          "inputs": [0], "outputs": [1], "operators": [{"opcode": 0, "inputs": [0], "outputs": [1]}]}
    path = tmp_path / "evil.tflite"
    path.write_bytes(build_model([sg], [{"builtin": CUSTOM, "custom": evil}]))
    r = cli_process.run(["analyze", str(path)], cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    for stream in (r.stdout, r.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
        assert not any(line.startswith("error: forged") for line in stream.splitlines())
    assert "Evil\\x1b[2J\\nerror: forged" in r.stdout + r.stderr


@pytest.mark.parametrize("kwargs, needle", [
    (dict(batch="abc"), "batch: expected an integer, got 'abc'"),
    (dict(batch=1.5), "batch: expected an integer, got 1.5"),
    (dict(batch=True), "batch: expected an integer, got True"),
    (dict(while_trips=-5), "while_trips: must be at least 0"),
    (dict(threads=0), "threads: must be at least 1"),
    (dict(batch=2**31), "at most 2,147,483,647"),
    (dict(signature=3), "signature: expected a signature key"),
])
def test_the_library_validates_its_settings_with_the_package_error(kwargs, needle):
    import tflite_flops

    with pytest.raises(InputSpecError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        tflite_flops.analyze(CNN, **kwargs)


def test_a_numpy_integer_is_an_integer():
    import numpy as np

    import tflite_flops

    model = str(ROOT / "sample_models" / "mlp_dynamic_batch.tflite")
    assert tflite_flops.analyze(model, batch=np.int64(4)).totals.macs == tflite_flops.analyze(model, batch=4).totals.macs


@pytest.mark.parametrize("text", ["garbage", "[1, 2]", '{"x": 1}', "null", "[" * 100_000, '{"ops": 3}'])
def test_report_from_json_on_garbage_raises_the_package_error(text):
    from tflite_flops import Report
    from tflite_flops.errors import ReportFormatError, TfliteFlopsError

    with pytest.raises(ReportFormatError, match="not a tflite_flops JSON report") as info:
        Report.from_json(text)
    assert isinstance(info.value, TfliteFlopsError) and isinstance(info.value, ValueError)


@pytest.mark.slow  # counts every call of matching 25,000 ops: a few seconds
def test_compare_matches_ops_in_near_linear_work():
    # difflib over 20,000 ops against 20,000 others was quadratic (66 s); count the work at n and 4n.
    from collections import namedtuple

    from work_counter import count_calls

    from tflite_flops.report.compare import match_ops

    Op = namedtuple("Op", "op_type")

    def work(n: int) -> int:
        a = [Op(t) for t in ("CONV_2D", "ADD", "RELU", "MUL") * (n // 4)]
        b = [Op(t) for t in ("ADD", "CONV_2D", "MUL", "SUB", "RELU") * (n // 5)]
        counted = count_calls(match_ops, a, b, limit=50_000_000)
        assert counted.error is None, counted.error
        pairs = counted.result
        assert [p.a for p in pairs if p.a is not None] == a and [p.b for p in pairs if p.b is not None] == b
        return counted.calls

    small, large = work(5_000), work(20_000)
    assert large < 6 * small, (small, large)  # 4x the ops: about 4x the work, never 16x
    same = [Op("CONV_2D")] * 20_000
    counted = count_calls(match_ops, same, same, limit=200_000)  # a model against itself: one pass
    assert counted.error is None and all(p.match == "same" for p in counted.result)
