"""benchmarks/law_coverage.py's random configurations: inside their bounds, and each written model is the op it
claims (its MACs, from the analysis, equal the configuration's, written here as arithmetic). No timing."""

from __future__ import annotations

import random

import pytest

from bench_module import bench_module


@pytest.fixture(scope="module")
def bench():
    with bench_module("law_coverage.py", "law_coverage_bench") as module:
        yield module


def test_draws_stay_in_their_bounds_and_cover_each_family(bench):
    rng = random.Random(1)
    for family in bench.FAMILIES:
        for precision in bench.PRECISIONS:
            got = [s for s in (bench.draw(rng, family, precision) for _ in range(200)) if s is not None]
            assert len(got) > 50
            for s in got:
                assert bench.MIN_MACS <= s.macs <= bench.MAX_MACS and s.weight_bytes <= bench.MAX_WEIGHTS
            if family == "conv1d":
                assert all(s.config["h"] == 1 and s.config["kh"] == 1 and s.config["kw"] >= 3 for s in got)


def test_each_written_model_is_the_op_its_configuration_says(bench, tmp_path):
    import tflite_flops
    from tflite_flops.latency.suite import SuitePoint, build
    from tflite_flops.measure import runtimes

    fb = runtimes.schema_module("litert")
    cases = {
        # (family, precision, config): MACs by hand
        ("conv", "float32", (("h", 9), ("w", 9), ("cin", 16), ("cout", 24), ("kh", 3), ("kw", 3), ("s", 2))):
            5 * 5 * 24 * 3 * 3 * 16,
        ("conv1d", "int8", (("h", 1), ("w", 100), ("cin", 32), ("cout", 40), ("kh", 1), ("kw", 9), ("s", 1))):
            100 * 40 * 9 * 32,
        ("depthwise", "hybrid", (("h", 20), ("c", 64), ("k", 5), ("s", 1))): 20 * 20 * 64 * 5 * 5,
        ("fc", "int8", (("m", 1), ("k", 300), ("n", 70))): 300 * 70,
    }
    for (family, precision, config), macs in cases.items():
        sample = bench.Sample(family, precision, dict(config), macs, 0)
        path = tmp_path / f"{sample.name}.tflite"
        path.write_bytes(build(fb, SuitePoint(sample.name, family, precision, True, False, bench.make(sample))))
        report = tflite_flops.analyze(str(path))
        assert report.totals.macs == macs, sample.name
