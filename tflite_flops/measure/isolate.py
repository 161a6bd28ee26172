"""Measurements in a child process: the interpreter runs where a time limit (or Ctrl-C) can stop it.

``invoke()`` runs native code that Python's signal handling cannot interrupt: a model whose WHILE never
ends used to hang ``--latency`` for good, and Ctrl-C could not stop it. :func:`run_in_child` runs a
measurement in a child process (``fork`` where the platform has it, else ``spawn``) and waits for its
result on a pipe, at most ``limit`` seconds; past the limit, or on Ctrl-C, the child is killed and the
caller gets one clean error.

Everything is measured in the child, where the interpreter runs: the timing statistics, the RSS
figures (the child's own, taken before and after it loads the model, as in-process before), the
per-op times. Only the finished result (a :class:`~tflite_flops.report.Report` or the measured
records) comes back, pickled; an exception raised in the child is raised again in the caller.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..errors import RuntimeUnavailableError, TfliteFlopsError

# Seconds: the default limit is BASE_S, plus twice --min-time, plus PER_RUN_S for each warm-up and timed run
# (of the whole model, and again of each op with --per-op). A run of a real model is milliseconds to a
# second; a model that needs more sets --time-limit.
BASE_S = 300.0
PER_RUN_S = 2.0


class MeasurementTimeout(TfliteFlopsError):
    """A measurement ran past its time limit (the child running the interpreter was ended)."""


def default_time_limit(runs: int, warmup: int, min_time: float, ops_timed: int = 0) -> float:
    """The time limit of a measurement of ``runs`` + ``warmup`` invokes for at least ``min_time`` seconds,
    and as many again for each of ``ops_timed`` ops timed alone (``--per-op``)."""
    return BASE_S + 2.0 * min_time + PER_RUN_S * (runs + warmup) * (1 + ops_timed)


def _seconds(limit: float) -> str:
    """``limit`` as the message shows it: ``0.2``, ``3``, ``1,234``."""
    return f"{limit:g}" if limit < 10 else f"{limit:,.0f}"


def _child(send: Any, fn: Callable[..., Any], args: tuple) -> None:
    """In the child: run ``fn(*args)`` and send ``("ok", result)`` or ``("error", exception)``."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it ends this process
    try:
        result = ("ok", fn(*args))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it again
        result = ("error", exc)
    try:
        send.send(result)
    except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception: say what it was
        send.send(("error", RuntimeUnavailableError(f"the measurement's result could not be sent back "
                                                    f"({type(exc).__name__}: {exc})")))
    send.close()


def run_in_child(fn: Callable[..., Any], *args: Any, limit: float, what: str = "the measurement") -> Any:
    """``fn(*args)`` run in a child process, its result returned (its exception raised) here.

    ``fn`` and ``args`` must be picklable where ``fork`` is unavailable (module-level functions).

    Raises:
        MeasurementTimeout: no result within ``limit`` seconds (the child is killed).
        RuntimeUnavailableError: the child died without a result (a crash in the runtime's native code,
            the memory limit).
        KeyboardInterrupt: Ctrl-C while waiting (the child is killed first).
    """
    if not (limit > 0 and math.isfinite(limit)):
        raise ValueError(f"the time limit must be a positive number of seconds, got {limit!r}")
    import multiprocessing

    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), name="tflite_flops-measure")
    proc.start()
    send.close()  # the child holds the only writer: its death reads as EOF here
    try:
        if not receive.poll(limit):
            raise MeasurementTimeout(f"{what} did not finish within its time limit of {_seconds(limit)} s and was "
                                     "stopped (a model that never ends, such as a WHILE whose condition stays "
                                     "true, or a slow one: raise the limit with --time-limit SECONDS)")
        try:
            status, value = receive.recv()
        except (EOFError, OSError):
            proc.join(5)
            code = proc.exitcode
            how = (f"signal {-code}" if code is not None and code < 0 else f"exit status {code}")
            raise RuntimeUnavailableError(f"the runtime's process ended without a result ({how}) during {what}: "
                                          "a crash in the runtime or out of memory") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        receive.close()
        if hasattr(proc, "close"):
            proc.close()
    if status == "error":
        raise value
    return value

