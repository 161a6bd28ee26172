"""TensorFlow Lite Micro's arena size: the head (tensors + kernel scratch) and the tail (persistent structs).

Struct layouts and a whole tail derived by hand (arithmetic in the comments), then the figures of the
``tflite-micro`` Python package's interpreter (its RecordingMicroAllocator report: head, tail, total)
on the MLPerf Tiny samples and the other samples it can run, at the package's build (64-bit pointers,
``USE_TFLM_COMPRESSION``, the recording allocator: :data:`~tflite_flops.ops.tflm.HOST_64`).
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import tflite_flops
from test_memory import planner_inputs
from tflite_builder import ADD, FLOAT32, build_model
from tflite_flops.analysis import resolve_shapes
from tflite_flops.analysis.tflm import TflmFigures, tflm_figures, tflm_kernels
from tflite_flops.ops.tflm import CORTEX_M, HOST_64, TFLM_KERNELS, TflmTarget, c_struct
from tflite_flops.reader.load import load_model

MEAN = 40
INT32, INT8, BOOL = 2, 9, 6
MCU_SAMPLES = ["mcu/kws_ds_cnn", "mcu/vww_mobilenet_v1_025", "mcu/ic_resnet8", "mcu/ad_autoencoder"]
# The other samples TFLM can run (no float16 DEQUANTIZE, hybrid kernels or dynamic shapes).
TFLM_SAMPLES = ["cnn_float", "cnn_int8", "lstm", "mlp_dynamic_batch"] + MCU_SAMPLES


def test_struct_layouts_by_hand():
    # TfLiteEvalTensor {data*, dims*, type}: 64-bit 8+8+4 = 20 -> 24 (align 8); 32-bit 4+4+4 = 12.
    assert c_struct(HOST_64, "pp", "i") == (24, 8)
    assert c_struct(CORTEX_M, "pp", "i") == (12, 4)
    # TfLiteTensor (micro build) {quantization {type, params*}, params {scale, zero_point}, data*, dims*,
    # bytes, type, allocation_type, is_variable}: 64-bit 16+8+8+8+8+4+4+1 = 57 -> 64; 32-bit 8+8+4+4+4+4+4+1 = 37 -> 40.
    for target, size in ((HOST_64, 64), (CORTEX_M, 40)):
        assert c_struct(target, c_struct(target, "i", "p"), "ii", "pp", "p", "ii", "b").size == size
    # OpDataConv {padding 4 ints, 5 int32, 2 pointers, 3 int32 [, 2 compression ints]}:
    # 64-bit 16+20 = 36 -> 40 +16 = 56 +12 = 68 +8 = 76 -> 80; 32-bit 16+20+8+12 = 56.
    assert c_struct(HOST_64, c_struct(HOST_64, "iiii"), "iiiii", "pp", "iii", compression="ii").size == 80
    assert c_struct(CORTEX_M, c_struct(CORTEX_M, "iiii"), "iiiii", "pp", "iii", compression="ii").size == 56
    # A uint8 then an int32 pads 3 bytes; a double aligns to 8 on both targets: {int32, double} = 16.
    assert c_struct(CORTEX_M, "bi") == (8, 4) and c_struct(CORTEX_M, "id") == (16, 8)


def _add_model(n: int = 1) -> bytes:
    """x[1,4] float32 -ADD(x, x)-> y0 -ADD-> ... y{n-1}."""
    tensors = [{"name": "x", "shape": [1, 4], "type": FLOAT32}] + [
        {"name": f"y{i}", "shape": [1, 4], "type": FLOAT32} for i in range(n)]
    ops = [{"opcode": 0, "inputs": [i, i], "outputs": [i + 1], "options": ("AddOptions", {"fused_activation_function": 0})}
           for i in range(n)]
    sg = {"tensors": tensors, "operators": ops, "inputs": [0], "outputs": [n], "name": "main"}
    return build_model([sg], [ADD])


def _figures(source, target: TflmTarget, arena_end: int = 0) -> TflmFigures:
    model = load_model(source)
    states = resolve_shapes(model)
    sizes, constant = planner_inputs(model, states)
    return tflm_figures(model, 0, states, sizes, constant, None, target, arena_end)


def test_the_tail_of_one_add_on_a_32_bit_mcu_by_hand():
    # From an aligned arena end, each allocation below the last at its alignment (32-bit, MicroAllocator):
    #   SingleArenaBufferAllocator 2 vptrs + 5 pointers + intptr + int = 36       -> 36
    #   GreedyMemoryPlanner vptr, 2 ints, 4 pointers, 2 ints, pointer, bool = 41 -> 44   -> 80
    #   MicroAllocator vptr, 4 pointers, bool (-> 24), 3 pointers/size_t = 36          -> 116
    #   MicroBuiltinDataAllocator 8, SubgraphAllocations 8                              -> 132
    #   TfLiteEvalTensor 12 x 2 tensors = 24, NodeAndRegistration 32 x 1 op            -> 188
    #   TfLiteAddParams {activation, bool} 8                                            -> 196
    #   OpDataAdd {bool, 14 int32} = 60 at a 16-byte boundary: 196 + 60 = 256            -> 256
    #   input_tensors_ 4 B at 16: 272; TfLiteTensor 40: 312; output_tensors_ 4 at 16: 320; TfLiteTensor: 360
    figures = _figures(_add_model(), CORTEX_M)
    assert figures.tail_bytes == 360
    # head: x and y [1,4] float32 = 16 B each, alive together at the ADD: 32; head + tail = 392.
    # While the ADD prepares: the tail to its OpData (256) and, from the head's end, room for 12 scratch
    # requests (12 B each: 144) and three temporary TfLiteTensors (x twice, y; 40 B each): 264 -> 520.
    # While the head is planned: the tail then (256), 144 for the requests, one subgraph offset (4): 148,
    # two AllocationInfo (24 B each): 196, the planner's arrays at 16: 208 + 40 x 2 buffers = 288 -> 544.
    assert figures.allocation_peak_bytes == 544
    assert (figures.tensors_bytes, figures.head_bytes, figures.arena_size_bytes) == (32, 32, 544)


def _mean_model() -> bytes:
    """x[1,4,4,4] float32 -MEAN over axes [1, 2]-> y[1,4] (keep_dims false)."""
    axes = np.array([1, 2], dtype=np.int32)
    sg = {"tensors": [{"name": "x", "shape": [1, 4, 4, 4], "type": FLOAT32},
                      {"name": "axes", "shape": [2], "type": 2, "buffer": 1},
                      {"name": "y", "shape": [1, 4], "type": FLOAT32}],
          "operators": [{"opcode": 0, "inputs": [0, 1], "outputs": [2], "options": ("ReducerOptions", {"keep_dims": False})}],
          "inputs": [0], "outputs": [2], "name": "main"}
    return build_model([sg], [MEAN], buffers=[None, axes.tobytes()])


def test_kernel_scratch_is_planned_in_the_head():
    # reduce_common.cc PrepareMeanOrSumHelper, float input: an int per input dim (4 x 4 = 16 B) and an int
    # per axis (2 x 4 = 8 -> 16 B), alive at the MEAN with x (256 B) and y (16 B): 256 + 16 + 16 + 16 = 304.
    model = load_model(_mean_model())
    kernels = tflm_kernels(model, resolve_shapes(model), CORTEX_M)
    assert kernels[(0, 0)].scratch == (16, 8)
    figures = _figures(_mean_model(), CORTEX_M)
    assert (figures.tensors_bytes, figures.head_bytes) == (272, 304)


def test_the_report_shows_the_32_bit_figure(samples_dir):
    mem = tflite_flops.analyze(str(samples_dir / "mcu" / "kws_ds_cnn.tflite")).memory
    assert mem.tflm_pointer_bytes == 4
    assert mem.tflm_arena_size_bytes == mem.tflm_head_bytes + mem.tflm_tail_bytes
    assert mem.tflm_head_bytes >= mem.tflm_arena_bytes
    assert all(isinstance(v, int) for v in (mem.tflm_head_bytes, mem.tflm_tail_bytes, mem.tflm_arena_size_bytes))
    # a 64-bit build holds the same tensors and larger structs
    host = _figures(samples_dir / "mcu" / "kws_ds_cnn.tflite", HOST_64)
    assert host.head_bytes == mem.tflm_head_bytes and host.tail_bytes > mem.tflm_tail_bytes


def test_every_sample_kernel_has_tflm_facts(samples_dir):
    # An op without facts would leave its OpData out of the tail: every op of the TFLM samples has some.
    for name in TFLM_SAMPLES:
        model = load_model(samples_dir / f"{name}.tflite")
        missing = {op.op_type for sg in model.subgraphs for op in sg.operators} - set(TFLM_KERNELS)
        assert not missing, (name, missing)


# ---- against the tflite-micro interpreter ---------------------------------------------------------

_SCRIPT = """
import sys
from tflite_micro.python.tflite_micro import runtime
data = open(sys.argv[1], "rb").read()
try:
    interpreter = runtime.Interpreter.from_bytes(data, arena_size=int(sys.argv[2]))
except RuntimeError:  # "TFLM failed to allocate tensors": the arena is too small
    sys.exit(3)
interpreter.print_allocations()
"""


def _allocates(path: str, arena_size: int) -> bool:
    """Whether the tflite-micro interpreter allocates ``path``'s tensors in an arena of ``arena_size`` bytes
    (too small an arena can also stop it in a kernel's Prepare: any failure counts as not allocating)."""
    run = subprocess.run([sys.executable, "-c", _SCRIPT, path, str(arena_size)], capture_output=True, text=True,
                         timeout=120)
    return run.returncode == 0


def _micro(path: str, arena_size: int) -> dict[str, int]:
    """The RecordingMicroAllocator's head, tail and total of ``path`` (printed from C++: a subprocess)."""
    run = subprocess.run([sys.executable, "-c", _SCRIPT, path, str(arena_size)], capture_output=True, text=True,
                         timeout=120)
    found = dict(re.findall(r"Arena allocation (head|tail|total) (\d+) bytes", run.stdout + run.stderr))
    assert run.returncode == 0 and len(found) == 3, run.stderr[-500:]
    return {k: int(v) for k, v in found.items()}


@pytest.mark.micro
@pytest.mark.slow
def test_head_and_tail_of_hand_built_models_are_exact(tmp_path):
    # ADD chains, and a MEAN whose two scratch buffers enlarge the head and add two handles to the tail
    for name, data in (("add1", _add_model(1)), ("add3", _add_model(3)), ("mean", _mean_model())):
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(data)
        ours = _figures(path, HOST_64)  # a 64 KiB arena: its end is 16-byte aligned
        got = _micro(str(path), 65536)
        assert (ours.head_bytes, ours.tail_bytes, ours.head_bytes + ours.tail_bytes) == (got["head"], got["tail"],
                                                                                         got["total"])
        # the least arena AllocateTensors succeeds in: its peak while it plans (add1 1,056, add3 1,488, mean 1,248)
        assert _allocates(str(path), ours.arena_size_bytes) and not _allocates(str(path), ours.arena_size_bytes - 1)


@pytest.mark.micro
@pytest.mark.slow
@pytest.mark.parametrize("name", TFLM_SAMPLES)
def test_head_and_tail_of_the_samples_are_exact(samples_dir, name):
    # kws_ds_cnn: head 16,000 and tail 8,208 (24,208), as the package's RecordingMicroAllocator reports them
    path = samples_dir / f"{name}.tflite"
    arena_size = 10 * path.stat().st_size  # the package's default arena; its end's offset from 16 bytes
    got = _micro(str(path), arena_size)
    ours = _figures(path, HOST_64, arena_end=arena_size % 16)
    assert (ours.head_bytes, ours.tail_bytes, ours.head_bytes + ours.tail_bytes) == (got["head"], got["tail"],
                                                                                     got["total"])


def _least(path, target: TflmTarget = HOST_64) -> int:
    """Our least arena for ``path``: the least size at least our figure for an arena that ends that many bytes
    past a 16-byte boundary (the package's arena starts 16-byte aligned)."""
    base = _figures(path, target).arena_size_bytes
    return min(n for n in range(base - 16, base + 16) if n >= _figures(path, target, arena_end=n % 16).arena_size_bytes)


# The arena the package allocates in while a kernel's persistent buffers overwrite the end of its own temporary
# tensors: SingleArenaBufferAllocator::AllocatePersistentBuffer checks the tail against the head, not against
# the temporaries above it. ad_autoencoder's last FULLY_CONNECTED allocates its per-channel arrays over the
# output's temporary zero points (16 bytes), which nothing reads again; our figure overwrites nothing.
OVERWRITTEN = {"mcu/ad_autoencoder": 16}


@pytest.mark.micro
@pytest.mark.slow
@pytest.mark.parametrize("name", TFLM_SAMPLES)
def test_the_arena_size_is_the_least_tflite_micro_allocates_in(samples_dir, name):
    # Our size allocates and one byte less does not. On lstm and ad_autoencoder that size is AllocateTensors'
    # peak (temporary tensors, the planner's arrays: 97 buffers on lstm), larger than the head and tail it keeps.
    path = str(samples_dir / f"{name}.tflite")
    least = _least(path) - OVERWRITTEN.get(name, 0)
    assert _allocates(path, least) and not _allocates(path, least - 1)


_Q = {"scale": [0.05], "zero_point": [0]}
_X = ([1, 4], FLOAT32, None, None)  # (shape, dtype, constant data or None, quantization or None)


def _const(*values: int) -> tuple:
    return ([len(values)], INT32, np.array(values, np.int32), None)


def _single_op(opcode: int, ins: list[tuple], outs: list[tuple], options: tuple | None = None) -> bytes:
    """One op of builtin ``opcode``; the non-constant inputs are the model's inputs, its outputs the model's."""
    tensors, buffers, inputs = [], [None], []
    for i, (shape, dtype, data, quant) in enumerate(ins + outs):
        t = {"name": f"t{i}", "shape": shape, "type": dtype, **({"quant": quant} if quant else {})}
        if data is not None:
            buffers.append(np.asarray(data).tobytes())
            t["buffer"] = len(buffers) - 1
        elif i < len(ins):
            inputs.append(i)
        tensors.append(t)
    outputs = list(range(len(ins), len(tensors)))
    op = {"opcode": 0, "inputs": list(range(len(ins))), "outputs": outputs, **({"options": options} if options else {})}
    return build_model([{"tensors": tensors, "operators": [op], "inputs": inputs, "outputs": outputs, "name": "main"}],
                       [opcode], buffers=buffers)


# One model per kernel whose facts the samples do not all exercise: (builtin code, inputs, outputs, options).
SINGLE_OPS = {
    # the package parses 32 bytes of options (16 in the source followed): TflmTarget.package
    "FULLY_CONNECTED": (9, [_X, ([3, 4], FLOAT32, np.ones((3, 4), np.float32), None)], [([1, 3], FLOAT32, None, None)],
                        ("FullyConnectedOptions", {})),
    # its output's dims copied into the tail: 4 + 4 x 2 = 12 -> 16 bytes
    "GATHER": (36, [([3, 4], FLOAT32, None, None), _const(2, 0)], [([2, 4], FLOAT32, None, None)],
               ("GatherOptions", {"axis": 0})),
    "SUB": (41, [_X, _X], [_X], ("SubOptions", {"fused_activation_function": 0})),
    "DIV": (42, [_X, _X], [_X], ("DivOptions", {"fused_activation_function": 0})),
    "MUL": (18, [_X, _X], [_X], ("MulOptions", {"fused_activation_function": 0})),
    "MAXIMUM": (55, [_X, _X], [_X], None),
    "LESS": (58, [_X, _X], [([1, 4], BOOL, None, None)], None),
    "RELU6": (21, [_X], [_X], None),
    "LOGISTIC": (14, [_X], [_X], None),
    "TANH": (28, [_X], [_X], None),
    "EXP": (47, [_X], [_X], None),
    "FLOOR": (8, [_X], [_X], None),
    "HARD_SWISH": (117, [_X], [_X], None),
    "LEAKY_RELU": (98, [_X], [_X], ("LeakyReluOptions", {"alpha": 0.1})),
    "SOFTMAX": (25, [_X], [_X], ("SoftmaxOptions", {"beta": 1.0})),
    "PRELU": (54, [_X, ([4], FLOAT32, np.ones(4, np.float32), None)], [_X], None),
    "PAD": (34, [_X, ([2, 2], INT32, np.array([[0, 0], [1, 1]], np.int32), None)], [([1, 6], FLOAT32, None, None)], None),
    "SQUEEZE": (43, [_X], [([4], FLOAT32, None, None)], None),
    "TRANSPOSE": (39, [([2, 4], FLOAT32, None, None), _const(1, 0)], [([4, 2], FLOAT32, None, None)], None),
    "PACK": (83, [([4], FLOAT32, None, None)] * 2, [([2, 4], FLOAT32, None, None)],
             ("PackOptions", {"values_count": 2, "axis": 0})),
    "QUANTIZE": (114, [_X], [([1, 4], INT8, None, _Q)], None),
    "DEQUANTIZE": (6, [([1, 4], INT8, None, _Q)], [_X], None),
    "CAST": (53, [_X], [([1, 4], INT32, None, None)], None),
    "EXPAND_DIMS": (70, [([4], FLOAT32, None, None), _const(0)], [_X], None),
    "CONCATENATION": (2, [_X, _X], [([1, 8], FLOAT32, None, None)], ("ConcatenationOptions", {"axis": 1})),
    "STRIDED_SLICE": (45, [_X, _const(0, 1), _const(1, 3), _const(1, 1)], [([1, 2], FLOAT32, None, None)],
                      ("StridedSliceOptions", {})),
    "ARG_MAX": (56, [_X, _const(1)], [([1], INT32, None, None)], ("ArgMaxOptions", {"output_type": INT32})),
    "RESHAPE": (22, [_X, _const(4)], [([4], FLOAT32, None, None)], None),
    "MEAN int8": (MEAN, [([1, 2, 2, 4], INT8, None, _Q), _const(1, 2)], [([1, 4], INT8, None, _Q)],
                  ("ReducerOptions", {"keep_dims": False})),
    "RESIZE_NEAREST_NEIGHBOR": (97, [([1, 2, 2, 1], FLOAT32, None, None), _const(4, 4)],
                                [([1, 4, 4, 1], FLOAT32, None, None)], None),
    "RESIZE_BILINEAR": (23, [([1, 2, 2, 1], FLOAT32, None, None), _const(4, 4)], [([1, 4, 4, 1], FLOAT32, None, None)],
                        None),
    "RSQRT": (76, [_X], [_X], None),
    "SQUARE": (92, [_X], [_X], None),
    "NEG": (59, [_X], [_X], None),
    "SQUARED_DIFFERENCE": (99, [_X, _X], [_X], None),
    "SELECT_V2": (123, [([1, 4], BOOL, None, None), _X, _X], [_X], None),
}


@pytest.mark.micro
@pytest.mark.slow
@pytest.mark.parametrize("name", SINGLE_OPS)
def test_each_kernels_head_and_tail_are_exact(tmp_path, name):
    path = tmp_path / "op.tflite"
    path.write_bytes(_single_op(*SINGLE_OPS[name]))
    ours = _figures(path, HOST_64)
    got = _micro(str(path), 65536)
    assert (ours.head_bytes, ours.tail_bytes) == (got["head"], got["tail"])
