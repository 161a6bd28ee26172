"""The forked CLI runner of the tests (``cli_process``) gives what a real ``python`` process gives.

Most CLI tests run ``python -m tflite_flops`` through ``cli_process.run``, which forks a warm
server instead of starting Python each time (and starts a real process in CI). Here each
command runs both ways and must give the same exit status, stdout and stderr.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import cli_process
import pytest

# These tests force the forked runner, which needs os.fork (elsewhere every run is a real process).
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the forked runner needs os.fork")

ROOT = Path(__file__).resolve().parent.parent
CNN = "sample_models/cnn_float.tflite"

COMMANDS = {
    "report": ["analyze", CNN, "--format", "json"],
    "warnings on stderr": ["analyze", "sample_models/mlp_dynamic_batch.tflite"],
    "error, exit 1": ["analyze", "no/such/model.tflite"],
    "error with its traceback": ["analyze", "no/such/model.tflite", "--debug"],
    "usage error, exit 2": ["analyze", CNN, "--batch", "x"],
    "help": ["--help"],
    "budget, exit 3": ["analyze", CNN, "--max-macs", "200K"],
    "batch in worker processes": ["batch", "sample_models", "-j", "2", "--format", "csv"],
}
SCRIPTS = {
    "uncaught exception": ("import tflite_flops\ntflite_flops.analyze('no/such/model.tflite')\n", []),
    "sys.exit with a message": ("import sys\nprint('out')\nsys.exit('bye: ' + sys.argv[1])\n", ["arg"]),
    "environment and directory": ("import os, sys\nprint(os.environ['TFLITE_FLOPS_X'], os.getcwd(), sys.argv)\n", ["a"]),
}


def _both(monkeypatch, call):
    results = []
    for forking in (True, False):
        monkeypatch.setattr(cli_process, "_forking", lambda forking=forking: forking)
        proc = call()
        results.append((proc.returncode, proc.stdout, proc.stderr))
    return results


def _normalise(name: str, text: str) -> str:
    if name == "batch in worker processes":  # the time each model took changes from run to run
        return "\n".join(line.rsplit(",", 1)[0] for line in text.splitlines())
    return text


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_forked_cli_runs_like_python_m(monkeypatch, name):
    forked, real = _both(monkeypatch, lambda: cli_process.run(COMMANDS[name], cwd=ROOT, timeout=120))
    assert forked[0] == real[0]
    assert _normalise(name, forked[1]) == _normalise(name, real[1])
    assert forked[2] == real[2]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCRIPTS))
def test_forked_script_runs_like_python_c(monkeypatch, tmp_path, name):
    code, args = SCRIPTS[name]
    env = {**os.environ, "TFLITE_FLOPS_X": "x"}
    forked, real = _both(monkeypatch, lambda: cli_process.run_code(code, args, cwd=tmp_path, env=env, timeout=120))
    assert forked == real


def test_a_hanging_run_is_killed_at_its_timeout(monkeypatch):
    monkeypatch.setattr(cli_process, "_forking", lambda: True)
    with pytest.raises(subprocess.TimeoutExpired):
        cli_process.run_code("import time\ntime.sleep(60)\n", timeout=0.5)
    assert cli_process.run(["--help"], timeout=60).returncode == 0  # the server still serves
