"""Coverage-guided fuzzing of the readers of device files with atheris (libFuzzer for Python): benchmark_model's
logs, litert-benchmark's JSON and stdout, op profiles as text or CSV, and the ModelRuntimeDetails,
BenchmarkResult and BenchmarkProfilingData protos.

The first byte of an input picks the reader, the rest is the file. Every input must either read or raise
``TfliteFlopsError`` (one line); anything else escaping is a crash that libFuzzer reports and saves as
``crash-<sha1>``. Hangs are reported by libFuzzer's ``-timeout``, memory by ``-rss_limit_mb``.

    pip install atheris
    python fuzz/fuzz_device.py --seed fuzz/corpus-device     # the recorded outputs of tests/fixtures
    python fuzz/fuzz_device.py fuzz/corpus-device -timeout=5 -rss_limit_mb=2048 -max_total_time=3600

See fuzz/README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["tflite_flops.device"]):
    from tflite_flops.device import benchmark_protos, schema
    from tflite_flops.device.benchmark_logs import parse_timing, split_results
    from tflite_flops.device.op_profile import parse_profile, profile_graph
    from tflite_flops.errors import TfliteFlopsError

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


READERS = [
    lambda d: parse_timing(d, "result"),
    lambda d: split_results(_text(d), "log"),
    lambda d: (parse_profile(_text(d), "profile"), profile_graph(_text(d))),
    lambda d: benchmark_protos.parse_runtime_details(d, "runtime info"),
    lambda d: benchmark_protos.parse_benchmark_result(d, "result"),
    lambda d: benchmark_protos.parse_profile_proto(d, "profile"),
    lambda d: schema.load_json(d, "result", "a result"),
]


def test_one_input(data: bytes) -> None:
    """One libFuzzer iteration: the reader the first byte names, on the rest."""
    if not data:
        return
    reader = READERS[data[0] % len(READERS)]
    try:
        reader(data[1:])
    except TfliteFlopsError as exc:
        assert "\n" not in str(exc), str(exc)  # one line


def seed(folder: str) -> int:
    """Write the recorded outputs of tests/fixtures into ``folder``, each prefixed by the readers it fits."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    picks = {"benchmark_model_op_profile.txt": (2,), "benchmark_model_op_profile.csv": (2,),
             "phone/benchmark_model_cnn_float.log": (0, 1), "phone/logcat_benchmark_app_cnn_float.txt": (0, 1),
             "phone/litert_benchmark_cnn_float.json": (0, 6), "phone/litert_benchmark_cnn_float.txt": (0,),
             "phone/benchmark_model_cnn_float.csv": (2,)}
    n = 0
    for name, readers in picks.items():
        data = (FIXTURES / name).read_bytes()
        for r in readers:
            (target / f"{r}-{name.replace('/', '-')}").write_bytes(bytes([r]) + data)
            n += 1
    # a BenchmarkResult in protobuf's wire format (LatencyMetrics avg 1, min 2, max 3, median 5; MiscMetrics runs 2)
    latency = b"".join(bytes([n << 3 | 5]) + __import__("struct").pack("<f", v)
                       for n, v in ((1, 2.5), (2, 2.0), (3, 4.0), (5, 2.25)))
    result = b"\x0a\x06pixel8" + b"\x12" + bytes([len(latency)]) + latency + b"\x22\x02\x10\x32"
    (target / "4-result.pb").write_bytes(b"\x04" + result)
    # a ModelRuntimeDetails: one subgraph, two nodes, one DELEGATE node that replaced node 0
    nodes = b"\x1a\x07\x08\x00\x12\x03ADD" + b"\x1a\x0a\x08\x01\x12\x06CONCAT" \
        + b"\x1a\x0c\x08\x02\x42\x08\x0a\x04XNNP\x12\x00"
    (target / "3-runtime.pb").write_bytes(b"\x03" + b"\x12" + bytes([len(nodes)]) + nodes)
    print(f"{n + 2} files in {target}")
    return 0


def main() -> None:
    """Entry point: libFuzzer options and corpus directories come from the command line (``--seed DIR`` writes
    the seeds)."""
    if len(sys.argv) == 3 and sys.argv[1] == "--seed":
        sys.exit(seed(sys.argv[2]))
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
