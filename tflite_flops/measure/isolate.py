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
import os
import sys
import time
from typing import Any, Callable

from ..errors import RuntimeUnavailableError, TfliteFlopsError

# Seconds: the default limit is BASE_S, plus twice --min-time, plus PER_RUN_S for each warm-up and timed run
# (of the whole model, and again of each op with --per-op). A run of a real model is milliseconds to a
# second; a model that needs more sets --time-limit.
BASE_S = 300.0
PER_RUN_S = 2.0


# The first run of the model (load, allocation and one invoke) must end within FIRST_RUN_S seconds plus one
# second per FIRST_RUN_FLOPS_PER_S of its counted FLOPs (a CPU a hundred times slower than a phone's), unless
# --time-limit says otherwise: a WHILE whose condition stays true is stopped in half a minute, not minutes.
FIRST_RUN_S = 30.0
FIRST_RUN_FLOPS_PER_S = 10**9


class MeasurementTimeout(TfliteFlopsError):
    """A measurement ran past its time limit (the child running the interpreter was ended)."""


class MeasurementTooLarge(TfliteFlopsError):
    """The static analysis shows that the run would allocate more memory than this process may still allocate."""


def first_run_limit(flops: int, limit: float) -> float:
    """Seconds the child has to finish the model's first run (and say so), within the whole ``limit``."""
    return min(limit, FIRST_RUN_S + min(flops // FIRST_RUN_FLOPS_PER_S, 10**7))


def memory_headroom() -> int | None:
    """Bytes this process may still allocate: the least of the memory the system has available
    (``MemAvailable``) and the room left under its address-space limit (``RLIMIT_AS``); None where neither
    can be read (not Linux)."""
    room: list[int] = []
    try:
        with open("/proc/meminfo") as f:
            room += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/status") as f:
                size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
            room.append(max(soft - size, 0))
    except (ImportError, OSError, ValueError, IndexError, StopIteration):
        pass
    return min(room) if room else None


def check_memory(report: Any, what: str = "the latency measurement") -> None:
    """Refuse to run a model whose run needs more memory than this process may still allocate, before any
    child starts: the need is the static analysis' own figure, the bytes of the largest op's outputs, which
    the runtime allocates whole (a dynamic output, such as a RANGE's, outside the arena too); a lower bound.

    Raises:
        MeasurementTooLarge: the need is above :func:`memory_headroom`.
    """
    room = memory_headroom()
    if room is None or not report.ops:
        return
    from ..units import human_bytes

    def once(o: Any) -> int:  # a record's counts are per inference: times its executions (a WHILE's trips)
        return o.bytes_written // max(o.executions, 1)

    op = max(report.ops, key=once)
    need, why = once(op), f"the output of op {op.subgraph}:{op.index} {op.op_type}"
    if need > room:
        raise MeasurementTooLarge(f"{what} would allocate at least {human_bytes(need)} ({why}, from the static "
                                  f"analysis), more than the {human_bytes(room)} this process may still allocate: "
                                  "not run (the report without the measurement is complete)")


def default_time_limit(runs: int, warmup: int, min_time: float, ops_timed: int = 0) -> float:
    """The time limit of a measurement of ``runs`` + ``warmup`` invokes for at least ``min_time`` seconds,
    and as many again for each of ``ops_timed`` ops timed alone (``--per-op``)."""
    return BASE_S + 2.0 * min_time + PER_RUN_S * (runs + warmup) * (1 + ops_timed)


def _seconds(limit: float) -> str:
    """``limit`` as the message shows it: ``0.2``, ``3``, ``1,234``."""
    return f"{limit:g}" if limit < 10 else f"{limit:,.0f}"


def map_parents_file_pages(parent: int) -> int:
    """In a forked child: map the pages of files (shared libraries, the model's memory map) that ``parent``
    has mapped; returns the bytes asked for (0 where this cannot be done).

    ``fork`` copies the page table entries of a process's private memory but not those of its file mappings
    that were never written (code, read-only data): the child faults them in again on first use, and they
    would count as RSS the model's load or first invoke added. Mapping them first (``MADV_POPULATE_READ``
    over the runs of pages present in the parent, read from ``/proc/PID/pagemap``) keeps the RSS figures
    what they were when the interpreter ran in the tool's own process. Best effort: any failure leaves
    the figures as the child sees them.
    """
    try:
        import ctypes
        import mmap

        import numpy as np

        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        madvise.argtypes, madvise.restype = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int
        page, populate_read, mapped = mmap.PAGESIZE, 22, 0  # MADV_POPULATE_READ (Linux 5.14)
        with open(f"/proc/{parent}/maps") as maps, open(f"/proc/{parent}/pagemap", "rb", buffering=0) as pagemap:
            for line in maps:
                fields = line.split(maxsplit=5)
                if len(fields) < 6 or not fields[5].startswith("/") or not fields[1].startswith("r"):
                    continue  # private memory (copied by fork), or no file, or not readable
                start, end = (int(x, 16) for x in fields[0].split("-"))
                pagemap.seek(start // page * 8)
                present = (np.frombuffer(pagemap.read((end - start) // page * 8), "<u8") >> 63).astype(np.int8)
                if not present.any():
                    continue
                edges = np.flatnonzero(np.diff(np.concatenate(([0], present, [0]))))
                for first, stop in zip(edges[::2].tolist(), edges[1::2].tolist()):
                    if madvise(start + first * page, (stop - first) * page, populate_read) == 0:
                        mapped += (stop - first) * page
        return mapped
    except Exception:  # noqa: BLE001 - an older kernel, no /proc: the figures as the child sees them
        return 0


_beat: list[Any] = []  # in the child: the pipe to the parent, until the first run is announced


def first_run_done() -> None:
    """Tell the parent, once, that the model's first run has ended (the harness calls this after its first
    invoke): from then on only the whole measurement's time limit applies. Outside a child, nothing."""
    if _beat:
        send = _beat.pop()
        try:
            send.send(("first", None))
        except Exception:  # noqa: BLE001 - the parent is gone: the result's send will say so
            pass


def _child(send: Any, fn: Callable[..., Any], args: tuple, parent: int | None) -> None:
    """In the child: run ``fn(*args)`` and send ``("ok", result)`` or ``("error", exception)`` (after
    ``("first", None)`` when :func:`first_run_done` is called)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it ends this process
    if parent is not None:
        map_parents_file_pages(parent)
    _beat[:] = [send]
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


def run_in_child(fn: Callable[..., Any], *args: Any, limit: float, what: str = "the measurement",
                 first: float | None = None) -> Any:
    """``fn(*args)`` run in a child process, its result returned (its exception raised) here.

    ``fn`` and ``args`` must be picklable where ``fork`` is unavailable (module-level functions).
    ``first``: seconds within which the child must announce the end of the model's first run
    (:func:`first_run_done`) or its result; None: ``limit`` alone.

    Raises:
        MeasurementTimeout: no result within ``limit`` seconds, or no first run within ``first`` (the child
            is killed).
        RuntimeUnavailableError: the child died without a result (a crash in the runtime's native code,
            the memory limit).
        KeyboardInterrupt: Ctrl-C while waiting (the child is killed first).
    """
    if not (limit > 0 and math.isfinite(limit)):
        raise ValueError(f"the time limit must be a positive number of seconds, got {limit!r}")
    import multiprocessing

    fork = "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    receive, send = ctx.Pipe(duplex=False)
    parent = os.getpid() if fork and sys.platform.startswith("linux") else None
    proc = ctx.Process(target=_child, args=(send, fn, args, parent), name="tflite_flops-measure")
    proc.start()
    send.close()  # the child holds the only writer: its death reads as EOF here
    start = time.monotonic()
    try:
        status, value = _receive(receive, proc, limit if first is None or first >= limit else first, what,
                                 None if first is None or first >= limit else first)
        if status == "first":
            status, value = _receive(receive, proc, max(limit - (time.monotonic() - start), 0.0), what, None,
                                     limit)
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


def _receive(receive: Any, proc: Any, wait: float, what: str, first: float | None,
             limit: float | None = None) -> tuple[str, Any]:
    """The child's next message within ``wait`` seconds; MeasurementTimeout past it (``first``: the wait was for
    the first run), RuntimeUnavailableError when the child died without one."""
    if not receive.poll(wait):
        if first is not None:
            raise MeasurementTimeout(f"{what} was stopped: the model's first run did not end within its time limit "
                                     f"of {_seconds(first)} s (a model that never ends, such as a WHILE whose "
                                     "condition stays true, or a slow one: give a longer limit with --time-limit "
                                     "SECONDS)")
        raise MeasurementTimeout(f"{what} did not finish within its time limit of {_seconds(limit or wait)} s and "
                                 "was stopped (a model that never ends, such as a WHILE whose condition stays "
                                 "true, or a slow one: raise the limit with --time-limit SECONDS)")
    try:
        return receive.recv()
    except (EOFError, OSError):
        proc.join(5)
        code = proc.exitcode
        how = (f"signal {-code}" if code is not None and code < 0 else f"exit status {code}")
        raise RuntimeUnavailableError(f"the runtime's process ended without a result ({how}) during {what}: "
                                      "a crash in the runtime or out of memory") from None

