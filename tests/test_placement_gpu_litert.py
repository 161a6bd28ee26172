"""The LiteRT GPU accelerator's placement held to the accelerator itself: ML Drift's WebGPU build, which the
ai-edge-litert wheel ships, applied to small models on whatever Vulkan device this machine has (tests/litert_gpu.py).

Its choice of ops is the ``GetOpsToReplace`` call of LITERT_CL and LITERT_METAL (quantized ops on, one partition,
nothing excluded). It logs how many ops of a subgraph it runs on the GPU when it does not take them all; each
case's model has one subgraph, so our count of delegated ops must be that figure (or every op, when it logs
nothing), and every op type it names as refused must be one we refuse. Which ops it took, and so the node
subsets, are not in its log: the node subsets are derived in tests/test_placement_gpu_drift.py.

Without a Vulkan device (a GPU driver, or Mesa's lavapipe 23 or newer) the accelerator cannot start and the tests
are skipped, saying so: the machines that run this suite have no GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import test_placement_gpu_drift as drift
from litert_gpu import NoGpuDevice, gpu_verdict
from test_placement_gpu import Graph
from tflite_flops.analysis.placement import place_subgraph
from tflite_flops.ops.placement import GPU, DelegateConfig
from tflite_flops.reader.load import load_model

pytestmark = [pytest.mark.runtime, pytest.mark.slow]
SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
F = "FLOAT32"


def _chain(kinds: list[str], shape=(1, 4), dtype=F) -> Graph:
    g = Graph()
    t = g.t(shape, dtype)
    for kind in kinds:
        nxt = g.t(shape, dtype)
        g.op(kind, [t], [nxt])
        t = nxt
    return g


def _binary(kind: str, dtype: str, out: str | None = None, tail: list[str] = ()) -> Graph:
    g = Graph()
    a, b, y = g.t((1, 4), dtype), g.t((1, 4), dtype), g.t((1, 4), out or dtype)
    g.op(kind, [a, b], [y])
    for k in tail:
        nxt = g.t((1, 4), out or dtype)
        g.op(k, [y], [nxt])
        y = nxt
    return g


def _strided_slice_2d() -> Graph:
    g = Graph()
    x, y = g.t((8, 8)), g.t((4, 4))
    g.op("ABS", [x], [x2 := g.t((8, 8))])
    g.op("STRIDED_SLICE", [x2, g.t((2,), "INT32", [0, 0]), g.t((2,), "INT32", [4, 4]), g.t((2,), "INT32", [1, 1])],
         [y], ("StridedSliceOptions", {}))
    g.op("ABS", [y], [g.t((4, 4))])
    return g


def _batch_matmul_const_3d() -> Graph:
    g = Graph()
    x, y = g.t((2, 3, 4)), g.t((2, 3, 5))
    g.op("BATCH_MATMUL", [x, g.t((2, 4, 5), F, "ones")], [y])
    g.op("ABS", [y], [g.t((2, 3, 5))])
    return g


def _shuffle() -> Graph:
    g = Graph()
    drift._channel_shuffle(g, g.t((1, 8, 8, 4)), "SHAPE")
    return g


def _padv2_int64() -> Graph:
    g = Graph()
    x, y = g.t((1, 8, 8, 4)), g.t((1, 10, 10, 4))
    g.op("ABS", [x], [x2 := g.t((1, 8, 8, 4))])
    g.op("PADV2", [x2, g.t((4, 2), "INT64", [[0, 0], [1, 1], [1, 1], [0, 0]]), g.t((), F, 0.0)], [y])
    g.op("ABS", [y], [y2 := g.t((1, 10, 10, 4))])
    g.op("ABS", [y2], [g.t((1, 10, 10, 4))])
    return g


CASES = {
    "PADV2 with INT64 paddings": _padv2_int64,
    "int32 ADD chain (IsIntSupportedOp)": lambda: _binary("ADD", "INT32", tail=["ABS", "NEG"]),
    "bool LOGICAL_AND (IsLogicalOpCode types)": lambda: _binary("LOGICAL_AND", "BOOL", tail=["LOGICAL_NOT"]),
    "EQUAL read by no CAST": lambda: _binary("EQUAL", F, "BOOL"),
    "CEIL and ROUND (ML Drift's parsers)": lambda: _chain(["CEIL", "ABS", "ROUND"]),
    "RELU_0_TO_1 (refused)": lambda: _chain(["ABS", "RELU_0_TO_1", "ABS", "ABS"]),
    "2-D STRIDED_SLICE": _strided_slice_2d,
    "BATCH_MATMUL with a constant 3-D operand": _batch_matmul_const_3d,
    "channel shuffle (rank 5) and SHAPE": _shuffle,
    "ZEROS_LIKE cut, largest partition": lambda: _chain(["ABS", "ABS", "ZEROS_LIKE", "ABS", "ABS", "ABS"]),
}


def _verdict(path: Path):
    try:
        return gpu_verdict(str(path))
    except NoGpuDevice:
        pytest.skip("no Vulkan device for LiteRT's WebGPU accelerator (a GPU driver, or Mesa's lavapipe 23+)")


def _check(path: Path, subgraph: int = 0, logged: int | None = None) -> None:
    model = load_model(str(path))
    ours = place_subgraph(model, subgraph, GPU, DelegateConfig())
    n = len(model.subgraphs[subgraph].operators)
    taken = sum(r is None for r in ours.reasons.values())
    verdict = _verdict(path)
    on_gpu = n if not verdict.partial else verdict.partial[subgraph][0] if logged is None else logged
    assert taken == on_gpu, f"{path.name}: ours {taken} of {n}, LiteRT's accelerator {on_gpu}: {dict(ours.reasons)}"
    refused_types = {model.subgraphs[subgraph].operators[i].op_type for i, r in ours.reasons.items() if r}
    for line in verdict.refusals:
        assert line.split(":", 1)[0] in refused_types, f"{path.name}: LiteRT refused {line!r}, we did not"


@pytest.mark.parametrize("name", list(CASES))
def test_small_models_match_the_accelerator(name, tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(CASES[name]().build())
    _check(path)


def test_tiny_decoder_matches_the_accelerator():
    # Two subgraphs, each logged (neither is taken whole): 67 of 73 and 71 of 77.
    verdict = _verdict(SAMPLES / "tiny_decoder.tflite")
    model = load_model(str(SAMPLES / "tiny_decoder.tflite"))
    ours = [sum(r is None for r in place_subgraph(model, i, GPU).reasons.values()) for i in range(2)]
    assert ours == [on for on, _ in verdict.partial]
