"""Runs the red-team cases of ``tests/redteam.py`` (issue 32): each under a memory and time limit (CLI and
signal cases: a child process with ``RLIMIT_AS`` and a timeout) or a work limit (library cases: counted
function calls, never a clock), with its exit code and error shape.

The quick lane runs the cases marked ``quick`` (a fixed sample); the slow lane (CI) runs them all.
"""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import sys
import time

import cli_process
import pytest
import redteam
from work_counter import WorkLimitExceeded, count_calls

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs, /dev/zero, /proc, RLIMIT_AS")

# The child: its address space capped at its own size plus the case's allowance, then the CLI's main().
BOOT = r'''
import resource, sys
def size():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
limit = size() + int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from tflite_flops.cli import main
sys.exit(main(sys.argv[2:]))
'''


# The one line of a failure: ``error: ...``, or argparse's ``tflite-flops CMD: error: ...`` after the usage
# (a usage error, exit 2).
ERROR_LINE = re.compile(r"(error: |tflite-flops( [a-z-]+)?: error: )")


def _params():
    for case in redteam.CASES:
        marks = [] if case.quick else [pytest.mark.slow]
        if case.xfail:
            marks.append(pytest.mark.xfail(strict=not case.flaky, reason=case.xfail))
        yield pytest.param(case, id=case.name, marks=marks)


def assert_error_shape(proc: subprocess.CompletedProcess, case: redteam.Case) -> None:
    """The exit code is one of the case's; a failure is one ``error:`` line; never a traceback."""
    err = proc.stderr
    assert proc.returncode in case.codes, f"exit {proc.returncode}, expected {sorted(case.codes)}; stderr:\n{err[-3000:]}"
    assert "Traceback" not in err and "internal error" not in err, err[-3000:]
    errors = [line for line in err.splitlines() if ERROR_LINE.match(line)]
    if proc.returncode == 0:
        assert not errors, err[-3000:]
    else:
        assert len(errors) == 1, err[-3000:]
        assert len(errors[0]) < 2000, "an error line echoes too much"
        if case.needle is not None:
            assert case.needle in errors[0], errors[0]


def run_cli(case: redteam.Case, tmp) -> subprocess.CompletedProcess:
    args = [str(a) for a in case.run(tmp)]
    try:
        return cli_process.run_code(BOOT, [str(redteam.MEMORY_LIMIT), *args], cwd=tmp, timeout=redteam.TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case.name}: still running after {redteam.TIMEOUT_S} s (a hang)")


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def _alive(pid: int) -> bool:
    """``pid`` runs (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _default_sigint() -> None:
    """In the child before exec: Ctrl-C's default action, which Python turns into KeyboardInterrupt (a
    shell without job control starts background commands with SIGINT ignored, and Python keeps that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_signal(case: redteam.Case, tmp) -> subprocess.CompletedProcess:
    """Start the CLI in a session of its own; once its child processes run, send the signal: SIGINT to the whole
    process group (as a terminal's Ctrl-C does), any other signal to the tool's process alone. The child
    processes it had (a batch's workers, the measuring child) must end with it: none left running."""
    args, signum, children = case.run(tmp)
    proc = subprocess.Popen([sys.executable, "-m", "tflite_flops", *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, cwd=redteam.ROOT, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(redteam.ROOT)}, preexec_fn=_default_sigint)
    working: list[int] = []
    try:
        for _ in range(600):  # the batch's workers or the measuring child are up (60 s at most)
            working = _children(proc.pid)
            if len(working) >= children:
                break
            time.sleep(0.1)
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        try:
            _, err = proc.communicate(timeout=redteam.TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{case.name}: still running {redteam.TIMEOUT_S} s after signal {signum} (a hang)")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert len(working) >= children, f"{case.name}: the tool never had its {children} child process(es)"
    for _ in range(50):  # what was killed is reaped within moments
        if not [pid for pid in working if _alive(pid)]:
            break
        time.sleep(0.1)
    assert not [pid for pid in working if _alive(pid)], f"{case.name}: child processes left running"
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


def run_library(case: redteam.Case, tmp) -> None:
    call = case.run(tmp)
    try:
        counted = count_calls(call, limit=redteam.LIBRARY_CALLS)
    except WorkLimitExceeded as exc:
        pytest.fail(f"{case.name}: ran away ({exc})")
    if case.raises is None:
        assert counted.error is None, repr(counted.error)
        return
    assert isinstance(counted.error, case.raises), f"raised {counted.error!r}, expected {case.raises.__name__}"
    if case.needle is not None:
        assert case.needle in str(counted.error), str(counted.error)


@pytest.mark.parametrize("case", list(_params()))
def test_redteam_case(case, tmp_path):
    if case.mode == "library":
        run_library(case, tmp_path)
        return
    proc = run_signal(case, tmp_path) if case.mode == "signal" else run_cli(case, tmp_path)
    assert_error_shape(proc, case)
    if case.check is not None:
        case.check(proc, tmp_path)


def test_the_cases_cover_every_class_and_the_quick_sample_is_small():
    named = redteam.by_name()
    assert {c.kind for c in named.values()} <= redteam.KINDS
    assert {"crafted", "files", "options", "signals", "library"} <= {c.kind for c in named.values()}
    quick = [c for c in named.values() if c.quick]
    assert 5 <= len(quick) <= 15, len(quick)
    assert not [c.name for c in quick if c.mode == "signal"], "signal cases start real processes: slow lane only"


def test_the_memory_limit_is_enforced_in_the_child(tmp_path):
    # The limit is real: a child that asks for more than its allowance gets a MemoryError.
    code = BOOT.replace("from tflite_flops.cli import main\nsys.exit(main(sys.argv[2:]))",
                        "try:\n    bytearray(2 * int(sys.argv[1]))\nexcept MemoryError:\n    sys.exit(7)\n")
    assert cli_process.run_code(code, [str(redteam.MEMORY_LIMIT)], cwd=tmp_path, timeout=60).returncode == 7


@pytest.mark.slow  # two short libFuzzer runs (a few hundred inputs each, ~10 s)
@pytest.mark.skipif(platform.machine() != "x86_64", reason="atheris (the test extra) has wheels for Linux x86-64 only")
@pytest.mark.parametrize("harness", ["fuzz_analyze.py", "fuzz_bundle.py"])
def test_a_short_coverage_guided_fuzz_run_finds_nothing(harness, tmp_path):
    # Seeded and bounded by a count of inputs, not a time: the same run every time. A crash, a leak or a
    # hang (-timeout per input, a hang detector) fails it; the input is saved under tmp_path.
    import atheris  # noqa: F401 - in the test extra on Linux x86-64

    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, str(redteam.ROOT / "fuzz" / "seed_corpus.py"), str(corpus)], check=True,
                   capture_output=True)
    proc = subprocess.run([sys.executable, str(redteam.ROOT / "fuzz" / harness), str(corpus), "-runs=300", "-seed=1",
                           "-timeout=60", "-rss_limit_mb=3072", f"-artifact_prefix={tmp_path}/"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(redteam.ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Done 300 runs" in proc.stderr, proc.stderr[-3000:]


# ---- the measurement's child process (--latency runs the interpreter where a time limit can stop it) ----


def _sleep_forever() -> None:
    import time as _time

    while True:
        _time.sleep(60)


def _raise_spec_error() -> None:
    from tflite_flops.errors import InputSpecError

    raise InputSpecError("bad input arrays")


@pytest.mark.slow
def test_a_measurement_runs_in_a_child_and_its_result_or_error_comes_back():
    from tflite_flops.errors import InputSpecError, RuntimeUnavailableError
    from tflite_flops.measure.isolate import MeasurementTimeout, map_parents_file_pages, run_in_child

    before = set(_children(os.getpid()))
    assert run_in_child(os.getpid, limit=60) != os.getpid()  # measured where it ran: in the child
    assert run_in_child(divmod, 7, 2, limit=60) == (3, 1)
    # the parent's file pages are mapped in the child first, so that they do not count as the model's RSS
    assert run_in_child(map_parents_file_pages, os.getpid(), limit=60) > 0
    with pytest.raises(InputSpecError, match="bad input arrays"):  # the child's exception, raised here
        run_in_child(_raise_spec_error, limit=60)
    with pytest.raises(RuntimeUnavailableError, match=r"ended without a result \(exit status 3\)"):
        run_in_child(os._exit, 3, limit=60)  # a crash in native code: no result, one error
    with pytest.raises(MeasurementTimeout, match="time limit of 0.2 s"):
        run_in_child(_sleep_forever, limit=0.2)
    assert not [c for c in _children(os.getpid()) if c not in before and _alive(c)], "a measuring child left running"


def test_the_default_time_limit_scales_with_the_runs():
    from tflite_flops.measure.isolate import default_time_limit

    base = default_time_limit(50, 5, 0.0)
    assert default_time_limit(500, 5, 0.0) > base and default_time_limit(50, 5, 600.0) >= base + 1200
    assert default_time_limit(50, 5, 0.0, ops_timed=100) > 20 * base
