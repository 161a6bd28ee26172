"""The whole-model time a benchmark tool printed or wrote, read from the text and JSON that phones and
device farms return.

Three formats, told apart by their content:

* **benchmark_model's log** (its stdout, or an Android ``logcat`` capture of it or of the Android
  benchmark app, each line then prefixed like ``11-27 10:00:00.000  1234  1234 I tflite  : ``; newer
  versions prefix ``INFO: ``). ``BenchmarkLoggingListener::OnBenchmarkEnd``
  (``tflite/tools/benchmark/benchmark_model.cc``) logs, in microseconds::

      Inference timings in us: Init: 5685, First inference: 18535, Warmup (avg): 14462.3, Inference (avg): 14575.2

  (a C++ stream: large values come as ``1.24027e+06``). Before it, ``BenchmarkModel::Run`` logs the
  statistics of the warm-up runs, then of the timed runs, as ``count=50 first=… curr=… min=… max=…
  avg=… std=…`` (newer versions add ``p5=… median=… p95=…``), and ``LogParams`` the ``Graph: [path]``
  and the flags given (``Num threads: [4]``).
  The last "Inference timings" line of the file is read, with the ``count=`` line just before it.
* **litert-benchmark's JSON** (``--result_json``; the console script of the ai-edge-litert wheel,
  ``ai_edge_litert/tools/benchmark_litert_model.py``): ``{"model": path, "num_threads": n,
  "latency": {"init_ms", "warmup_first_ms", "warmup_avg_ms", "num_warmup_runs", "avg_ms", "min_ms",
  "max_ms", "median_ms", "std_ms", "p5_ms", "p95_ms", "num_runs"}, ...}``, every time in milliseconds
  rounded to 0.01 ms.
* **litert-benchmark's stdout**: its ``BENCHMARK RESULTS`` block (``Inference (avg):  0.02 ms (20
  runs)``, ``Inference (median):`` …), the same figures in milliseconds, also to 0.01 ms.

Malformed input is one :class:`~tflite_flops.errors.ModelFormatError` line naming the file and the field:
every time is a finite number of at least 0, every count an integer in range, and the
statistics consistent (:mod:`~tflite_flops.device.schema`). Text is read whole under
:data:`~tflite_flops.device.schema.TEXT_CAP` and :data:`~tflite_flops.device.schema.MAX_LINES` lines, JSON under
:data:`~tflite_flops.device.schema.JSON_CAP` and :data:`~tflite_flops.device.schema.JSON_MAX_DEPTH` levels; every
pattern is matched in time linear in its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..report import LatencyStats
from . import schema
from .op_profile import read_profile_text
from .schema import refuse

BENCHMARK_MODEL = "benchmark_model"
LITERT_BENCHMARK = "litert-benchmark"
LITERT_RESOLUTION_US = 10.0  # litert-benchmark rounds every time to 0.01 ms

# a number: each digit can be matched one way only (no ``\d+\.?\d*``, which backtracks quadratically on a
# long run of digits that is not followed by what the pattern wants)
_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
_TIMINGS = re.compile(r"Inference timings in us:\s*Init:\s*" + _NUM + r",\s*First inference:\s*" + _NUM
                      + r",\s*Warmup \(avg\):\s*" + _NUM + r",\s*Inference \(avg\):\s*" + _NUM)
_COUNT = re.compile(r"\bcount=(-?\d+)((?:[ \t]+[a-z0-9]+=[^\s=]*(?:=[^\s=]*)*)*)")  # one way to split "a=b=c"
_LITERT_BLOCK = "BENCHMARK RESULTS"
_LITERT_LINE = re.compile(r"^\s*(Model initialization|Warmup \(first\)|Warmup \(avg\)|"
                          r"Inference \((?:avg|min|max|median|std|p5|p95)\)):[ \t]*" + _NUM
                          + r"[ \t]*ms(?:[ \t]*\((-?\d+) runs\))?\s*$")


@dataclass(frozen=True)
class DeviceTiming:
    """What a benchmark tool measured of a whole model, in microseconds (None: the tool did not say)."""

    tool: str  # BENCHMARK_MODEL or LITERT_BENCHMARK
    form: str  # "log", "logcat", "json", "stdout"
    avg_us: float
    median_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    std_us: float | None = None
    runs: int | None = None
    warmup_runs: int | None = None
    init_us: float | None = None
    first_us: float | None = None
    warmup_avg_us: float | None = None
    graph: str | None = None  # the model path the tool named
    threads: int | None = None
    resolution_us: float = 1.0  # the step the tool rounded to
    results: int = 1  # how many results the file held (the last is read)

    @property
    def typical_us(self) -> float:
        """The median when the tool gave one, else the average: what a calibration point keeps."""
        return self.median_us if self.median_us is not None else self.avg_us


def _checked(t: DeviceTiming, path: str, names: dict[str, str]) -> DeviceTiming:
    """``t`` once each of its figures is in range: every time a finite number of at least 0 (0 is what a tool
    prints for a time below its resolution: the calibration skips such a run), the statistics consistent
    (``names``: the file's name of each field, for the error line)."""
    for attr in ("avg_us", "median_us", "min_us", "max_us", "std_us", "init_us", "first_us", "warmup_avg_us"):
        if getattr(t, attr) is not None:
            schema.time_value(getattr(t, attr), path, names[attr])
    schema.check_stats(path, {"min": t.min_us, "median": t.median_us, "avg": t.avg_us, "max": t.max_us})
    return t


def _threads(value: Any, path: str, what: str) -> int | None:
    """A thread count; -1 and 0 are the tools' "the default" (None: not known)."""
    n = schema.count(value, path, what, low=-1)
    return n if n > 0 else None


def _time(text: str, path: str, what: str) -> float:
    return schema.time_value(schema.number(text, path, what), path, what)


def is_timing_text(data: bytes) -> bool:
    """Whether ``data`` looks like one of the text or JSON forms read here (not a protocol buffer)."""
    head = data[:4096].lstrip()
    return (b"Inference timings in us" in data or _LITERT_BLOCK.encode() in data
            or (head.startswith(b"{") and b'"latency"' in data))


def parse_timing(data: bytes, path: str = "result") -> DeviceTiming:
    """The whole-model time in ``data`` (any of the three forms).

    Raises:
        ModelFormatError: none of the forms, or a form with a field that is not a time.
    """
    head = data[:4096].lstrip()
    if head.startswith(b"{"):
        return _litert_json(data, path)
    if len(data) > schema.TEXT_CAP:
        raise refuse(path, f"larger than {schema.TEXT_CAP >> 20} MiB, the most read from a benchmark log")
    text = data.decode("utf-8", errors="replace")
    if "Inference timings in us" in text:
        return _benchmark_log(text, path)
    if _LITERT_BLOCK in text:
        return _litert_stdout(text, path)
    raise refuse(path, "no whole-model time found (expected benchmark_model's log or logcat with "
                       "'Inference timings in us', or litert-benchmark's --result_json or stdout)")


def read_timing(path: str) -> DeviceTiming:
    """:func:`parse_timing` of a file, read whole under the device files' cap."""
    return parse_timing(read_profile_text(path).encode("utf-8", errors="replace"), path)


_MARK = "Inference timings in us"
_LOGCAT = re.compile(r"\s*\d\d-\d\d \d\d:\d\d:\d\d")
_LOG_NAMES = {"avg_us": "Inference (avg)", "median_us": "count= line's median", "min_us": "count= line's min",
              "max_us": "count= line's max", "std_us": "count= line's std", "init_us": "Init",
              "first_us": "First inference", "warmup_avg_us": "Warmup (avg)"}
MAX_RESULTS = 1 << 16  # results of one log or logcat capture (a device farm's capture of many runs)


def _benchmark_log(text: str, path: str) -> DeviceTiming:
    lines = schema.lines(text, path)
    return _log_result(lines, [i for i, line in enumerate(lines) if _MARK in line], path)


def _log_result(lines: list[str], hits: list[int], path: str, lo: int = 0) -> DeviceTiming:
    """The last result of ``lines``: ``hits`` are the indexes of its "Inference timings in us" lines (at least
    one), ``lo`` the first line of the capture's part that holds them."""
    last = hits[-1]
    m = _TIMINGS.search(lines[last])
    if m is None:
        raise refuse(path, f"line {last + 1}: a malformed 'Inference timings in us' line "
                           f"({schema.name(lines[last].strip()[:120])!r})")
    init, first, warm, avg = (_time(g, path, f"line {last + 1}: {name}") for g, name in
                              zip(m.groups(), ("Init", "First inference", "Warmup (avg)", "Inference (avg)")))
    logcat = bool(_LOGCAT.match(lines[last]))
    # the timed runs' statistics: the last count= line before the result (the one before it is the warm-up's)
    start = hits[-2] + 1 if len(hits) > 1 else lo
    counts: list[tuple[int, re.Match]] = []  # the last two, found from the result backwards
    for i in range(last - 1, start - 1, -1):
        c = _COUNT.search(lines[i]) if "count=" in lines[i] else None
        if c:
            counts.insert(0, (i, c))
            if len(counts) == 2:
                break
    stats: dict[str, str] = {}
    runs = warm_runs = None
    stats_line = 0
    if counts:
        stats_line, c = counts[-1]
        runs = schema.count(c.group(1), path, f"line {stats_line + 1}: count=")
        stats = dict(kv.split("=", 1) for kv in c.group(2).split())
        if len(counts) > 1:
            i, w = counts[-2]
            warm_runs = schema.count(w.group(1), path, f"line {i + 1}: count=")

    def stat(key: str) -> float | None:
        if key not in stats:
            return None
        value = stats[key]
        paren = value.find("(")
        return _time(value[:paren] if paren >= 0 else value, path, f"line {stats_line + 1}: {key}")

    graph = next((g for g in (schema.bracketed(lines[i], "Graph") for i in range(last - 1, start - 1, -1))
                  if g is not None), None)
    threads_text = next((t for t in (schema.bracketed(lines[i], "Num threads") for i in range(last - 1, start - 1, -1))
                         if t is not None), None)
    threads = None if threads_text is None else _threads(threads_text, path, "Num threads")
    timing = DeviceTiming(BENCHMARK_MODEL, "logcat" if logcat else "log", avg, median_us=stat("median"),
                          min_us=stat("min"), max_us=stat("max"), std_us=stat("std"), runs=runs, warmup_runs=warm_runs,
                          init_us=init, first_us=first, warmup_avg_us=warm,
                          graph=None if graph is None else schema.name(graph.strip()), threads=threads,
                          results=len(hits))
    return _checked(timing, path, {**_LOG_NAMES, "avg_us": f"line {last + 1}: Inference (avg)"})


_XNNPACK_PARAM = "Use xnnpack"


def split_results(text: str, path: str = "log") -> list[tuple[DeviceTiming, bool | None]]:
    """Every result of a log or logcat capture that holds several runs (a device farm's capture of the
    benchmark app run on many models), each with its own ``Graph: [...]`` and the XNNPACK setting it logged
    (``Use xnnpack: [1]``; None when the run did not log it). Empty when the text holds no result; refused
    above :data:`MAX_RESULTS` results."""
    lines = schema.lines(text, path)
    out: list[tuple[DeviceTiming, bool | None]] = []
    start = 0
    for i, line in enumerate(lines):
        if _MARK not in line:
            continue
        if len(out) >= MAX_RESULTS:
            raise refuse(path, f"more than {MAX_RESULTS:,} results in one capture (the most read)")
        flags = [f for f in (schema.bracketed(b, _XNNPACK_PARAM) for b in lines[start:i]) if f is not None]
        xnnpack = flags[-1].strip().lower() in ("1", "true") if flags else None
        timing = _log_result(lines, [i], path, lo=start)
        out.append((timing, xnnpack))
        start = i + 1
    return out


def _litert_json(data: bytes, path: str) -> DeviceTiming:
    doc = schema.load_json(data, path, "litert-benchmark's --result_json")
    lat = doc.get("latency") if isinstance(doc, dict) else None
    if not isinstance(lat, dict) or lat.get("avg_ms") is None:
        raise refuse(path, "JSON without latency.avg_ms (is it litert-benchmark's --result_json?)")

    def ms(key: str) -> float | None:
        value = lat.get(key)
        return None if value is None else schema.time_value(value, path, f"latency.{key}") * 1e3

    def count(key: str) -> int | None:
        value = lat.get(key)
        return None if value is None else schema.count(value, path, f"latency.{key}")

    model = doc.get("model")
    timing = DeviceTiming(LITERT_BENCHMARK, "json", ms("avg_ms") or 0.0, median_us=ms("median_ms"),
                          min_us=ms("min_ms"), max_us=ms("max_ms"), std_us=ms("std_ms"), runs=count("num_runs"),
                          warmup_runs=count("num_warmup_runs"), init_us=ms("init_ms"), first_us=ms("warmup_first_ms"),
                          warmup_avg_us=ms("warmup_avg_ms"),
                          graph=schema.name(model) if isinstance(model, str) else None,
                          threads=None if doc.get("num_threads") is None else _threads(doc["num_threads"], path,
                                                                                       "num_threads"),
                          resolution_us=LITERT_RESOLUTION_US)
    names = {"avg_us": "avg_ms", "median_us": "median_ms", "min_us": "min_ms", "max_us": "max_ms", "std_us": "std_ms",
             "init_us": "init_ms", "first_us": "warmup_first_ms", "warmup_avg_us": "warmup_avg_ms"}
    return _checked(timing, path, {k: f"latency.{v}" for k, v in names.items()})


_LITERT_NAMES = {"avg_us": "Inference (avg)", "median_us": "Inference (median)", "min_us": "Inference (min)",
                 "max_us": "Inference (max)", "std_us": "Inference (std)", "init_us": "Model initialization",
                 "first_us": "Warmup (first)", "warmup_avg_us": "Warmup (avg)"}


def _litert_stdout(text: str, path: str) -> DeviceTiming:
    block = text[text.rindex(_LITERT_BLOCK):]
    values: dict[str, float] = {}
    runs: dict[str, int] = {}
    for line in schema.lines(block, path):
        m = _LITERT_LINE.match(line)
        if m:
            values[m.group(1)] = _time(m.group(2), path, m.group(1)) * 1e3
            if m.group(3):
                runs[m.group(1)] = schema.count(m.group(3), path, f"{m.group(1)} runs")
    if "Inference (avg)" not in values:
        raise refuse(path, "a litert-benchmark BENCHMARK RESULTS block without 'Inference (avg)'")
    g = values.get
    timing = DeviceTiming(LITERT_BENCHMARK, "stdout", values["Inference (avg)"], median_us=g("Inference (median)"),
                          min_us=g("Inference (min)"), max_us=g("Inference (max)"), std_us=g("Inference (std)"),
                          runs=runs.get("Inference (avg)"), warmup_runs=runs.get("Warmup (avg)"),
                          init_us=g("Model initialization"), first_us=g("Warmup (first)"),
                          warmup_avg_us=g("Warmup (avg)"), resolution_us=LITERT_RESOLUTION_US)
    return _checked(timing, path, _LITERT_NAMES)


def timing_latency(t: DeviceTiming, path: str) -> LatencyStats:
    """The timing as a report's :class:`LatencyStats` (milliseconds), as ``import-profile --result`` joins it."""

    def ms(us: float | None) -> float | None:
        return None if us is None else round(us / 1e3, 6)

    extra: dict[str, Any] = {"format": f"{t.tool} {t.form}"}
    if t.warmup_avg_us is not None:
        extra["average_warm_up_ms"] = ms(t.warmup_avg_us)
    if t.resolution_us > 1.0:
        extra["resolution_ms"] = ms(t.resolution_us)
    if t.results > 1:
        extra["results_in_file"] = t.results
    mean, std = ms(t.avg_us), ms(t.std_us)
    return LatencyStats(runtime=f"{t.tool} (device)", threads=t.threads, runs=t.runs, warmup=t.warmup_runs,
                        init_ms=ms(t.init_us), first_ms=ms(t.first_us), mean_ms=mean, std_ms=std, min_ms=ms(t.min_us),
                        median_ms=ms(t.median_us), max_ms=ms(t.max_us),
                        cv=round(std / mean, 6) if mean and std is not None else None,
                        method=f"device result {path} ({t.tool} {t.form}"
                               + (f", the last of {t.results} results" if t.results > 1 else "") + ")",
                        extra=extra)
