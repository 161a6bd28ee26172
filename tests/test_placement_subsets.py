"""Node subsets: every subset of TFLite's partitioning, what ``benchmark_model`` logs as "partitions".

``Subgraph::ReplaceNodeSubsetsWithDelegateKernels`` (tflite/core/subgraph.cc) calls ``PartitionGraph`` on the
delegate's nodes and logs "Replacing %d out of %d node(s) with delegate (%s) node, yielding %zu partitions"
with ``node_subsets.size()``: the delegated subsets (kTfPartition) and the subsets left on the CPU
(kTfNonPartition) alike, each of the latter copied back into the execution plan. So a model with one
delegated partition logs 1 (all delegated), 2 (CPU ops on one side) or 3 (on both sides). The expected
counts below are derived by hand from the greedy epochs of ``PartitionGraphIntoIndependentNodeSubsets``
(tflite/graph_info.cc); tests/test_placement_xnnpack.py holds the same partitioning to LiteRT's own plan.
"""

from __future__ import annotations

from pathlib import Path

from test_placement_gpu import Graph
from tflite_flops.analysis.placement import place_subgraph
from tflite_flops.ops.placement import XNNPACK, DelegateConfig
from tflite_flops.reader.load import load_model

CLASSIC = DelegateConfig(gpu_delegate="classic")

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


def _kinds(p) -> list[bool]:
    return [taken for taken, _ in p.subsets]


def test_cnn_int8_xnnpack_subsets():
    # cnn_int8: XNNPACK keeps the int8 RELU (op 8) and the final int8 SOFTMAX (op 11) off. Epochs: ops 0-7
    # delegated, op 8 on the CPU, ops 9-10 delegated, op 11 on the CPU: 2 partitions + 2 CPU subsets = 4.
    model = load_model(str(SAMPLES / "cnn_int8.tflite"))
    p = place_subgraph(model, 0, XNNPACK)
    assert len(p.partitions) == 2 and len(p.subsets) == 4
    assert _kinds(p) == [True, False, True, False]
    assert [part.ops for _, part in p.subsets] == [tuple(range(8)), (8,), (9, 10), (11,)]


def test_fully_delegated_is_one_subset():
    # cnn_float: XNNPACK takes every op, one partition and no CPU subset: 1 (benchmark_model "1 partitions").
    model = load_model(str(SAMPLES / "cnn_float.tflite"))
    p = place_subgraph(model, 0, XNNPACK)
    assert len(p.partitions) == 1 and _kinds(p) == [True]


def _chain(g: Graph, kinds: list[str]) -> None:
    t = g.t((1, 4))
    for kind in kinds:
        nxt = g.t((1, 4))
        g.op(kind, [t], [nxt])
        t = nxt


def test_gpu_island_between_cpu_ops_is_three_subsets():
    # CEIL has no classic GPU parser (ML Drift has one): CEIL, ABS, ABS, CEIL is CPU (op 0), GPU (ops 1-2), CPU (op 3) = 1 + 1 + 1 = 3
    # subsets for 1 partition: the ShuffleNet V2 and ViT rows of the leaderboard (one LITERT_CL kernel, "yielding
    # 3 partitions").
    g = Graph()
    _chain(g, ["CEIL", "ABS", "ABS", "CEIL"])
    p = g.place(CLASSIC)
    assert len(p.partitions) == 1 and _kinds(p) == [False, True, False]
    # CPU ops on one side only: ABS, ABS, CEIL = GPU then CPU: 2 subsets (the Gecko rows' "2 partitions").
    g = Graph()
    _chain(g, ["ABS", "ABS", "CEIL"])
    assert _kinds(g.place(CLASSIC)) == [True, False]


def test_partition_limit_leaves_cpu_subsets():
    # ABS ABS CEIL ABS ABS ABS: the GPU previews partitions of 2 and 3 ops and keeps the larger (limit 1); ops 0-1
    # then run on the CPU with the CEIL: one CPU subset (ops 0-2), one delegated (3-5) = 2 subsets. With the limit
    # raised to 2 (classic delegate only): GPU, CPU, GPU = 3.
    g = Graph()
    _chain(g, ["ABS", "ABS", "CEIL", "ABS", "ABS", "ABS"])
    p = g.place(CLASSIC)
    assert [part.ops for taken, part in p.subsets] == [(0, 1, 2), (3, 4, 5)] and _kinds(p) == [False, True]
    p = g.place(CLASSIC._replace(gpu_max_partitions=2))
    assert _kinds(p) == [True, False, True]


def test_nothing_delegated_no_subsets():
    # ReplaceNodeSubsetsWithDelegateKernels returns before partitioning when the delegate replaces no node: no
    # "yielding" line, 0 subsets.
    g = Graph()
    _chain(g, ["CEIL"])
    p = g.place(CLASSIC)
    assert p.partitions == () and p.subsets == ()


def test_report_summary_counts_subsets():
    # The report's delegation summary: subsets per subgraph and in total (tiny_decoder: two subgraphs, XNNPACK
    # cuts each into 3 partitions with CPU ops between and after them).
    from tflite_flops import analyze

    r = analyze(str(SAMPLES / "tiny_decoder.tflite"))
    x = r.delegation["xnnpack"]
    assert x.subsets == sum(x.subsets_by_subgraph.values()) and set(x.subsets_by_subgraph) == {"0", "1"}
    assert x.subsets >= x.partitions
    assert DelegateConfig().gpu_max_partitions == 1
