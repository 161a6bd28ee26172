"""What the real-family benchmark's dynamic-range MobileNets and Keras RNNs needed (docs/notes/predict-hybrid-rnn.md).

A builtin op run right after one of XNNPACK's dynamically quantized (qd8) kernels has its own law.

In a dynamic-range MobileNet every builtin hybrid DEPTHWISE_CONV_2D runs right after a delegated hybrid
CONV_2D, and takes about 2.9x as long there as alone (docs/notes/predict-hybrid-rnn.md). The suite times
those depthwise points once more after a tiny qd8 FULLY_CONNECTED (the lead), calibration takes the lead's
time out and fits the law of AFTER_QD8_PLACEMENT, and the prediction uses it for the ops in that position.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tflite_flops.latency.calibrate import Analysed, samples_of
from tflite_flops.latency.predict import predict_ops
from tflite_flops.latency.profile import (AFTER_QD8_PLACEMENT, BUILTIN_PLACEMENT, XNNPACK_AFTER_QD8_PLACEMENT,
                                          XNNPACK_PLACEMENT, DeviceProfile, Law, Machine, OpFeatures)
from tflite_flops.latency.suite import AFTER_QD8_OPS, DEPTHWISES, OVERHEAD, PRECISIONS, RNN_FCS, SuitePoint, suite


def test_every_hybrid_depthwise_point_is_timed_once_more_after_its_lead_in_an_xnnpack_suite():
    for quick in (False, True):
        points = suite(quick)
        keys = {p.key for p in points}
        led = [p for p in points if p.lead]
        assert {(p.family, p.precision) for p in led} == set(AFTER_QD8_OPS)
        assert all(p.delegate and p.id.endswith("-after-qd8") for p in led)
        assert all(p.lead in keys for p in led)  # the lead is a point of the suite: its time is taken out
        plain = [p for p in points if (p.family, p.precision) in AFTER_QD8_OPS and not p.lead]
        assert len(plain) == 2 * len(led)  # the points timed alone stay, with and without the delegate
        if not quick:
            assert len([p for p in led if p.family == "DEPTHWISE_CONV_2D"]) == len(DEPTHWISES) == 23
    assert not [p for p in suite(False, xnnpack=False) if p.lead]  # without XNNPACK no qd8 kernel runs


def _features(family: str, precision: str, placement: str, **values: float) -> OpFeatures:
    return OpFeatures(family, precision, placement, {"1": 1.0, **values})


def test_calibration_takes_the_leads_time_out_and_fits_the_after_qd8_placement():
    make = suite()[0].make
    lead = SuitePoint("lead", "FULLY_CONNECTED", "hybrid", True, True, make)
    dw = SuitePoint("dw-after-qd8", "DEPTHWISE_CONV_2D", "hybrid", True, True, make, lead.key)
    chains = [SuitePoint(f"{OVERHEAD}-add{n}", OVERHEAD, "float32", d, True, make) for n in (1, 2) for d in (True, False)]
    fc = _features("FULLY_CONNECTED", "hybrid", XNNPACK_PLACEMENT, macs=160.0)
    conv = _features("DEPTHWISE_CONV_2D", "hybrid", BUILTIN_PLACEMENT, macs=1000.0)
    analysed = [Analysed(lead, (fc,), 1, 1, (1,), ()), Analysed(dw, (fc, conv), 1, 2, (1, 1), ())]
    # chains of n ops: 1 us per invoke, 2 us per partition, 0.5 us per op with XNNPACK and without
    analysed += [Analysed(c, (fc,) * int(c.id[-1]), 1 if c.delegate else 0, int(c.id[-1]), (), ()) for c in chains]
    medians = {c.key: 1.0 + (2.0 if c.delegate else 0.0) + 0.5 * int(c.id[-1]) for c in chains}
    medians[lead.key], medians[dw.key] = 1.0 + 2.0 + 4.0, 1.0 + 2.0 + 4.0 + 30.0
    samples, invoke_us, partition_us = samples_of(analysed, medians)
    assert abs(invoke_us - 1.0) < 1e-6 and abs(partition_us - 2.0) < 1e-6
    (after,) = [s for s in samples if s.features.family == "DEPTHWISE_CONV_2D"]
    assert after.features.placement == AFTER_QD8_PLACEMENT
    assert abs((after.measured_us - after.overhead_us) - 30.0) < 1e-6  # the lead's 4 us and the overheads out
    # a led point whose lead was not timed gives no sample
    del medians[lead.key]
    assert not [s for s in samples_of(analysed, medians)[0] if s.features.family == "DEPTHWISE_CONV_2D"]


def _op(index: int, op_type: str, precision: str, xnnpack: bool, partition: int | None = None) -> SimpleNamespace:
    return SimpleNamespace(op_type=op_type, precision=precision, phase="inference", subgraph=0, index=index,
                           xnnpack=xnnpack, xnnpack_partition=partition, executions=1, status="ok", macs=1000,
                           flops=2000, bytes_read=0, bytes_written=0, params=0, inputs=(), outputs=())


def _law(family: str, precision: str, placement: str, one: float) -> Law:
    return Law(family, precision, placement, {"1": one}, log_low=-0.1, log_high=0.1, points=10)


def _profile(*laws: Law) -> DeviceProfile:
    machine = Machine("test cpu", 2, "ai_edge_litert", "0", 1, True)
    return DeviceProfile(machine, laws, invoke_overhead_us=0.0, partition_overhead_us=0.0)


def test_a_builtin_op_right_after_a_qd8_kernel_is_predicted_by_the_after_qd8_law():
    laws = (_law("CONV_2D", "hybrid", XNNPACK_PLACEMENT, 10.0), _law("CONV_2D", "float32", XNNPACK_PLACEMENT, 10.0),
            _law("DEPTHWISE_CONV_2D", "hybrid", BUILTIN_PLACEMENT, 100.0),
            _law("DEPTHWISE_CONV_2D", "hybrid", AFTER_QD8_PLACEMENT, 290.0),
            _law("HARD_SWISH", "float32", XNNPACK_PLACEMENT, 1.0), _law("MEAN", "float32", BUILTIN_PLACEMENT, 1.0))
    ops = [_op(0, "CONV_2D", "hybrid", True, 0), _op(1, "DEPTHWISE_CONV_2D", "hybrid", False),  # after qd8
           # after a builtin op that paid for the qd8 state and kept it (timed: two hybrid depthwise ops of
           # 32x32x128 after the lead, 531 and 526 us; alone 185 and 182)
           _op(2, "DEPTHWISE_CONV_2D", "hybrid", False),
           _op(3, "MEAN", "float32", False), _op(4, "DEPTHWISE_CONV_2D", "hybrid", False),  # after a kernel that
           # has no law after qd8: it cleared the state
           _op(5, "CONV_2D", "float32", True, 1), _op(6, "DEPTHWISE_CONV_2D", "hybrid", False),  # after an f32 kernel
           _op(7, "CONV_2D", "hybrid", True, 2), _op(8, "HARD_SWISH", "float32", True, 2),
           _op(9, "DEPTHWISE_CONV_2D", "hybrid", False),  # after the qd8 conv's activation: a kernel of its own
           _op(10, "CONV_2D", "hybrid", True, 3), _op(11, "RELU", "float32", True, 3),
           _op(12, "DEPTHWISE_CONV_2D", "hybrid", False)]  # the RELU is folded into the qd8 conv: after qd8
    fused = {(0, 11): "CONV_2D"}
    p = predict_ops(ops, _profile(*laws), fused)
    us = {i: round(p.predicted_ms[(0, i)] * 1000.0, 6) for i in (1, 2, 4, 6, 9, 12)}
    assert us == {1: 290.0, 2: 290.0, 4: 100.0, 6: 100.0, 9: 100.0, 12: 290.0}
    assert p.fallback_ops == 0
    # a profile without the after-qd8 law (calibrated before it existed) predicts those ops by their builtin law
    old = predict_ops(ops, _profile(*(law for law in laws if law.placement != AFTER_QD8_PLACEMENT)), fused)
    assert round(old.predicted_ms[(0, 1)] * 1000.0, 6) == 100.0 and old.fallback_ops == 0


def test_only_the_qd8_gemm_kernel_leaves_the_state_behind():
    # timed here (x86-avx512): the builtin hybrid 3x3 depthwise on 25x25x64 takes 58.5 us alone, 167 after a qd8
    # FULLY_CONNECTED or 1x1 convolution (XNNPACK's qd8 GEMM), 59 after a qd8 3x3 convolution (its IGEMM kernel)
    laws = (_law("CONV_2D", "hybrid", XNNPACK_PLACEMENT, 10.0), _law("FULLY_CONNECTED", "hybrid", XNNPACK_PLACEMENT, 1.0),
            _law("DEPTHWISE_CONV_2D", "hybrid", BUILTIN_PLACEMENT, 100.0),
            _law("DEPTHWISE_CONV_2D", "hybrid", AFTER_QD8_PLACEMENT, 290.0))
    machine = Machine("test cpu", 2, "ai_edge_litert", "0", 1, True, target="x86-avx512")
    profile = DeviceProfile(machine, laws, invoke_overhead_us=0.0, partition_overhead_us=0.0)

    def conv(index: int, k: int) -> SimpleNamespace:
        return SimpleNamespace(**{**vars(_op(index, "CONV_2D", "hybrid", True, index)),
                                  "inputs": ((1, 8, 8, 16), (16, k, k, 16), (16,)), "outputs": ((1, 8, 8, 16),)})

    fc = SimpleNamespace(**{**vars(_op(4, "FULLY_CONNECTED", "hybrid", True, 4)),
                            "inputs": ((1, 16), (10, 16), (10,)), "outputs": ((1, 10),)})
    ops = [conv(0, 3), _op(1, "DEPTHWISE_CONV_2D", "hybrid", False),
           conv(2, 1), _op(3, "DEPTHWISE_CONV_2D", "hybrid", False),
           fc, _op(5, "DEPTHWISE_CONV_2D", "hybrid", False)]
    p = predict_ops(ops, profile, {})
    assert {i: round(p.predicted_ms[(0, i)] * 1000.0, 6) for i in (1, 3, 5)} == {1: 100.0, 3: 290.0, 5: 290.0}
    # a profile without a CPU target (an earlier version's) keeps the rule it was made with: every qd8 op
    untargeted = predict_ops(ops, _profile(*laws), {})
    assert round(untargeted.predicted_ms[(0, 1)] * 1000.0, 6) == 290.0


def test_an_xnnpack_kernel_that_pays_for_the_qd8_state_has_its_own_law_after_one_and_keeps_the_state():
    # timed here (x86-avx512, float32, the lead a [1,16]x[10,16] qd8 FULLY_CONNECTED): a 2x2 MAX_POOL_2D of
    # 64x64x32 13.6 us alone, 28.2 after the lead; then a 2x RESIZE_BILINEAR of its output 24.6 alone, 79 after
    # both; with an ADD between the lead and the pool, the pool 13.6 (the ADD's kernel clears the state)
    laws = (_law("CONV_2D", "hybrid", XNNPACK_PLACEMENT, 10.0),
            _law("MAX_POOL_2D", "float32", XNNPACK_PLACEMENT, 13.6),
            _law("MAX_POOL_2D", "float32", XNNPACK_AFTER_QD8_PLACEMENT, 28.2),
            _law("RESIZE_BILINEAR", "float32", XNNPACK_PLACEMENT, 24.6),
            _law("RESIZE_BILINEAR", "float32", XNNPACK_AFTER_QD8_PLACEMENT, 79.0),
            _law("ADD", "float32", XNNPACK_PLACEMENT, 2.0))
    ops = [_op(0, "CONV_2D", "hybrid", True, 0), _op(1, "MAX_POOL_2D", "float32", True, 0),
           _op(2, "RESIZE_BILINEAR", "float32", True, 0), _op(3, "ADD", "float32", True, 0),
           _op(4, "MAX_POOL_2D", "float32", True, 0), _op(5, "CONV_2D", "hybrid", True, 0),
           _op(6, "ADD", "float32", True, 0), _op(7, "RESIZE_BILINEAR", "float32", True, 0)]
    p = predict_ops(ops, _profile(*laws), {})
    us = {i: round(p.predicted_ms[(0, i)] * 1000.0, 6) for i in range(1, 8) if i != 5}
    assert us == {1: 28.2, 2: 79.0, 3: 2.0, 4: 13.6, 6: 2.0, 7: 24.6}
    assert p.fallback_ops == 0
    # without those laws (a profile calibrated before them) the XNNPACK laws predict every op, none flagged
    old = predict_ops(ops, _profile(*(law for law in laws if law.placement == XNNPACK_PLACEMENT)), {})
    assert round(old.predicted_ms[(0, 2)] * 1000.0, 6) == 24.6 and old.fallback_ops == 0


def test_the_suite_times_the_gate_matmuls_of_rnn_cells_in_every_precision_with_and_without_the_delegate():
    ids = {p.key for p in suite()}
    for prec in PRECISIONS:
        for m, k, n in RNN_FCS:
            for where in ("x", "b"):
                assert f"FULLY_CONNECTED-{prec}-{m}-{k}-{n}-NONE@{where}" in ids
    assert len(RNN_FCS) == 4
    rnn = [p for p in suite(True) if p.family == "FULLY_CONNECTED" and p.id.endswith("-NONE") and
           any(p.id.endswith(f"-{m}-{k}-{n}-NONE") for m, k, n in RNN_FCS)]
    assert len(rnn) == 2 * 2 * len(PRECISIONS)  # --quick keeps two of the four shapes, timed both ways


def test_a_loop_variable_the_body_passes_through_is_not_counted_as_copied(samples_dir):
    from tflite_flops.analysis import analyze_model
    from tflite_flops.latency.predict import while_passthrough, while_trips
    from tflite_flops.latency.features import op_features
    from tflite_flops.reader.load import load_model

    model = load_model(str(samples_dir / "lstm.tflite"))
    report = analyze_model(model)
    trips, passed = while_trips(model, report.ops), while_passthrough(model, report.ops)
    loops = [o for o in report.ops if (o.subgraph, o.index) in trips]
    assert len(loops) == 2 and set(passed) <= set(trips)
    counted = 0
    for o in loops:
        key = (o.subgraph, o.index)
        body = model.subgraphs[model.subgraphs[o.subgraph].operators[o.index].subgraph_refs["body_subgraph_index"]]
        same = [j for j, (x, y) in enumerate(zip(body.inputs, body.outputs)) if x == y]
        expected = sum(int(np.prod(o.inputs[j])) for j in same)
        assert passed.get(key, 0) == expected
        counted += bool(same)
        every = sum(int(np.prod(s)) for s in o.inputs)
        f = op_features(o, BUILTIN_PLACEMENT, trips[key], passed=passed.get(key, 0))
        assert f.values["copied"] == trips[key] * (every - expected)
    assert counted == 2  # each layer's loop passes its input sequence through
