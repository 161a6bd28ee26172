"""CLI tests: `python -m tflite_flops` in a subprocess, exit codes, stdout/stderr separation."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import cli_process
import pytest

ROOT = Path(__file__).resolve().parent.parent
CNN = str(ROOT / "sample_models" / "cnn_float.tflite")
FCN = str(ROOT / "sample_models" / "fcn_dynamic.tflite")


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return cli_process.run(args, cwd=cwd, timeout=120)


def test_table_default():
    r = run("analyze", CNN)
    assert r.returncode == 0, r.stderr
    assert "Totals per inference" in r.stdout
    assert "By op type" in r.stdout
    assert "CONV_2D" in r.stdout
    # total MACs of the float CNN, derived layer by layer in test_crosscheck_tf.py::test_sample_cnn_variants
    assert "397,392" in r.stdout


def test_json_stdout_is_clean_and_warnings_go_to_stderr():
    r = run("analyze", FCN, "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # nothing but JSON on stdout
    assert data["schema_version"] == 1
    assert "warning:" in r.stderr and "--input-shape" in r.stderr
    assert any("dynamic dims" in w for w in data["warnings"])


def test_input_shape_changes_the_count():
    small = json.loads(run("analyze", FCN, "-f", "json", "--input-shape", "1x64x64x3").stdout)
    big = json.loads(run("analyze", FCN, "-f", "json", "--input-shape", "image=1x128x128x3").stdout)
    assert big["totals"]["macs"] == 4 * small["totals"]["macs"] > 0
    indexed = json.loads(run("analyze", FCN, "-f", "json", "--input-shape", "0=1x128x128x3").stdout)
    assert indexed["totals"] == big["totals"]


def test_output_files_by_extension(tmp_path):
    j, c, t = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "r.txt"
    r = run("analyze", CNN, "-o", str(j), "-o", str(c), "-o", str(t), "--format", "csv")
    assert r.returncode == 0, r.stderr
    data = json.loads(j.read_text())
    rows = list(csv.DictReader(io.StringIO(c.read_text())))
    assert len(rows) == len(data["ops"]) == data["model"]["operators"]
    assert sum(int(row["macs"]) for row in rows if row["phase"] == "inference") == data["totals"]["macs"]
    assert "Totals per inference" in t.read_text()
    assert r.stdout == c.read_text()



def test_ops_catalog_writes_files_by_extension(tmp_path):
    md, c = tmp_path / "ops.md", tmp_path / "ops.csv"
    r = run("ops", "-o", str(md), "-o", str(c))
    assert r.returncode == 0, r.stderr
    assert md.read_text() == run("ops", "--format", "md").stdout
    assert c.read_text() == run("ops", "--format", "csv").stdout
    assert r.stdout == run("ops").stdout  # stdout keeps the table
    bad = run("ops", "-o", str(tmp_path / "ops.html"))  # the catalog has no HTML form
    assert bad.returncode == 2 and "unknown output extension" in bad.stderr


@pytest.mark.parametrize("args, code, text", [
    (("analyze", "does_not_exist.tflite"), 1, "no such file"),
    (("analyze", str(ROOT / "pyproject.toml")), 1, "not a TFLite flatbuffer"),
    (("analyze", str(ROOT / "sample_models")), 1, "is a directory"),
    (("analyze", CNN, "-o", "report.unknownext"), 2, "unknown output extension"),
    (("analyze", FCN, "--input-shape", "1x64x64"), 2, "rank"),  # a shape the model refuses: an input error
    (("analyze", FCN, "--input-shape", "1x64x64x4"), 2, "fixes it at 3"),
    (("analyze", FCN, "--input-shape", "nope=1x64x64x3"), 2, "no input named"),
    (("analyze", FCN, "--input-shape", "1xAx3"), 2, "cannot read"),
    (("analyze",), 2, ""),
    (("frobnicate",), 2, ""),
])
def test_errors_are_one_line(args, code, text):
    r = run(*args)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    if code == 1:
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert text in r.stderr


def test_failed_run_writes_nothing(tmp_path):
    out = tmp_path / "r.json"
    r = run("analyze", FCN, "--input-shape", "1x64x64", "-o", str(out))
    assert r.returncode == 2  # a shape the model refuses: an input error
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_ops_lists_every_builtin():
    r = run("ops")
    assert r.returncode == 0
    for name in ("CONV_2D", "FULLY_CONNECTED", "STABLEHLO_CASE", "WHILE"):
        assert name in r.stdout


@pytest.mark.slow
def test_the_package_loads_its_names_when_first_used():
    """``import tflite_flops`` imports neither numpy nor the analysis (a run of the command line sets up its
    process first); every public name still resolves, and an unknown one is an AttributeError."""
    code = ("import sys, tflite_flops\n"
            "before = sorted(m for m in ('numpy', 'tflite_flops.api', 'tflite_flops.analysis') if m in sys.modules)\n"
            "missing = [n for n in tflite_flops.__all__ if getattr(tflite_flops, n, None) is None]\n"
            "listed = set(tflite_flops.__all__) <= set(dir(tflite_flops))\n"
            "try:\n    tflite_flops.no_such_name\nexcept AttributeError:\n    unknown = 'AttributeError'\n"
            "print(before, missing, listed, unknown)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["[]", "[]", "True", "AttributeError"], out.stdout + out.stderr


@pytest.mark.parametrize("preset, numpy_first, expected", [
    (None, False, "1"),  # a run of the command line: one BLAS thread
    pytest.param("4", False, "4", marks=pytest.mark.slow),  # the user's choice stands
    pytest.param(None, True, None, marks=pytest.mark.slow),  # numpy already imported (a notebook): left as it is
])
def test_the_process_entry_sets_up_its_process(preset, numpy_first, expected):
    """``console()`` (``python -m tflite_flops``, the ``tflite-flops`` script) asks for one OpenBLAS thread
    before numpy is imported, and freezes what is left out of the garbage collector when the command is done."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    code = ("import gc, os, sys\n"
            + ("import numpy\n" if numpy_first else "")
            + "sys.argv = ['tflite-flops', 'analyze', sys.argv[1]]\n"
            "from tflite_flops.cli import console\n"
            "import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()): code = console()\n"
            "print(code, os.environ.get('OPENBLAS_NUM_THREADS'), gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", code, CNN], capture_output=True, text=True, timeout=120, env=env)
    assert out.stdout.split() == ["0", str(expected), "True"], out.stdout + out.stderr


def test_console_script_entry_point_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'tflite-flops = "tflite_flops.cli:console"' in text


def test_every_subpackage_is_installed():
    # pyproject lists the packages by hand: a new subpackage missing there works in an editable
    # install and is absent from a wheel
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "tflite_flops").rglob("__init__.py")}
    assert found == listed


@pytest.mark.parametrize("limit, code", [("200K", 3), ("397392", 0), ("400K", 0)])
def test_budget_gate_exit_codes(limit, code):
    r = run("analyze", CNN, "--max-macs", limit, "-f", "json")
    assert r.returncode == code, r.stderr
    assert json.loads(r.stdout)["totals"]["macs"] == 397_392  # the report is printed either way
    if code == 3:
        assert "budget exceeded: macs" in r.stderr and r.stderr.count("budget exceeded") == 1


def test_budget_file(tmp_path):
    path = tmp_path / "budget.toml"
    path.write_text('max_macs = "300K"\nmax_params = 1000\n')
    r = run("analyze", CNN, "--budget", str(path))
    assert r.returncode == 3
    assert r.stderr.count("budget exceeded") == 2  # one line per violated limit


def test_report_files_get_the_usual_permissions(tmp_path):
    import os
    import stat

    out = tmp_path / "r.json"
    assert run("analyze", CNN, "-o", str(out)).returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask


def test_library_rejects_unknown_sources_clearly():
    import tflite_flops

    with pytest.raises(tflite_flops.ModelLoadError, match="cannot read a model from a object"):
        tflite_flops.analyze(object())


# ---- issue 12: usage errors are 2 everywhere, with the subcommand's usage ------------------------------


@pytest.mark.parametrize("command, bad", [
    (["analyze", CNN], ["--batch", "0"]), (["sweep", CNN], ["--batch", "0"]), (["sweep", CNN], ["--batch", "1,x"]),
    (["compare", CNN, CNN], ["--batch", "0"]), (["batch", CNN], ["--batch", "0"]),
    (["import-profile", CNN, CNN], ["--batch", "0"]), (["roofline", CNN], ["--batch", "0"]),
    (["analyze", CNN], ["--runs", "0"]), (["analyze", CNN], ["--threads", "x"]), (["analyze", CNN], ["--top", "-1"]),
    (["sweep", CNN], ["--min-time", "-1"]), (["batch", CNN], ["--jobs", "0"]),
    (["analyze", CNN], ["--while-trips", "-1"]),
    (["analyze", CNN], ["--no-such-flag"]), (["sweep", CNN], ["--no-such-flag"]), (["batch", CNN], ["--nope", "1"]),
    (["compare", CNN, CNN], ["--no-such-flag"]), (["ops"], ["--no-such-flag"]),
    (["analyze", CNN], ["--max-macs", "1e999"]), (["analyze", CNN], ["--max-arena", "1e999KiB"]),  # past a float
    (["analyze", CNN], ["--threads", str(10**400)]), (["analyze", CNN], ["--batch", str(2**31)]),  # past a C int
    (["analyze", CNN], ["--while-trips", "9" * 5000]),  # past Python's int parsing limit
    (["analyze", CNN], ["--min-time", "inf"]), (["sweep", CNN], ["--min-time", "nan"]),
    (["analyze", CNN], ["--min-time", "1e300"]),  # a day at most
])
def test_usage_errors_exit_2_with_the_subcommand_usage(command, bad):
    r = run(*command, *bad)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"usage: tflite-flops {command[0]} "), r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"tflite-flops {command[0]}: error: ") and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_library_batch_below_one_is_an_input_spec_error():
    import tflite_flops
    from tflite_flops.errors import InputSpecError

    with pytest.raises(InputSpecError, match="at least 1"):
        tflite_flops.analyze(CNN, batch=0)


@pytest.mark.slow
def test_a_run_builds_only_its_own_command():
    """``analyze`` builds only its own options: the other commands' renderers and studies (the worker pool,
    the sweep and its exact fits) are not imported, so every CLI run does not pay for them. Nor does a static
    run of a plain model load the records of timed, predicted or generative runs, nor what the formats it does
    not write need (each a few dataclasses: ~0.5 ms apiece on Python 3.11)."""
    code = ("import sys, io, contextlib; from tflite_flops.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): code = main(['analyze', sys.argv[1]])\n"
            "print(code, sorted(m for m in ('tflite_flops.studies.batch', 'tflite_flops.studies.sweep',"
            " 'tflite_flops.render.compare', 'concurrent.futures', 'fractions', 'tflite_flops.report.measured',"
            " 'tflite_flops.report.generative', 'csv', 'html') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, CNN], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split(None, 1) == ["0", "[]\n"], out.stdout + out.stderr


def test_a_format_is_named_by_its_extension_too(capsys):
    """``-o x.markdown`` was accepted and ``--format markdown`` refused (issue 45): an extension names its format."""
    from tflite_flops.cli import main

    model = str(Path(__file__).resolve().parent.parent / "sample_models" / "cnn_float.tflite")
    outs = []
    for fmt in ("md", "markdown", "htm", "html", "txt", "table"):
        assert main(["analyze", model, "--format", fmt]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and outs[2] == outs[3] and outs[4] == outs[5]
