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

Malformed input is one :class:`~tflite_flops.errors.ModelFormatError` line. Files are read whole under
:data:`~tflite_flops.device.op_profile.DEVICE_FILE_CAP`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from ..errors import ModelFormatError
from ..report import LatencyStats
from .op_profile import read_profile_text

BENCHMARK_MODEL = "benchmark_model"
LITERT_BENCHMARK = "litert-benchmark"
LITERT_RESOLUTION_US = 10.0  # litert-benchmark rounds every time to 0.01 ms

_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_TIMINGS = re.compile(r"Inference timings in us:\s*Init:\s*" + _NUM + r",\s*First inference:\s*" + _NUM
                      + r",\s*Warmup \(avg\):\s*" + _NUM + r",\s*Inference \(avg\):\s*" + _NUM)
_COUNT = re.compile(r"\bcount=(\d+)((?:\s+[a-z0-9]+=\S+)*)")
_GRAPH = re.compile(r"\bGraph:\s*\[(.*)\]\s*$")
_THREADS = re.compile(r"\bNum threads:\s*\[(\d+)\]")  # LogParams, when --num_threads was given
_LITERT_BLOCK = "BENCHMARK RESULTS"
_LITERT_LINE = re.compile(r"^\s*(Model initialization|Warmup \(first\)|Warmup \(avg\)|Inference \((?:avg|min|max|median|"
                          r"std|p5|p95)\)):\s*" + _NUM + r"\s*ms(?:\s*\((\d+) runs\))?\s*$")


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


def _float(text: str, path: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ModelFormatError(f"{path}: {what} is not a time ({text!r})")
    return value


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
    text = data.decode("utf-8", errors="replace")
    if "Inference timings in us" in text:
        return _benchmark_log(text, path)
    if _LITERT_BLOCK in text:
        return _litert_stdout(text, path)
    raise ModelFormatError(f"{path}: no whole-model time found (expected benchmark_model's log or logcat with "
                           "'Inference timings in us', or litert-benchmark's --result_json or stdout)")


def read_timing(path: str) -> DeviceTiming:
    """:func:`parse_timing` of a file, read whole under the device files' cap."""
    return parse_timing(read_profile_text(path).encode("utf-8", errors="replace"), path)


def _benchmark_log(text: str, path: str) -> DeviceTiming:
    lines = text.splitlines()
    hits = [i for i, line in enumerate(lines) if "Inference timings in us" in line]
    last = hits[-1]
    m = _TIMINGS.search(lines[last])
    if m is None:
        raise ModelFormatError(f"{path}: line {last + 1}: a malformed 'Inference timings in us' line "
                               f"({lines[last].strip()[:120]!r})")
    init, first, warm, avg = (_float(g, path, name) for g, name in
                              zip(m.groups(), ("Init", "First inference", "Warmup (avg)", "Inference (avg)")))
    logcat = bool(re.match(r"^\s*\d\d-\d\d \d\d:\d\d:\d\d", lines[last]))
    # the timed runs' statistics: the last count= line before the result (the one before it is the warm-up's)
    start = hits[-2] + 1 if len(hits) > 1 else 0
    counts = [c for c in (_COUNT.search(line) for line in lines[start:last]) if c]
    stats: dict[str, str] = {}
    runs = warm_runs = None
    if counts:
        runs = int(counts[-1].group(1))
        stats = dict(kv.split("=", 1) for kv in counts[-1].group(2).split())
        if len(counts) > 1:
            warm_runs = int(counts[-2].group(1))

    def stat(key: str) -> float | None:
        if key not in stats:
            return None
        return _float(re.sub(r"\(.*$", "", stats[key]), path, key)

    graph = next((g.group(1).strip() for g in (_GRAPH.search(line) for line in reversed(lines[start:last])) if g), None)
    threads = next((int(n.group(1)) for n in (_THREADS.search(line) for line in reversed(lines[start:last])) if n), None)
    return DeviceTiming(BENCHMARK_MODEL, "logcat" if logcat else "log", avg, median_us=stat("median"),
                        min_us=stat("min"), max_us=stat("max"), std_us=stat("std"), runs=runs, warmup_runs=warm_runs,
                        init_us=init, first_us=first, warmup_avg_us=warm, graph=graph, threads=threads,
                        results=len(hits))


_XNNPACK_PARAM = re.compile(r"\bUse xnnpack:\s*\[(\w+)\]")


def split_results(text: str, path: str = "log") -> list[tuple[DeviceTiming, bool | None]]:
    """Every result of a log or logcat capture that holds several runs (a device farm's capture of the
    benchmark app run on many models), each with its own ``Graph: [...]`` and the XNNPACK setting it logged
    (``Use xnnpack: [1]``; None when the run did not log it). Empty when the text holds no result."""
    lines = text.splitlines()
    out: list[tuple[DeviceTiming, bool | None]] = []
    start = 0
    for i, line in enumerate(lines):
        if "Inference timings in us" not in line:
            continue
        block = lines[start:i + 1]
        flags = [m.group(1).lower() for m in (_XNNPACK_PARAM.search(b) for b in block) if m]
        xnnpack = flags[-1] in ("1", "true") if flags else None
        out.append((_benchmark_log("\n".join(block), path), xnnpack))
        start = i + 1
    return out


def _litert_json(data: bytes, path: str) -> DeviceTiming:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelFormatError(f"{path}: not valid JSON ({exc})") from None
    lat = doc.get("latency") if isinstance(doc, dict) else None
    if not isinstance(lat, dict) or lat.get("avg_ms") is None:
        raise ModelFormatError(f"{path}: JSON without latency.avg_ms (is it litert-benchmark's --result_json?)")

    def ms(key: str) -> float | None:
        value = lat.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ModelFormatError(f"{path}: latency.{key} is not a number ({value!r})")
        return _float(repr(float(value)), path, f"latency.{key}") * 1e3

    def count(key: str, where: Any = lat) -> int | None:
        value = where.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    model = doc.get("model")
    return DeviceTiming(LITERT_BENCHMARK, "json", ms("avg_ms") or 0.0, median_us=ms("median_ms"), min_us=ms("min_ms"),
                        max_us=ms("max_ms"), std_us=ms("std_ms"), runs=count("num_runs"),
                        warmup_runs=count("num_warmup_runs"), init_us=ms("init_ms"), first_us=ms("warmup_first_ms"),
                        warmup_avg_us=ms("warmup_avg_ms"), graph=model if isinstance(model, str) else None,
                        threads=count("num_threads", doc), resolution_us=LITERT_RESOLUTION_US)


def _litert_stdout(text: str, path: str) -> DeviceTiming:
    block = text[text.rindex(_LITERT_BLOCK):]
    values: dict[str, float] = {}
    runs: dict[str, int] = {}
    for line in block.splitlines():
        m = _LITERT_LINE.match(line)
        if m:
            values[m.group(1)] = _float(m.group(2), path, m.group(1)) * 1e3
            if m.group(3):
                runs[m.group(1)] = int(m.group(3))
    if "Inference (avg)" not in values:
        raise ModelFormatError(f"{path}: a litert-benchmark BENCHMARK RESULTS block without 'Inference (avg)'")
    g = values.get
    return DeviceTiming(LITERT_BENCHMARK, "stdout", values["Inference (avg)"], median_us=g("Inference (median)"),
                        min_us=g("Inference (min)"), max_us=g("Inference (max)"), std_us=g("Inference (std)"),
                        runs=runs.get("Inference (avg)"), warmup_runs=runs.get("Warmup (avg)"),
                        init_us=g("Model initialization"), first_us=g("Warmup (first)"),
                        warmup_avg_us=g("Warmup (avg)"), resolution_us=LITERT_RESOLUTION_US)


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
