"""The calibration suite times the op types and precisions real models ran on stand-in laws (issue 29): the
shape arithmetic around a computed RESHAPE (SHAPE, REDUCE_PROD, STRIDED_SLICE, CONCATENATION, PACK in int32),
a loop's scalar LESS / ADD / LOGICAL_AND, the int8 layer norm's SQUARED_DIFFERENCE and RSQRT and the int8
GELU on the builtin kernels, an LSTM's SPLIT and its GATHER of a time step. Each family has points in the full
and the quick suite, each point is one op that the analysis keys to that family's law, and a profile fitted on
them (timings injected: no clock) predicts those ops by their own law, not a stand-in."""

from __future__ import annotations

import collections

import pytest

from tflite_flops.latency.profile import BUILTIN_PLACEMENT as B, XNNPACK_PLACEMENT as X

# the law keys that Keras ConvNeXt, EfficientNet, MobileNetV3, the encoder, the ViT and the RNNs of
# benchmarks/predict_accuracy.py predicted by a stand-in law before these points
STANDIN_KEYS = (("SHAPE", "float32", B), ("SHAPE", "int8", B), ("REDUCE_PROD", "int32", B),
                ("STRIDED_SLICE", "int32", B), ("CONCATENATION", "int32", B), ("PACK", "int32", B),
                ("LESS", "int32", B), ("ADD", "int32", B), ("LOGICAL_AND", "bool", B), ("RESHAPE", "int32", B),
                ("SQUARED_DIFFERENCE", "int8", B), ("RSQRT", "int8", B), ("GELU", "int8", B),
                ("SPLIT", "float32", X), ("SPLIT", "float32", B), ("GATHER", "float32", B))


def _standin_points(quick: bool):
    """The suite's points of those keys' (op type, precision): all of them new with the keys."""
    from tflite_flops.latency.suite import suite

    pairs = {(op, prec) for op, prec, _ in STANDIN_KEYS}
    return [p for p in suite(quick) if (p.family, p.precision) in pairs]


@pytest.mark.parametrize("quick", [False, True])
def test_every_standin_family_has_suite_points(quick):
    from tflite_flops.latency.suite import (GATHER_STEPS, GATHERS, GELUS_INT8, LAYER_NORMS_INT8, SHAPE_OPS,
                                            SPLITS, suite)

    points = suite(quick)
    count = collections.Counter((p.family, p.precision) for p in points)
    for op, _, prec in SHAPE_OPS:
        assert count[op, prec] >= 1, (op, prec)
    for op in ("SQUARED_DIFFERENCE", "RSQRT", "GELU"):
        assert count[op, "int8"] >= 1, op
    assert count["SPLIT", "float32"] >= 1 and count["GATHER", "float32"] >= 1
    if not quick:  # every shape, with and without XNNPACK
        assert sum(count[op, prec] for op, prec in {(o, p) for o, _, p in SHAPE_OPS}) == 2 * len(SHAPE_OPS)
        assert count["SQUARED_DIFFERENCE", "int8"] == count["RSQRT", "int8"] == 2 * len(LAYER_NORMS_INT8)
        assert count["GELU", "int8"] >= 2 * len(GELUS_INT8) and count["SPLIT", "float32"] == 2 * len(SPLITS)
        assert count["GATHER", "float32"] == 2 * (len(GATHER_STEPS) + len(GATHERS))  # and the embedding lookups
    assert len({p.key for p in points}) == len(points)


@pytest.mark.slow
def test_standin_points_are_one_op_each_and_a_profile_fitted_on_them_has_their_own_laws():
    import ai_edge_litert  # noqa: F401  (the schema module the models are written with)

    from tflite_flops.latency.calibrate import analyse, build_profile
    from tflite_flops.latency.profile import Machine
    from tflite_flops.latency.suite import build
    from tflite_flops.measure import runtimes

    fb = runtimes.schema_module("litert")
    analysed, medians = [], {}
    for p in _standin_points(quick=False):
        a = analyse(p, build(fb, p))
        assert a.ops == 1, p.key
        analysed.append(a)
        f = a.features[0]
        medians[p.key] = 1.0 + 1e-3 * f.values["in"] + 1e-3 * f.values["out"]  # injected: no clock
    keys = collections.Counter(a.features[0].key for a in analysed)
    for key in STANDIN_KEYS:
        assert keys[key] >= 2, (key, keys)
    where = Machine(cpu="test cpu", cores=2, runtime="litert", runtime_version="9.9", threads=1, xnnpack=True)
    profile = build_profile(analysed, medians, where, "calibrate")
    for a in analysed:
        assert profile.fallback(a.features[0]) is None, a.point.key  # its own law, not a stand-in
