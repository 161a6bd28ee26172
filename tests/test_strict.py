"""One definition of what --strict refuses: ``analyze(..., strict=True)`` and the CLI's ``--strict``
(checked after the report is printed) raise and print the same reasons, for every kind of problem."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import cli_process
import pytest
from lanes import slow_cases
from tflite_builder import CUSTOM, build_model, fc_model

import tflite_flops
from tflite_flops.report.completeness import check_strict, strict_problems
from tflite_flops.errors import ShapeError, UnsupportedOpError

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "sample_models" / "cnn_float.tflite"
BUGGY = "CUSTOM:MyBuggyStrictOp"
# Registers a cost formula with a bug (ZeroDivisionError), then runs the CLI or the library.
PRELUDE = f"""
import sys
import tflite_flops
from tflite_flops import Cost

@tflite_flops.register_cost({BUGGY!r}, "FLOPs = n(out) / 0")
def _buggy(c):
    return Cost(0, c.output(0).n // 0)
"""


def _custom_op(name: str, options: bytes = b"") -> bytes:
    sg = {"tensors": [{"name": "x", "shape": [1, 8]}, {"name": "y", "shape": [1, 8]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1], "custom_options": options}]}
    return build_model([sg], [{"builtin": CUSTOM, "custom": name.removeprefix("CUSTOM:")}])


CASES = {  # kind -> (model bytes or path, extra arguments, error class of analyze(strict=True), reason)
    "no cost formula": (fc_model({"builtin": 250, "deprecated": 127}), (), UnsupportedOpError,
                        "1 op(s) have no cost formula: UNKNOWN_250 ×1"),
    "unresolved shapes": (CNN, ("--batch", "3"), ShapeError, "the totals are partial: 5 op(s) have unresolved shapes"),
    "accelerator-compiled": (_custom_op("edgetpu-custom-op", bytes(range(256)) * 4), (), UnsupportedOpError,
                             "1 op(s) compiled for an accelerator hide their work"),
    "formula raised": (_custom_op(BUGGY), (), UnsupportedOpError,
                       "1 op(s) not counted because their cost formula raised"),
}


def _model_path(model: bytes | Path, tmp_path: Path) -> Path:
    if isinstance(model, Path):
        return model
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    return path


def _library(path: Path, args: tuple[str, ...], strict: bool) -> subprocess.CompletedProcess:
    batch = f", batch={int(args[1])}" if args else ""
    code = PRELUDE + f"tflite_flops.analyze({str(path)!r}{batch}, strict={strict})\n"
    return cli_process.run_code(code, cwd=ROOT, timeout=120)


def _cli(path: Path, *args: str) -> subprocess.CompletedProcess:
    code = PRELUDE + "from tflite_flops.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return cli_process.run_code(code, ["analyze", str(path), *args], cwd=ROOT, timeout=120)


@pytest.mark.parametrize("kind", slow_cases(CASES, {"accelerator-compiled", "formula raised"}))
def test_library_and_cli_refuse_the_same_problem_with_the_same_reason(kind, tmp_path):
    model, args, error, reason = CASES[kind]
    path = _model_path(model, tmp_path)
    lib = _library(path, args, strict=True)
    assert lib.returncode == 1
    assert lib.stderr.strip().splitlines()[-1] == f"tflite_flops.errors.{error.__name__}: --strict: {reason}"
    assert _library(path, args, strict=False).returncode == 0
    cli = _cli(path, *args, "--strict")
    assert cli.returncode == 1
    assert cli.stdout.splitlines()[0].endswith(f" — {path.name}")  # the report is printed first
    assert cli.stderr.strip().splitlines()[-1] == f"error: --strict: {reason}"
    assert _cli(path, *args).returncode == 0


def test_every_problem_is_listed_and_the_first_chooses_the_error(tmp_path):
    # An op without a formula in a graph whose shapes stay unresolved at batch 3: both reasons, in order.
    report = tflite_flops.analyze(CNN, batch=3)
    assert strict_problems(report) == ["the totals are partial: 5 op(s) have unresolved shapes"]
    both = replace(report, unsupported={"MY_OP": 2})
    with pytest.raises(UnsupportedOpError) as exc:
        check_strict(both)
    assert str(exc.value) == ("--strict: 2 op(s) have no cost formula: MY_OP ×2; "
                              "the totals are partial: 5 op(s) have unresolved shapes")
    assert strict_problems(tflite_flops.analyze(CNN)) == []
    check_strict(tflite_flops.analyze(CNN))  # a complete report passes
