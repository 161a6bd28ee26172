"""Ops a delegate sees alike share one decision (``analysis.placement._Alike``).

A placement rule is a pure function of its ``DelegateOp``: the op type, version and options, and each tensor as
the delegate sees it, where a tensor's index only tells two slots naming one tensor apart. So an op alike to one
already decided gets that decision without its rule being called: a chain of 100,000 identical ops calls each
delegate's rule once. Counted, never timed (tests/test_suite_rules.py): the rule calls stay the same however long
the chain, and the decisions are those of one rule call per op, on the samples and on crafted graphs whose ops
differ only in what a rule may read (one tensor in two slots, options, constants' values, the neighbours the GPU
rules look at, an unpacked weight).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from test_placement_gpu import Graph
from work_counter import count_calls

from tflite_flops.analysis import placement
from tflite_flops.analysis.placement import place_subgraph
from tflite_flops.ops.placement import GPU, XNNPACK, DelegateConfig
from tflite_flops.reader.load import load_model
from tflite_builder import ADD, build_model

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
CONFIGS = (DelegateConfig(), DelegateConfig(gpu_delegate="classic"))


@lru_cache(maxsize=None)
def chain(n: int) -> bytes:
    """``n`` ADDs, each adding its input to itself (tests/redteam_roundone.py's chain); built once a session."""
    tensors = [{"name": f"t{i}", "shape": [1, 4]} for i in range(n + 1)]
    ops = [{"opcode": 0, "inputs": [i, i], "outputs": [i + 1]} for i in range(n)]
    return build_model([{"tensors": tensors, "operators": ops, "inputs": [0], "outputs": [n]}], [ADD])


def _rule_calls(monkeypatch, model, delegate: str) -> int:
    calls = 0
    decide = placement.decide

    def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        return decide(*args, **kwargs)

    monkeypatch.setattr(placement, "decide", counted)
    try:
        place_subgraph(model, 0, delegate)
    finally:
        monkeypatch.setattr(placement, "decide", decide)
    return calls


@pytest.mark.parametrize("delegate,classes", [(XNNPACK, 1), (GPU, 3)])
def test_a_chain_of_alike_ops_calls_the_rule_once_per_class(monkeypatch, delegate, classes):
    # XNNPACK sees every ADD alike; the GPU delegate's tensors carry their neighbours, so the first ADD (its input
    # has no producer) and the last (its output no reader) differ from the ones between
    for n in (1_000, 4_000):
        model = load_model(chain(n))
        assert _rule_calls(monkeypatch, model, delegate) == classes, n
        p = place_subgraph(model, 0, delegate)
        assert all(r is None for r in p.reasons.values()) and len(p.reasons) == n


@pytest.mark.slow
def test_placing_a_chain_is_linear_in_its_ops():
    # the whole placement of both delegates (views, dependencies, decisions, partitions), counted in calls
    counts = []
    for n in (2_000, 4_000):
        model = load_model(chain(n))
        counts.append(count_calls(lambda: [place_subgraph(model, 0, d) for d in (XNNPACK, GPU)],
                                  limit=100 * n).calls)
    assert counts[1] <= 2.1 * counts[0], counts


def _unshared(monkeypatch):
    """Every op a class of its own: the rule is called for each op, as before the sharing."""
    key = placement._Alike.key
    monkeypatch.setattr(placement._Alike, "key", lambda self, *args: (object(), key(self, *args)))


def _decisions(model, config: DelegateConfig):
    out = []
    for index in range(len(model.subgraphs)):
        for delegate in (XNNPACK, GPU):
            p = place_subgraph(model, index, delegate, config)
            out.append((dict(p.reasons), p.partitions, p.subsets))
    return out


def _crafted() -> list[bytes]:
    """Ops alike but for one thing a rule may read."""
    models = []
    g = Graph()  # one tensor in both slots: ML Drift refuses SUB(p, p) and takes SUB(q, r), whose tensors p, q, r
    x = g.t((1, 8, 8, 4))  # are alike to the rule (each made by an ABS, read in two slots by SUBs)
    p, q, r = (g.t((1, 8, 8, 4)) for _ in range(3))
    for t in (p, q, r):
        g.op("ABS", [x], [t])
    for a, b in ((q, r), (p, p), (q, r)):
        g.op("SUB", [a, b], [g.t((1, 8, 8, 4))])
    models.append(g.build())
    g = Graph()  # options: a fused activation the GPU delegate refuses on one, not the other
    x = g.t((1, 8, 8, 4))
    for act in (0, 1, 0, 4, 2, 0):  # NONE, RELU, NONE, TANH, RELU_N1_TO_1, NONE
        out = g.t((1, 8, 8, 4))
        g.op("ADD", [x, x], [out], options=("AddOptions", {"fused_activation_function": act}))
        x = out
    models.append(g.build())
    g = Graph()  # constants' values: XNNPACK refuses a negative padding (the same shapes and types as a zero one)
    x = g.t((1, 8, 8, 4))
    for pads in ([[0, 0], [0, 0], [0, 0], [0, 0]], [[0, 0], [1, -1], [0, 0], [0, 0]], [[0, 0], [0, 0], [0, 0], [0, 0]]):
        out = g.t((1, 8, 8, 4))
        g.op("PAD", [x, g.t((4, 2), "INT32", pads)], [out])
        x = out
    models.append(g.build())
    g = Graph()  # neighbours: a comparison whose bool output one SELECT reads, or two readers
    x = g.t((1, 4))
    for readers in (1, 2, 1):
        c = g.t((1, 4), "BOOL")
        g.op("GREATER", [x, x], [c])
        for _ in range(readers):
            g.op("SELECT_V2", [c, x, x], [g.t((1, 4))])
    models.append(g.build())
    g = Graph()  # an fp16 weight unpacked at init: its output is quasi-static to the op reading it
    x = g.t((1, 16))
    for _ in range(3):
        w16 = g.t((8, 16), "FLOAT16", "ones")
        w = g.t((8, 16))
        g.op("DEQUANTIZE", [w16], [w])
        g.op("FULLY_CONNECTED", [x, w, -1], [g.t((1, 8))])
        g.op("FULLY_CONNECTED", [x, g.t((8, 16)), -1], [g.t((1, 8))])  # a computed weight: refused
    models.append(g.build())
    return models


@pytest.mark.parametrize("config", CONFIGS, ids=["ml_drift", "classic"])
def test_shared_decisions_are_each_ops_own(monkeypatch, config):
    models = [load_model(str(p)) for p in sorted(SAMPLES.glob("*.tflite"))]
    models += [load_model(data) for data in _crafted()]
    shared = [_decisions(m, config) for m in models]
    _unshared(monkeypatch)
    alone = [_decisions(m, config) for m in models]
    assert shared == alone
    if config.gpu_delegate == DelegateConfig().gpu_delegate:
        # each crafted graph has ops alike but for what it varies, which a rule tells apart (two decisions, not one)
        for model in shared[-len(_crafted()):]:
            assert any(len(set(reasons.values())) > 1 for reasons, _, _ in model)


def test_classes_tell_apart_what_equality_does_not():
    # -0.0 equals 0.0 and 1 equals True, but a reason may write them differently: each is a class of its own
    from tflite_flops.ops.placement import DelegateTensor
    from tflite_flops.reader.model import Quantization

    def view(index: int, scale: float) -> DelegateTensor:
        return DelegateTensor(index, "INT8", (1, 4), True, quantization=Quantization("per_tensor", 0, 1, scale, 0))

    alike = placement._Alike([view(0, 0.0), view(1, -0.0), view(2, 0.0), view(3, float("nan")), view(4, float("nan"))])
    assert alike.of[0] == alike.of[2] != alike.of[1]
    assert alike.of[3] == alike.of[4]  # two NaNs of the same bits: one class
    keys = [alike.key("ADD", 1, options, (0,), (2,)) for options in ({"a": 1}, {"a": True}, {"a": 1.0}, {"a": 1})]
    assert keys[0] == keys[3] and len({keys[0], keys[1], keys[2]}) == 3
