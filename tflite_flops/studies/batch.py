"""Analyze a model zoo at once: one summary row per model, in parallel worker processes.

A failure on one model (an unreadable file, a shape problem, a failed prediction, a crash of a
worker) is written in that model's row (``status = error``, ``error`` = the message) and does not
stop the rest. With a device profile (``BatchOptions.settings.predict``, ``batch --predict``), each row adds
``predicted_ms``, ``predicted_low_ms`` and ``predicted_high_ms`` (:data:`PREDICTED_COLUMNS`). With budget
limits (``BatchOptions.limits``, the options of ``analyze``: :mod:`tflite_flops.report.budget`), each row
adds ``budget`` (``ok``, ``exceeded``, or ``not checked`` for a model that could not be analysed) and
``budget_violations`` (:data:`BUDGET_COLUMNS`). ``BatchOptions.shapes`` gives a model its own input
shapes (``batch --shapes-file``, read by :func:`load_shapes_file`) in place of the shapes every model gets.
Rows come back in the order of the input paths, whatever order the workers finish in. The
renderers of the rows (table, csv, json, md) are in :mod:`tflite_flops.render.batch`.
"""

from __future__ import annotations

import glob
import json
import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..analysis import analyze_model
from ..errors import InputSpecError, TfliteFlopsError
from ..files import MiB, read_capped
from ..report.budget import check_budget
from ..report.columns import DELEGATE_FIELDS, total_columns
from ..report.columns import totals as column_totals
from ..report import summary
from ..report.completeness import partial_note
from ..settings import Settings

# The worker pool and the measurement modules are imported where they are used: every CLI run
# imports this module (the batch renderer reads COLUMNS), and a static analysis needs neither.

MODEL_SUFFIXES = (".tflite", ".lite", ".litertlm")


@dataclass(frozen=True)
class BatchOptions:
    """What every worker applies to its model (picklable): the analysis :class:`~tflite_flops.settings.Settings`
    (input shapes, batch and while trips of every model, threads, delegates; with the device profile the
    caller checked once, ``batch --predict``: each row's prediction), and to time each model in the
    runtime of ``settings.runtime``, the bench settings. ``limits``: the budget every model is checked
    against (keywords of :func:`tflite_flops.report.budget.check_budget`, parsed). ``shapes``: a model's
    own input shapes (its path as listed -> ``--input-shape`` specs), in place of ``settings.input_shapes``."""

    settings: Settings = field(default_factory=Settings)
    latency: Any = None  # a measure.bench.BenchSettings (runs, warm-up, min time, time limit): time every model
    limits: Mapping[str, Any] = field(default_factory=dict)
    shapes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)


def expand_sources(sources: Sequence[str]) -> list[str]:
    """Model paths from files, directories (every ``*.tflite`` and ``*.litertlm`` below, recursively) and globs.

    A file named explicitly is kept even when it does not exist or is not a model, so that its
    row reports the problem. Duplicates are dropped; order follows the arguments.

    Raises:
        InputSpecError: a directory or glob that matches no model.
    """
    paths: list[str] = []
    for src in sources:
        if os.path.isdir(src):
            found = sorted(os.path.join(root, f) for root, _, files in os.walk(src) for f in files
                           if f.lower().endswith(MODEL_SUFFIXES))
            if not found:
                raise InputSpecError(f"{src}: no .tflite or .litertlm files in this directory")
            paths += found
        elif any(c in src for c in "*?["):  # a glob pattern
            found = sorted(p for p in glob.glob(src, recursive=True) if os.path.isfile(p))
            if not found:
                raise InputSpecError(f"{src}: no file matches this pattern")
            paths += found
        else:
            paths.append(src)
    return list(dict.fromkeys(paths))


# The memory figures of a row, declared once (report/summary.py): the headline first, then the other arenas, each
# under its own name.
MEMORY_FIGURES = ("runtime_total_bytes", "runtime_arena_bytes", "builtin_total_bytes", "arena_bytes",
                  "tflm_arena_size_bytes")
# The row's columns, in output order: every row has them; the precisions with a FLOPs column of their own.
PRECISION_COLUMNS = ("float32", "float16", "int8", "int16", "hybrid")
_HEAD = (["model", "status", "error", "size_bytes", "sha256", "subgraphs", "operators", "macs", "flops"]
         + [f"flops_{p}" for p in PRECISION_COLUMNS] + ["flops_other", "params", "param_bytes", "bytes_read",
                                                        "bytes_written", "tflm_arena_bytes", *MEMORY_FIGURES,
                                                        "memory_target"])
_TAIL = ["unsupported_ops", "unresolved_ops", "warnings", "latency_median_ms", "latency_spread", "latency_cpu_share",
         "latency_noisy", "inferences_per_s", "latency_skipped", "seconds"]


def delegate_cells() -> dict[str, tuple[str, str]]:
    """Each declared delegate's per-model figures in a row: ``{column: (delegate, DelegatePlacement field)}``."""
    return {f"{d.key}_{attr}": (d.key, attr) for d in DELEGATE_FIELDS.values() for attr in d.batch}


def row_columns() -> list[str]:
    """The row's columns, in output order: the model's figures, each delegate's, the per-model figure of
    each declared per-op column that batch shows (:func:`tflite_flops.report.columns.total_columns`), the rest."""
    return _HEAD + list(delegate_cells()) + [c.total_name for c in total_columns("batch")] + _TAIL


COLUMNS = row_columns()  # as declared when the module loaded: columns() reads the declarations at each call
# With --predict only (the rows of a batch without it keep COLUMNS): the predicted latency and its range.
PREDICTED_COLUMNS = ("predicted_ms", "predicted_low_ms", "predicted_high_ms", "predicted_low_confidence_share",
                     "predicted_flags")


# With budget limits only: whether the model is within them, and the violated ones ("; "-separated).
BUDGET_COLUMNS = ("budget", "budget_violations")


def columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns of ``rows``: :data:`COLUMNS`, the predicted ones when any row was predicted, the budget's
    when the rows were checked against a budget."""
    return (row_columns() + (list(PREDICTED_COLUMNS) if any("predicted_ms" in r for r in rows) else [])
            + (list(BUDGET_COLUMNS) if any("budget" in r for r in rows) else []))


SHAPES_FILE_CAP = 4 * MiB  # a mapping of model names to a few shape strings each


def load_shapes_file(path: str, models: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The input shapes of each model from a JSON file: ``{"model.tflite": "image=1x224x224x3", ...}``.

    A key is a model's file name or its path as listed (``models``); a value is an ``--input-shape``
    spec or a list of them (``["a=1x64", "b=1x64"]``). Every key must name a listed model, and every
    spec must read as a shape: a typo fails here, before any model is analysed.

    Returns:
        ``{model path: specs}`` for the models the file names.

    Raises:
        InputSpecError: unreadable file, not a JSON object, a bad spec, a key that names no model or several.
    """
    from ..analysis.shapes import parse_shape_spec

    try:
        raw = read_capped(path, SHAPES_FILE_CAP)
    except OSError as exc:
        raise InputSpecError(f"--shapes-file {path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputSpecError(f"--shapes-file {path}: not a JSON object ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise InputSpecError(f"--shapes-file {path}: expected a JSON object mapping model names to input shapes")
    out: dict[str, tuple[str, ...]] = {}
    for key, value in data.items():
        specs = [value] if isinstance(value, str) else value
        if not isinstance(specs, list) or not specs or not all(isinstance(v, str) for v in specs):
            raise InputSpecError(f"--shapes-file {path}: {key!r}: expected an --input-shape spec or a list of "
                                 f"them, got {value!r}"[:300])
        try:
            parse_shape_spec(list(specs))
        except InputSpecError as exc:
            raise InputSpecError(f"--shapes-file {path}: {key!r}: {exc}") from None
        matches = [m for m in models if m == key] or [m for m in models if os.path.basename(m) == key]
        if not matches:
            raise InputSpecError(f"--shapes-file {path}: {key!r} names none of the models")
        if len(matches) > 1:
            raise InputSpecError(f"--shapes-file {path}: {key!r} names {len(matches)} models "
                                 f"({', '.join(matches[:3])}); give the path as listed")
        if matches[0] in out:
            raise InputSpecError(f"--shapes-file {path}: {matches[0]} is given twice")
        out[matches[0]] = tuple(specs)
    return out


def _error_row(path: str, message: str, seconds: float = 0.0, checked: bool = False) -> dict[str, Any]:
    """The row of a model that could not be analysed (``checked``: a budget was given, and could not be checked)."""
    # no predicted cells: columns() adds them from the predicted rows, and the renderers fill the rest with ''
    row: dict[str, Any] = {c: "" for c in row_columns()}
    row.update(model=path, status="error", error=message, seconds=round(seconds, 3))
    if checked:
        row.update(budget="not checked", budget_violations="")
    return row


def _predicted_cells(report: Any) -> dict[str, Any]:
    """The row's predicted latency, low and high ends, the share of it on low-confidence ops and the
    prediction's flags (';'-joined; '' when the report has no prediction)."""
    p = report.prediction
    cells = {c: "" if p is None else getattr(p, k)
             for c, k in zip(PREDICTED_COLUMNS, ("latency_ms", "low_ms", "high_ms", "low_confidence_share"))}
    cells["predicted_flags"] = "" if p is None else ";".join(p.flags)
    return cells


def analyze_one(path: str, options: BatchOptions) -> dict[str, Any]:
    """Analyze one model into a summary row; errors become the row's message (never raised)."""
    start = time.perf_counter()
    checked = bool(options.limits)
    settings = options.settings
    if path in options.shapes:  # the model's own shapes, in place of every model's
        settings = replace(settings, input_shapes=options.shapes[path])
    try:
        report = analyze_model(path, settings)
        if options.latency:
            from ..measure.pipeline import Measurements, measure_report

            what = Measurements(latency=True, runtime=options.settings.runtime, bench=options.latency)
            report = measure_report(report, path, what, progress=False)
        violations = check_budget(report, **options.limits) if checked else []
    except TfliteFlopsError as exc:
        return _error_row(path, str(exc), time.perf_counter() - start, checked)
    except Exception as exc:  # a bug of ours must not stop the zoo: report it in the row
        return _error_row(path, f"internal error ({type(exc).__name__}: {exc})", time.perf_counter() - start,
                          checked)
    t = report.totals
    by_prec = {p: v.get("flops", 0) for p, v in t.by_precision.items()}
    row: dict[str, Any] = {
        # partial: some ops not counted, or counted at unresolved (placeholder) shapes, e.g. a dynamic
        # model without --input-shape/--batch; "note" says which
        "model": path, "status": "ok" if t.complete else "partial", "error": "", "note": _row_note(report),
        "size_bytes": report.model.size_bytes, "sha256": report.model.sha256, "subgraphs": report.model.subgraphs,
        "operators": report.model.operators, "macs": t.macs, "flops": t.flops,
        **{f"flops_{p}": by_prec.get(p, 0) for p in PRECISION_COLUMNS},
        "flops_other": sum(v for p, v in by_prec.items() if p not in PRECISION_COLUMNS),
        "params": t.params, "param_bytes": t.param_bytes, "bytes_read": t.bytes_read, "bytes_written": t.bytes_written,
        "tflm_arena_bytes": report.memory.tflm_arena_bytes if report.memory is not None else "",
        **{key: "" if (v := summary.value(report, key)) is None else v for key in MEMORY_FIGURES},
        "memory_target": _get(report.memory, "target"),  # the CPU target of the LiteRT and XNNPACK figures
        **{name: getattr(report.delegation[key], attr) if key in report.delegation else ""
           for name, (key, attr) in delegate_cells().items()},
        **{name: "" if value is None else value for name, value in column_totals(report, "batch").items()},
        "unsupported_ops": sum(report.unsupported.values()), "unresolved_ops": t.unresolved_ops,
        "warnings": len(report.warnings), "latency_skipped": _get(report.latency, "skipped"),
        "latency_median_ms": _get(report.latency, "median_ms"),
        # how steady that median is, and why it is noisy (report/measured.py, noise): never gated on silently
        "latency_spread": _get(report.latency, "spread"), "latency_cpu_share": _get(report.latency, "cpu_share"),
        "latency_noisy": _get(report.latency, "noisy"),
        "inferences_per_s": _get(report.throughput, "inferences_per_s"),
        "seconds": round(time.perf_counter() - start, 3),
    }
    if options.settings.predict is not None:
        row.update(_predicted_cells(report))
    if checked:
        row.update(budget="exceeded" if violations else "ok", budget_violations="; ".join(violations))
    return row


def _get(record: Any, name: str) -> Any:
    """A measured figure of a row: '' when not measured (no record, or the field is None)."""
    value = getattr(record, name, None)
    return "" if value is None else value


def _row_note(report: Any) -> str:
    """Why a row is partial, has no latency or a partial prediction: one line, or ''."""
    skipped = report.latency.skipped if report.latency is not None else None
    p = report.prediction
    unpredicted = None
    if p is not None and not p.complete:
        unpredicted = ("prediction partial, left out: "
                       + ", ".join(f"{k} ×{v}" for k, v in p.ops_not_predicted.items()))
    return "; ".join(n for n in (partial_note(report), skipped and f"latency skipped: {skipped}", unpredicted) if n)


def shard(paths: Sequence[str], spec: str) -> list[str]:
    """The models of shard ``I/N`` (``spec``; 1 <= I <= N): every N-th model of ``paths`` from the I-th, so that N
    jobs (CI jobs, machines) given the same sources and ``--shard 1/N`` ... ``N/N`` analyse each model once.

    Raises:
        InputSpecError: ``spec`` is not ``I/N`` with 1 <= I <= N <= 100,000.
    """
    index, sep, count = spec.partition("/")
    if not (sep and index.isascii() and count.isascii() and index.isdigit() and count.isdigit()
            and len(index) <= 6 and len(count) <= 6 and 1 <= int(index) <= int(count) <= 100_000):
        raise InputSpecError(f"--shard {spec!r}: expected I/N with 1 <= I <= N <= 100,000 (e.g. 2/8)")
    return list(paths[int(index) - 1::int(count)])


JSONL_CAP = 256 * MiB  # a resumable log: ~1 KB a model, 100,000s of models


def read_done(path: str) -> dict[str, dict[str, Any]]:
    """The rows a resumable JSON Lines log (``--jsonl``) already holds, by model path: one JSON object a line, as
    :func:`run_batch` appends them; an error row is not kept (its model runs again), nor a last line the run
    was stopped in the middle of writing. Empty when the file does not exist.

    Raises:
        InputSpecError: not a regular file, over :data:`JSONL_CAP`, or a line that is not a row (names the line).
    """
    try:
        text = read_capped(path, JSONL_CAP, "r", encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InputSpecError(f"{path}: cannot read the batch log ({exc.strerror or exc})") from None
    lines = text.split("\n")
    done: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            if number == len(lines):  # the last line, cut by a stopped run: that model runs again
                continue
            raise InputSpecError(f"{path}: line {number} is not a batch row (JSON Lines, as --jsonl writes)") from None
        if not isinstance(row, dict) or not isinstance(row.get("model"), str) or row.get("status") not in \
                ("ok", "partial", "error"):
            raise InputSpecError(f"{path}: line {number} is not a batch row (no model path or status)")
        problem = _row_problem(row)
        if problem:
            raise InputSpecError(f"{path}: line {number}: {problem}")
        if row["status"] != "error":
            done[row["model"]] = row
    return done


# the figures every rendered row formats as numbers (render/batch.py): a count, never a string or a negative
_ROW_COUNTS = ("macs", "flops", "params", "param_bytes", "size_bytes")


def _row_problem(row: Mapping[str, Any]) -> str | None:
    """Why a row read back from a log cannot be shown (None: it can): every value a plain JSON scalar (a finite
    number, a string, a bool, null), and the counts the outputs format non-negative integers."""
    for key, value in row.items():
        if not (value is None or isinstance(value, (str, bool, int)) or
                (isinstance(value, float) and math.isfinite(value))):
            return f"{key!r} is not a plain value"
    if row["status"] != "error":
        for key in _ROW_COUNTS:
            value = row.get(key)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                return f"{key!r} is not a count (expected an integer >= 0, got {value!r:.40})"
    return None


def drop_cut_line(path: str) -> None:
    """Cut a resumable log back to its last whole line, before rows are appended to it: a run stopped in the middle
    of writing a line leaves a partial one (:func:`read_done` skips it), which the next row would otherwise join."""
    try:
        data = read_capped(path, JSONL_CAP)
    except FileNotFoundError:
        return
    if data and not data.endswith(b"\n"):
        os.truncate(path, data.rfind(b"\n") + 1)


def _refuse_constant(token: str) -> None:
    raise ValueError(f"{token} is not a number a batch row holds")


def run_batch(paths: Sequence[str], options: BatchOptions, jobs: int = 1,
              progress: Callable[[int, int, str], None] | None = None,
              on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Analyze every path (``jobs`` worker processes; 1 = in this process) and return rows in input order;
    ``on_row(row)`` as each one is done (``--jsonl``: the resumable log)."""
    rows: list[dict[str, Any] | None] = [None] * len(paths)
    done = 0
    if jobs <= 1 or len(paths) <= 1:
        for i, path in enumerate(paths):
            rows[i] = analyze_one(path, options)
            if on_row:
                on_row(rows[i])
            done += 1
            if progress:
                progress(done, len(paths), path)
        return [r for r in rows if r is not None]
    from concurrent.futures import Future, ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), initializer=_worker_signals) as pool, \
            _workers_end_with(pool):
        futures: dict[Future, int] = {pool.submit(analyze_one, p, options): i for i, p in enumerate(paths)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                rows[i] = fut.result()
            except BrokenProcessPool:
                rows[i] = _error_row(paths[i], "the worker process died (crash or out of memory)",
                                     checked=bool(options.limits))
            except Exception as exc:  # e.g. an unpicklable result
                rows[i] = _error_row(paths[i], f"worker error ({type(exc).__name__}: {exc})",
                                     checked=bool(options.limits))
            if on_row:
                on_row(rows[i])
            done += 1
            if progress:
                progress(done, len(paths), paths[i])
    return [r if r is not None else _error_row(p, "not analyzed", checked=bool(options.limits))
            for r, p in zip(rows, paths)]


def _worker_signals() -> None:
    """A worker leaves signals to the batch: Ctrl-C (sent to the whole process group) does not interrupt it
    with a traceback of its own, and SIGTERM ends it at once (the batch's handler is not inherited)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def _workers_end_with(pool: Any) -> Iterator[None]:
    """While the pool runs, Ctrl-C (SIGINT, exit status 130) and SIGTERM (143) end its workers with this
    process: an interrupted or terminated ``batch`` leaves no worker running on, and prints one line.
    Only where a handler can be set (the main thread).

    The process then ends at once (``os._exit``): the pool's own shutdown would wait on the queues of the
    workers just ended. Nothing is half-written: the rows are written only after the pool is done.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    parent = os.getpid()

    def terminate(signum: int, frame: Any) -> None:
        if os.getpid() != parent:  # a forked worker inherits the handler: it just ends
            os._exit(128 + signum)
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                process.terminate()
            except (OSError, ValueError, AttributeError):
                pass
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                process.join(5)
            except (OSError, ValueError, AttributeError, AssertionError):
                pass
        what = "interrupted" if signum == signal.SIGINT else f"terminated (signal {signum})"
        try:
            os.write(2, f"{chr(10) if os.isatty(2) else ''}error: {what}; the batch's workers were ended\n".encode())
        finally:
            os._exit(128 + signum)

    previous = {s: signal.signal(s, terminate) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)

