"""Where the ops run: the partitioning algorithm by hand, the report's placement fields in every
format, the gates, and compare's placement changes.

The placement itself is checked against LiteRT's own plan in tests/test_placement_xnnpack.py.
"""

from __future__ import annotations

import csv
import io
import json
from typing import NamedTuple

import pytest

import tflite_flops
from tflite_flops.analysis.placement import partition
from tflite_flops.ops.placement import (CATEGORIES, XNNPACK, DelegateOp, DelegateTensor, category_of, decide,
                                        placed_op_types, placement_rule, register_placement)
from tflite_flops.report import Report
from tflite_flops.report.budget import check_budget
from tflite_flops.report.compare import compare_reports
from tflite_flops.render import render

import cli_process


class _Op(NamedTuple):
    index: int
    op_type: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


class _Tensor(NamedTuple):
    index: int
    dtype: str = "FLOAT32"


class _Subgraph(NamedTuple):
    index: int
    operators: tuple[_Op, ...]
    tensors: tuple[_Tensor, ...]
    outputs: tuple[int, ...]


def _graph(*ops: tuple[str, tuple[int, ...], tuple[int, ...]], outputs=(), resource=()) -> _Subgraph:
    n = 1 + max(t for _, i, o in ops for t in (*i, *o))
    tensors = tuple(_Tensor(t, "RESOURCE" if t in resource else "FLOAT32") for t in range(n))
    return _Subgraph(0, tuple(_Op(k, kind, i, o) for k, (kind, i, o) in enumerate(ops)), tensors, tuple(outputs))


def test_greedy_partition_pulls_independent_ops_into_the_open_epoch():
    # op0 D t0->t1, op1 K t1->t2, op2 D t2->t3, op3 D t0->t4, op4 D t3,t4->t5 (D delegated, K kept).
    # Epoch 0 (kind D): op0, then op3 (ready, same kind; op1 is K, op2/op4 not ready) -> {0, 3}.
    # Epoch 1 (kind K): op1. Epoch 2 (kind D): op2, then op4 (t3 now ready) -> {2, 4}.
    g = _graph(("D", (0,), (1,)), ("K", (1,), (2,)), ("D", (2,), (3,)), ("D", (0,), (4,)), ("D", (3, 4), (5,)),
               outputs=(5,))
    parts = partition(g, [0, 2, 3, 4])
    assert [p.ops for p in parts] == [(0, 3), (2, 4)]
    # partition 0 reads t0 and hands t1 (to op1) and t4 (to op4, a later epoch) out; partition 1 reads t2, t4
    assert (parts[0].inputs, parts[0].outputs) == ((0,), (1, 4))
    assert (parts[1].inputs, parts[1].outputs) == ((2, 4), (5,))


def test_ops_with_side_effects_keep_their_order():
    # op0 D reads resource t9; op1 K (WHILE) t0->t1; op2 D reads resource t9 too, independent of op1's output.
    # Without the control edges op2 would join epoch 0 with op0; the chain op0 -> op1 -> op2 (side effects:
    # a resource tensor, control flow) holds op2 until op1 ran: 2 partitions, not 1.
    g = _graph(("D", (0, 9), (2,)), ("WHILE", (0,), (1,)), ("D", (9, 3), (4,)), outputs=(1, 2, 4), resource=(9,))
    assert [p.ops for p in partition(g, [0, 2])] == [(0,), (2,)]
    free = _graph(("D", (0, 8), (2,)), ("K", (0,), (1,)), ("D", (8, 3), (4,)), outputs=(1, 2, 4))
    assert [p.ops for p in partition(free, [0, 2])] == [(0, 2)]


def test_every_rule_names_its_source_and_reasons_have_a_known_category():
    assert {"CONV_2D", "FULLY_CONNECTED", "ADD", "SOFTMAX", "RESHAPE", "MEAN"} <= set(placed_op_types(XNNPACK))
    for op_type in placed_op_types(XNNPACK):
        assert "xnnpack_delegate.cc" in placement_rule(XNNPACK, op_type).source
    f32 = DelegateTensor(0, "FLOAT32", (1, 4), False)
    why = decide(XNNPACK, DelegateOp("EMBEDDING_LOOKUP", 1, {}, (f32, f32), (f32,)))
    assert category_of(why) in CATEGORIES and "EMBEDDING_LOOKUP" in why
    with pytest.raises(ValueError, match="registered twice"):
        register_placement(XNNPACK, "ADD", source="test")(lambda op: None)


def test_a_fused_activation_xnnpack_refuses_is_the_reason():
    # VisitBinaryNode -> ConvertActivationToOutputRange: TANH and SIGN_BIT have no output range
    f32 = DelegateTensor(0, "FLOAT32", (1, 4), False)
    assert decide(XNNPACK, DelegateOp("ADD", 1, {"fused_activation_function": "RELU6"}, (f32, f32), (f32,))) is None
    assert decide(XNNPACK, DelegateOp("ADD", 1, {"fused_activation_function": "TANH"}, (f32, f32), (f32,))) \
        == "options: fused activation TANH"


@pytest.fixture(scope="module")
def int8_report(samples_dir) -> Report:
    return tflite_flops.analyze(samples_dir / "cnn_int8.tflite")


def test_report_fields_and_summary_agree(int8_report):
    r = int8_report
    x = r.delegation["xnnpack"]
    taken = [o for o in r.ops if o.xnnpack]
    assert (x.delegated_ops, x.kept_ops) == (len(taken), len(r.ops) - len(taken))
    assert x.partitions == len({o.xnnpack_partition for o in taken}) == 2
    assert sum(x.kept_by_reason.values()) == x.kept_ops
    assert all((o.xnnpack_reason is None) == o.xnnpack for o in r.ops)
    # int8 RELU and SOFTMAX: VisitUnaryNode / VisitSoftmaxNode want float tensors
    assert {o.op_type for o in r.ops if not o.xnnpack} == {"RELU", "SOFTMAX"}


def test_placement_round_trips_and_shows_in_every_format(int8_report):
    back = Report.from_json(int8_report.to_json())
    assert back.delegation == int8_report.delegation and back.ops == int8_report.ops
    d = json.loads(render(int8_report, "json"))
    assert d["delegation"]["xnnpack"]["partitions"] == 2
    assert {"xnnpack", "xnnpack_reason", "xnnpack_partition", "gpu", "gpu_reason"} <= set(d["ops"][0])
    rows = list(csv.DictReader(io.StringIO(render(int8_report, "csv"))))
    relu = next(r for r in rows if r["op_type"] == "RELU")
    assert (relu["xnnpack"], relu["xnnpack_partition"]) == ("False", "") and relu["xnnpack_reason"].startswith("dtype")
    table = render(int8_report, "table")
    assert "Where it runs" in table and "10 of 12 ops delegated · 2 partitions" in table
    assert "Where it runs" in render(int8_report, "md")
    html = render(int8_report, "html")
    assert 'id="placement"' in html and html.count('class="op edge"') >= 3  # two partitions and the kept ops


def test_gates_count_partitions_and_fallbacks(int8_report, samples_dir, tmp_path):
    assert check_budget(int8_report, max_partitions=2) == []
    assert check_budget(int8_report, max_partitions=1) == ["partitions 2 > 1 (XNNPACK DELEGATE nodes)"]
    (line,) = check_budget(int8_report, fail_on_fallback="xnnpack")
    assert line.startswith("fallback: 2 op(s) kept off xnnpack: ") and "RELU" in line and "SOFTMAX" in line
    path = str(samples_dir / "cnn_int8.tflite")
    run = cli_process.run(["analyze", path, "--max-partitions", "1", "--fail-on-fallback", "xnnpack"])
    assert run.returncode == 3
    assert [ln for ln in run.stderr.splitlines() if ln.startswith("budget exceeded")] == [
        "budget exceeded: " + line, "budget exceeded: partitions 2 > 1 (XNNPACK DELEGATE nodes)"]
    budget = tmp_path / "b.toml"
    budget.write_text('[budget]\nmax_partitions = 1\nfail_on_fallback = ["xnnpack"]\n')
    assert cli_process.run(["analyze", path, "--budget", str(budget)]).returncode == 3
    float_path = str(samples_dir / "cnn_float.tflite")  # every op on XNNPACK, one partition
    assert cli_process.run(["analyze", float_path, "--budget", str(budget)]).returncode == 0


def test_compare_shows_the_ops_a_quantized_twin_loses(samples_dir, int8_report):
    c = compare_reports(tflite_flops.analyze(samples_dir / "cnn_float.tflite"), int8_report)
    lost = [ch for ch in c.placement if ch.delegate == "xnnpack"]
    assert {ch.b.op_type for ch in lost} == {"RELU", "SOFTMAX"} and all(ch.lost for ch in lost)
    rows = {m.key: (m.a, m.b) for m in c.totals}
    assert rows["delegation.xnnpack.partitions"] == (1, 2)
    assert c.to_dict()["placement_changes"][0]["change"] == "lost"


def _rescanning_partition(g: _Subgraph, delegated: set[int]) -> list[tuple[int, ...]]:
    """graph_info.cc's loop as written: open an epoch, rescan every op in order until none joins
    (an op joins when its inputs are computed and its kind is the epoch's, which the first ready op sets)."""
    ready_at: dict[int, int] = {}
    produced = {t for op in g.operators for t in op.outputs}
    placed: dict[int, int] = {}
    subsets: list[tuple[bool | None, list[int]]] = []
    while True:
        kind: list = [None]
        members: list[int] = []
        epoch = len(subsets)
        progress = True
        while progress:
            progress = False
            for op in g.operators:
                if op.index in placed or any(t in produced and t not in ready_at for t in op.inputs):
                    continue
                if kind[0] is None:
                    kind[0] = op.index in delegated
                if kind[0] != (op.index in delegated):
                    continue
                placed[op.index] = epoch
                members.append(op.index)
                ready_at.update((t, epoch) for t in op.outputs)
                progress = True
        if not members:
            break
        subsets.append((kind[0], members))
    return [tuple(sorted(m)) for k, m in subsets if k]


def test_partition_is_the_rescanning_algorithm_on_random_graphs():
    import random

    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 14)
        ops = []
        for i in range(n):  # op i reads graph input t0 and/or earlier ops' outputs t(1+j), writes t(1+i)
            reads = {0} if rng.random() < 0.3 else set()
            reads |= {1 + j for j in range(i) if rng.random() < 0.35}
            ops.append(("D", tuple(sorted(reads or {0})), (1 + i,)))
        g = _graph(*ops, outputs=(n,))
        delegated = {i for i in range(n) if rng.random() < 0.6}
        assert [p.ops for p in partition(g, sorted(delegated))] == _rescanning_partition(g, delegated), (ops, delegated)


def test_model_explorer_colours_ops_by_placement(int8_report):
    from tflite_flops.render.formats.model_explorer import node_data

    (graph,) = node_data(int8_report, "xnnpack").values()
    values = [r["value"] for r in graph["results"].values()]
    assert sorted(values) == [0, 0] + [1] * 10 and graph["thresholds"][0] == {"value": 0, "bgColor": "#cf222e"}
