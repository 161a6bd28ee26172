"""``python -m tflite_flops ARGS`` (and ``python -c CODE``) in a process of its own, without paying
Python's start-up each time.

The CLI tests run the tool as users do: a separate process, its exit code, its stdout and stderr
apart, its working directory and environment. Starting Python and importing the package costs
~0.4 s of CPU a run, and the quick lane makes ~270 runs: most of its time. :func:`run` starts
one server process that imports the package once (a fresh interpreter that no test has touched),
then forks a child of it for each run. The child does what ``python -m tflite_flops`` does after
its imports: ``runpy`` runs ``tflite_flops.__main__`` with ``sys.argv``, in the requested working
directory and environment, stdin from /dev/null, stdout and stderr to files, and exits the way
Python exits (``SystemExit`` codes; the traceback and status 1 for an uncaught exception; the
``atexit`` functions; flushed streams). :func:`run_code` does the same for ``python -c CODE``
(a script that registers a formula, then runs the CLI): what it changes dies with its process.
Both return what ``subprocess.run(..., capture_output=True)`` returns.

What a forked child does not repeat is interpreter start-up and the package's import (and the
environment they saw: the server's). Tests of those (import side effects, start-up logs, memory
of a fresh process) call ``subprocess`` themselves. With ``CI`` set (as CI runners do) or
``TFLITE_FLOPS_TEST_FORK=0``, every run starts a real ``python`` instead, so CI checks the very
command users type; ``tests/test_cli_process.py`` checks that both give the same results.
"""

from __future__ import annotations

import atexit
import json
import locale
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
ENTRY = [sys.executable, "-m", "tflite_flops"]

# The server: imports the package, then for each request line (JSON) forks a child that runs the
# CLI; replies with a line holding the child's pid, then one holding its exit status.
_SERVER = r'''
import atexit, gc, importlib, json, os, pkgutil, runpy, sys
# Import what a run of tflite_flops.__main__ imports (its main() is guarded; the package loads the analysis
# and the renderers when a command first needs them), then every other module of the package, which a command
# imports when it needs it (the targets, the runtimes' adapters, the latency model): a child then compiles
# none of them (without cached bytecode, PYTHONDONTWRITEBYTECODE or a read-only checkout, that was about half
# of a child's time). None of them imports an optional package at its top. Then forget the module itself: each
# child runs it afresh as __main__, as python -m does.
importlib.import_module("tflite_flops.__main__")
for name in ("api", "render", *(f"commands.{c}" for c in sys.modules["tflite_flops.cli"].COMMANDS.values())):
    importlib.import_module(f"tflite_flops.{name}")
for info in pkgutil.walk_packages(sys.modules["tflite_flops"].__path__, "tflite_flops."):
    if info.name != "tflite_flops.__main__":
        try:
            importlib.import_module(info.name)
        except Exception:  # a module that cannot import fails in the child that needs it, as in python -m
            pass
del sys.modules["tflite_flops.__main__"]
delattr(sys.modules["tflite_flops"], "__main__")
sys.stdout.flush(); sys.stderr.flush()
requests, replies = os.fdopen(0, "rb", buffering=0), 1


def child(req):
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, req["stdout"], os.O_WRONLY | os.O_TRUNC),
                            (2, req["stderr"], os.O_WRONLY | os.O_TRUNC)):
        new = os.open(path, flags)
        os.dup2(new, fd)
        os.close(new)
    main = type(sys)("__main__")  # a fresh __main__ module, as in a new interpreter
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    code = 0
    try:
        if req["code"] is None:  # python -m tflite_flops ARGS: what the interpreter itself calls
            sys.path[0] = os.getcwd()  # python -m puts the working directory first
            sys.argv = ["-m", *req["args"]]
            runpy._run_module_as_main("tflite_flops", alter_argv=True)
        else:  # python -c CODE ARGS
            sys.path[0] = ""
            sys.argv = ["-c", *req["args"]]
            exec(compile(req["code"], "<string>", "exec"), main.__dict__)
    except SystemExit as exc:  # as the interpreter turns SystemExit into an exit status
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - an uncaught exception: traceback on stderr, status 1
        kind, value, tb = sys.exc_info()
        sys.excepthook(kind, value.with_traceback(tb.tb_next), tb.tb_next)  # without this function's frame
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code & 0xFF)


# What the server holds lives as long as it does: out of the collector's sight, a child's collections do not walk
# (and copy, page by page) the server's objects (the pattern the gc module's documentation gives for fork).
gc.freeze()
buf = b""
while True:
    while b"\n" not in buf:
        chunk = requests.read(65536)
        if not chunk:
            os._exit(0)
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(req)
    os.write(replies, f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    os.write(replies, f"{os.waitstatus_to_exitcode(status)}\n".encode())
'''


def _forking() -> bool:
    if os.environ.get("TFLITE_FLOPS_TEST_FORK", "").strip() == "0":
        return False
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return False
    return hasattr(os, "fork")


class _Server:
    def __init__(self) -> None:
        # Started in the repository root, so it imports the package the tests belong to, as
        # ``python -m tflite_flops`` run there does.
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     cwd=ROOT, env=dict(os.environ))
        self.lock = threading.Lock()
        self.buf = b""
        self.tmp = tempfile.TemporaryDirectory(prefix="tflite-flops-cli-")

    def _line(self, timeout: float | None) -> str | None:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("the CLI fork server exited")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def run(self, code: str | None, args: list[str], cwd: str, env: dict[str, str],
            timeout: float | None) -> tuple[int, bytes, bytes]:
        with self.lock:
            out, err = Path(self.tmp.name, "stdout"), Path(self.tmp.name, "stderr")
            out.write_bytes(b"")
            err.write_bytes(b"")
            req = {"code": code, "args": args, "cwd": cwd, "env": env, "stdout": str(out), "stderr": str(err)}
            self.proc.stdin.write(json.dumps(req).encode() + b"\n")
            self.proc.stdin.flush()
            pid = int(self._line(None))
            status = self._line(timeout)
            if status is None:  # kill the child; the server reaps it and replies
                os.kill(pid, signal.SIGKILL)
                self._line(None)
                command = ENTRY + args if code is None else [sys.executable, "-c", code, *args]
                raise subprocess.TimeoutExpired(command, timeout, out.read_bytes(), err.read_bytes())
            return int(status), out.read_bytes(), err.read_bytes()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.tmp.cleanup()


_server: _Server | None = None


def _get_server() -> _Server:
    global _server
    if _server is None or _server.proc.poll() is not None:
        _server = _Server()
        atexit.register(_server.close)
    return _server


def _text(data: bytes) -> str:
    """As ``subprocess.run(text=True)`` decodes: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def run(args: Sequence[str], *, cwd: str | os.PathLike | None = None, env: dict[str, str] | None = None,
        timeout: float | None = 300, text: bool = True, check: bool = False) -> subprocess.CompletedProcess:
    """``subprocess.run([python, "-m", "tflite_flops", *args], capture_output=True, ...)``, forked from a warm server."""
    return _run(None, args, cwd, env, timeout, text, check)


def run_code(code: str, args: Sequence[str] = (), *, cwd: str | os.PathLike | None = None,
             env: dict[str, str] | None = None, timeout: float | None = 300, text: bool = True,
             check: bool = False) -> subprocess.CompletedProcess:
    """``subprocess.run([python, "-c", code, *args], capture_output=True, ...)``, forked from a warm server.

    For scripts that use the package (register a formula, then run the CLI or the library);
    what they change dies with their process, as with ``python -c``.
    """
    return _run(code, args, cwd, env, timeout, text, check)


def _run(code: str | None, args: Sequence[str], cwd: str | os.PathLike | None, env: dict[str, str] | None,
         timeout: float | None, text: bool, check: bool) -> subprocess.CompletedProcess:
    args = [str(a) for a in args]
    command = ENTRY + args if code is None else [sys.executable, "-c", code, *args]
    if not _forking():
        return subprocess.run(command, capture_output=True, text=text, cwd=cwd, env=env, timeout=timeout, check=check)
    status, out, err = _get_server().run(code, args, os.path.abspath(cwd or os.getcwd()),
                                         dict(os.environ if env is None else env), timeout)
    proc = subprocess.CompletedProcess(command, status, _text(out) if text else out, _text(err) if text else err)
    if check:
        proc.check_returncode()
    return proc
