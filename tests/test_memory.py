"""Activation memory: lifetimes, live bytes, TFLite's arena and TFLM's arena.

Hand-derived plans on tiny models built in memory (the arithmetic is in the comments), then
cross-checks against the real planners: the TensorFlow Lite Micro interpreter's own report of
its arena head, and LiteRT's tensor buffers (their addresses after ``allocate_tensors`` give the
offsets its ArenaPlanner chose; LiteRT exposes no arena size of its own).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from dataclasses import replace

import cli_process
import numpy as np
import pytest

import tflite_flops
from tflite_builder import ADD, FLOAT32, build_model
from tflite_flops.analysis import resolve_shapes
from tflite_flops.analysis.memory import allocation_kinds, control_flow_kinds, plan_subgraph, tensor_sizes
from tflite_flops.analysis.planner import (align, first_fit_arena, first_fit_arenas, greedy_order, greedy_plan,
                                           place_buffers)
from tflite_flops.analysis.tflm import tflm_arena
from tflite_flops.reader.load import load_model
from tflite_flops.report import Report
from tflite_flops.report.budget import check_budget
from tflite_flops.analysis.shapes import subgraph_tensors

RELU, CONCATENATION = 19, 2
SAMPLES = ["cnn_float", "cnn_int8", "cnn_fp16", "cnn_dynamic_range", "fcn_dynamic", "mlp_dynamic_batch",
           "transformer_block", "lstm"]


def _model(ops: list[tuple[int, list[int], list[int]]], shapes: list[list[int]], inputs: list[int],
           outputs: list[int]) -> bytes:
    """One subgraph of float tensors of the given shapes; ``ops`` = (opcode index, inputs, outputs)."""
    codes = [ADD, RELU, CONCATENATION]
    sg = {"tensors": [{"name": f"t{i}", "shape": s, "type": FLOAT32} for i, s in enumerate(shapes)],
          "operators": [{"opcode": codes.index(code), "inputs": ins, "outputs": outs,
                         **({"options": ("ConcatenationOptions", {"axis": 1})} if code == CONCATENATION else {})}
                         for code, ins, outs in ops],
          "inputs": inputs, "outputs": outputs, "name": "main"}
    return build_model([sg], codes)


def _live(report: Report) -> list[int]:
    return [o.live_bytes for o in report.ops]


def test_chain():
    # x -RELU-> a -RELU-> b -RELU-> y, every tensor [1,16] float32 = 64 B.
    report = tflite_flops.analyze(_model([(RELU, [0], [1]), (RELU, [1], [2]), (RELU, [2], [3])],
                                         [[1, 16]] * 4, [0], [3]))
    mem = report.memory
    # TFLite: x lives to the end (a subgraph input); a in ops 0-1, b in 1-2, y from op 2 on.
    # live: op 0 x+a = 128, op 1 x+a+b = 192, op 2 x+b+y = 192.
    assert _live(report) == [128, 192, 192]
    assert (mem.peak_live_bytes, mem.peak_op) == (192, "0:1")
    # Arena: x@0, a@64, b@128 (overlaps x and a), y reuses a's place @64 (a is dead by op 2): 192.
    assert mem.arena_bytes == 192
    assert mem.activations_total_bytes == 4 * 64
    # TFLM lifetimes (scope per op, inputs from 0): x [0,1], a [1,2], b [2,3], y [3,3];
    # largest first, ties in tensor order: x@0, a@64, b@0 (x is gone), y@64 -> 128.
    assert mem.tflm_arena_bytes == 128
    assert mem.weights_bytes == 0 and mem.persistent_arena_bytes == 0


def test_residual_block_keeps_the_branch_alive_and_adds_in_place():
    # x -RELU-> a -RELU-> b; c = ADD(a, b); y = RELU(c); all [1,16] float32 = 64 B.
    report = tflite_flops.analyze(_model([(RELU, [0], [1]), (RELU, [1], [2]), (ADD, [1, 2], [3]), (RELU, [3], [4])],
                                         [[1, 16]] * 5, [0], [4]))
    mem = report.memory
    # ADD may write over input 0 (a: read twice, refused) or input 1 (b: read once): c shares b's buffer.
    assert mem.subgraphs[0].shared_tensors == 1 and mem.subgraphs[0].buffers == 4
    # a must stay alive across the branch (ops 0-2); b/c from op 1 to op 3.
    # live: op 0 x+a = 128, op 1 x+a+b = 192, op 2 x+a+b = 192, op 3 x+b+y = 192.
    assert _live(report) == [128, 192, 192, 192]
    # x@0, a@64, b@128, y@64 (a freed at op 2): arena 192; no reuse: 5 tensors · 64 = 320.
    assert (mem.arena_bytes, mem.activations_total_bytes, mem.peak_op) == (192, 320, "0:1")


def test_concat_and_alignment():
    # a = RELU(x), b = RELU(x), y = CONCAT(a, b): x, a, b [1,8] = 32 B; y [1,16] = 64 B.
    report = tflite_flops.analyze(_model([(RELU, [0], [1]), (RELU, [0], [2]), (CONCATENATION, [1, 2], [3])],
                                         [[1, 8], [1, 8], [1, 8], [1, 16]], [0], [3]))
    mem = report.memory
    assert _live(report) == [64, 96, 160]  # op 2: x + a + b + y = 32 + 32 + 32 + 64
    # x@0 (whole run); then by size: y@64 (32 aligned up to 64), a@128, b@192 (160 aligned): 192 + 32 = 224.
    assert mem.arena_bytes == 224
    assert mem.activations_total_bytes == 4 * 64  # every tensor at its own 64-byte-aligned place
    # TFLM: y [3,3]@0, x [0,2]@0, a [1,3]@64, b [2,3]@96 -> 128.
    assert mem.tflm_arena_bytes == 128


def test_greedy_plan_is_first_fit_largest_first():
    # 96 B [0,1] @0; 64 B [1,2] @96; 32 B [2,3] fits in 0..96 (the 96 B buffer is dead) @0 -> 160.
    assert greedy_plan([(32, 2, 3), (96, 0, 1), (64, 1, 2)]) == 160


def test_while_loop_arenas_and_nested_peak(samples_dir):
    report = tflite_flops.analyze(samples_dir / "lstm.tflite")
    mem = report.memory
    by_sg = {s.subgraph: s for s in mem.subgraphs}
    assert set(by_sg) == {0, 1, 2, 3, 4}  # the main graph and both WHILE loops' cond and body
    assert mem.arena_bytes == sum(s.arena_bytes for s in mem.subgraphs)  # TFLite holds every subgraph's arena
    # The peak counts what the caller holds while the body runs: live bytes at the WHILE op plus
    # the body's own peak, read from the per-op figures of the report.
    ops = {(o.subgraph, o.index): o for o in report.ops}
    whiles = [o for o in report.ops if o.op_type == "WHILE" and o.subgraph == 0]
    model = load_model(samples_dir / "lstm.tflite")
    candidates = []
    for w in whiles:
        body = model.subgraphs[0].operators[w.index].subgraph_refs["body_subgraph_index"]
        body_peak = max(o.live_bytes for o in report.ops if o.subgraph == body)
        candidates.append(w.live_bytes + body_peak)
    assert mem.peak_live_bytes == max(candidates)
    assert ops[tuple(int(x) for x in mem.peak_op.split(":"))].subgraph in (2, 4)


def test_persistent_arena_holds_the_dequantized_weights(samples_dir):
    mem = tflite_flops.analyze(samples_dir / "cnn_fp16.tflite").memory
    float_params = tflite_flops.analyze(samples_dir / "cnn_float.tflite").totals.param_bytes
    # DEQUANTIZE of the fp16 weights runs at init; TFLite keeps the float32 copies in its persistent
    # arena: about the float model's weight bytes (each copy aligned to 64 bytes).
    assert float_params <= mem.persistent_arena_bytes < float_params + 64 * 16
    assert mem.arena_bytes == tflite_flops.analyze(samples_dir / "cnn_float.tflite").memory.arena_bytes


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_has_the_figures_and_the_order(samples_dir, name):
    report = tflite_flops.analyze(samples_dir / f"{name}.tflite")
    mem = report.memory
    assert 0 < mem.peak_live_bytes <= mem.arena_bytes <= mem.activations_total_bytes
    assert all(isinstance(v, int) for v in (mem.arena_bytes, mem.tflm_arena_bytes, mem.weights_bytes))
    for sub in mem.subgraphs:
        assert sub.peak_live_bytes <= sub.arena_bytes <= sub.activations_total_bytes
    assert Report.from_json(report.to_json()) == report


@pytest.mark.parametrize("shape", ["1x32x32x3", "1x64x96x3", "2x128x128x3"])
def test_dynamic_model_memory_follows_the_input_shape(samples_dir, shape):
    report = tflite_flops.analyze(samples_dir / "fcn_dynamic.tflite", input_shapes=shape)
    mem = report.memory
    n, h, w, _ = (int(d) for d in shape.split("x"))
    assert mem.complete
    assert mem.peak_live_bytes <= mem.arena_bytes <= mem.activations_total_bytes
    # The sweep finds arena = 36·H·W at batch 1; the arena is linear in the batch too.
    assert mem.arena_bytes == 36 * n * h * w


def test_html_draws_the_live_bytes_with_the_peak(samples_dir):
    from tflite_flops.render import render

    report = tflite_flops.analyze(samples_dir / "lstm.tflite")
    page = render(report, "html")
    section = page[page.index('<section id="memory">'):]
    section = section[:section.index("</section>")]
    # one profile per subgraph arena (5: the main graph, two loops' cond and body)
    assert section.count("<svg") == 5 and section.count("<polygon") == 5
    sub0 = [o.live_bytes for o in report.ops if o.subgraph == 0]
    peak = max(range(len(sub0)), key=sub0.__getitem__)
    assert f"at op {peak}</text>" in section  # the main graph's peak is marked
    assert "61,440" in render(tflite_flops.analyze(samples_dir / "cnn_float.tflite"), "html")


def test_cli_json_has_memory_and_live_bytes(samples_dir):
    out = cli_process.run(["analyze", str(samples_dir / "cnn_int8.tflite"), "--format", "json"], check=True).stdout
    data = json.loads(out)
    for key in ("activations_total_bytes", "peak_live_bytes", "peak_op", "arena_bytes", "tflm_arena_bytes",
                "weights_bytes"):
        assert key in data["memory"]
    assert all(isinstance(o["live_bytes"], int) for o in data["ops"] if o["phase"] == "inference")


@pytest.mark.slow
def test_max_arena_gate(samples_dir, tmp_path):
    # The gate reads LiteRT's arena with the kernel temporaries: at 1 thread 72,704 bytes (the
    # tensors alone: 61,440); at 4 threads the float CONV_2Ds drop im2col: 61,440.
    path = str(samples_dir / "cnn_float.tflite")
    over = cli_process.run(["analyze", path, "--max-arena", "64KiB"])
    assert over.returncode == 3 and "budget exceeded: arena (LiteRT, 1 thread(s), XNNPACK off)" in over.stderr
    assert cli_process.run(["analyze", path, "--max-arena", "72704"]).returncode == 0
    assert cli_process.run(["analyze", path, "--max-arena", "64KiB", "--threads", "4"]).returncode == 0
    budget = tmp_path / "b.toml"
    budget.write_text('[budget]\nmax_arena = "70K"\n')
    assert cli_process.run(["analyze", path, "--budget", str(budget)]).returncode == 3
    report = tflite_flops.analyze(path)
    assert check_budget(report, max_arena=72_704) == [] and check_budget(report, max_arena="2MiB") == []
    assert check_budget(report, max_arena=72_703)
    tensors_only = replace(report, memory=replace(report.memory, runtime=None))  # a report without the figure
    assert check_budget(tensors_only, max_arena=61_440) == [] and check_budget(tensors_only, max_arena=61_439)


# ---- the planners against brute force --------------------------------------------------------------


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two inclusive step ranges share a step (a range whose end is before its start has none)."""
    return max(a[0], b[0]) <= min(a[1], b[1])


def _brute_place(buffers, alignment, floor=0):
    """Every buffer compared with every placed one: SimpleMemoryArena::Allocate (alignment > 0) or
    GreedyMemoryPlanner's first fit (0), scanning the buffers alive with it by offset."""
    placed, offsets = [], []
    for size, lo, hi in buffers:
        others = sorted((at, end) for span, at, end in placed if _overlap(span, (lo, hi)))
        if hi < lo:
            at = 0
        elif alignment:
            best = fit = None
            current = floor
            for offset, end in others:
                start = align(current, alignment)
                if start + size <= offset and (fit is None or offset - start < fit):
                    best, fit = start, offset - current
                    if fit == 0:
                        break
                current = max(current, end)
            at = best if best is not None else align(current, alignment)
        else:
            at = floor
            for offset, end in others:
                if offset - at >= size:
                    break
                at = max(at, end)
        placed.append(((lo, hi), at, at + size))
        offsets.append(at)
    return offsets, max([floor] + [end for _, _, end in placed])


def _random_buffers(rng, steps, count, sizes=None):
    buffers = []
    for _ in range(count):
        size = rng.choice(sizes) if sizes else rng.randrange(0, 300)
        lo = rng.randrange(steps)
        shape = rng.random()
        if shape < 0.1:
            hi = lo - 1 - rng.randrange(lo + 1)  # read before written: an empty lifetime
        elif shape < 0.3:
            hi = lo
        elif shape < 0.4:
            hi = steps - 1
        else:
            hi = rng.randrange(lo, steps)
        buffers.append((size, lo, hi))
    if rng.random() < 0.3:
        buffers.sort(key=lambda b: -b[0])  # largest first, as both planners order them
    return buffers


@pytest.mark.slow
def test_place_buffers_is_the_brute_force_planner():
    rng = random.Random(20240611)
    for _ in range(1500):
        steps = rng.choice([1, 2, 3, 5, 12, 40])
        buffers = _random_buffers(rng, steps, rng.choice([0, 1, 2, 4, 9, 25]),
                                  rng.choice([None, [0, 1, 64], [16, 32, 48, 64], [64]]))
        for alignment in (0, 1, 16, 64):
            assert place_buffers(buffers, steps, alignment) == _brute_place(buffers, alignment), (buffers, alignment)


def test_a_floor_is_buffers_alive_throughout_placed_before():
    # plan_subgraph lays TFLite's whole-run buffers end to end and places the others above them
    rng = random.Random(7)
    for _ in range(800):
        steps = rng.choice([1, 3, 8, 30])
        whole = [(rng.randrange(1, 200), 0, steps - 1) for _ in range(rng.randrange(1, 4))]
        rest = [b for b in _random_buffers(rng, steps, rng.randrange(12)) if b[0] > 0]
        for alignment in (0, 16, 64):
            offsets, arena = _brute_place(whole + rest, alignment)
            top = offsets[len(whole) - 1] + whole[-1][0]
            assert place_buffers(rest, steps, alignment, floor=top) == (offsets[len(whole):], arena)


def test_greedy_plan_is_the_brute_force_first_fit_largest_first():
    rng = random.Random(11)
    for _ in range(1000):
        steps = rng.choice([1, 2, 4, 10, 30])
        buffers = [(size, lo - 1, hi - 1) for size, lo, hi in _random_buffers(rng, steps, rng.randrange(20))]
        ordered = sorted(buffers[::-1], key=lambda b: -b[0])  # stable: ties in the reverse of the added order
        assert greedy_plan(buffers) == _brute_place(ordered, 0)[1], buffers


def test_never_used_buffers_are_stacked_apart_exactly():
    """first_fit_arena's shortcut for TFLM's never-used tensors (step 0) gives place_buffers' arena,
    with and without a buffer that is read but never written (alive from step 0 on)."""
    rng = random.Random(29)
    for _ in range(600):
        steps = rng.choice([1, 2, 5, 12])
        buffers = _random_buffers(rng, steps, rng.randrange(15))
        buffers += [(rng.choice([0, 16, 32, 48]), 0, 0) for _ in range(rng.randrange(12))]
        if rng.random() < 0.3:
            buffers.append((rng.randrange(1, 100), 0, rng.randrange(steps)))
        buffers.sort(key=lambda b: -b[0])
        assert first_fit_arena(buffers, steps) == place_buffers(buffers, steps)[1], buffers


def test_two_plans_sharing_their_first_buffers_are_the_two_plans():
    """first_fit_arenas (TFLM's head without and with the scratch buffers) places the buffers both orders
    begin with once: the same two arenas as two first_fit_arena."""
    rng = random.Random(31)
    for _ in range(600):
        steps = rng.choice([1, 2, 5, 12])
        tensors = _random_buffers(rng, steps, rng.randrange(15))
        tensors += [(rng.choice([0, 16, 32]), 0, 0) for _ in range(rng.randrange(4))]
        scratch = [(rng.choice([16, 48, 512]), lo, lo) for lo in (rng.randrange(steps) for _ in range(rng.randrange(4)))]
        first, second = greedy_order(list(tensors)), greedy_order(tensors + scratch)
        assert first_fit_arenas(first, second, steps) == (first_fit_arena(first, steps),
                                                          first_fit_arena(second, steps)), (tensors, scratch)


def _variable_model() -> bytes:
    """x -SHAPE-> s; r = RESHAPE(x, s); y = ADD(r, v) with v a variable; z = RELU(y); all [1,16] float32."""
    SHAPE, RESHAPE = 77, 22
    codes = [ADD, RELU, SHAPE, RESHAPE]
    shapes = [[1, 16], [2], [1, 16], [1, 16], [1, 16], [1, 16]]
    tensors = [{"name": f"t{i}", "shape": s, "type": 2 if i == 1 else FLOAT32, **({"variable": True} if i == 3 else {})}
               for i, s in enumerate(shapes)]
    ops = [(SHAPE, [0], [1]), (RESHAPE, [0, 1], [2]), (ADD, [2, 3], [4]), (RELU, [4], [5])]
    sg = {"tensors": tensors, "operators": [{"opcode": codes.index(c), "inputs": i, "outputs": o} for c, i, o in ops],
          "inputs": [0], "outputs": [5], "name": "main"}
    return build_model([sg], codes)


def planner_inputs(model, states) -> tuple[dict, dict]:
    """``({subgraph: tensor sizes}, {subgraph: constant flags})`` at the resolved shapes, as the planners take them."""
    sizes, constant = {}, {}
    for sg in model.subgraphs:
        tensors = subgraph_tensors(sg, states[sg.index])
        sizes[sg.index] = tensor_sizes(sg, states[sg.index].shapes, tensors.constant, tensors.numel, tensors.stored)
        constant[sg.index] = tensors.constant
    return sizes, constant


@pytest.mark.parametrize("name", SAMPLES + ["tiny_decoder", "tiny_decoder_kv", "variable"])
def test_the_summary_is_what_the_public_planners_give(samples_dir, name):
    # analyze() plans through a one-pass path of its own; the public functions must agree with it.
    source = _variable_model() if name == "variable" else samples_dir / f"{name}.tflite"
    model = load_model(source)
    report = tflite_flops.analyze(model)
    states = resolve_shapes(model)
    sizes, constant = planner_inputs(model, states)
    reached = [s.subgraph for s in report.memory.subgraphs]
    kinds_of = {i: allocation_kinds(model.subgraphs[i], sizes[i], constant[i], states[i].derived_constant)
                for i in reached}
    calls = {(sg.index, op.index): tuple(op.subgraph_refs.values()) for sg in model.subgraphs for op in sg.operators
             if op.subgraph_refs}
    control_flow_kinds(model, reached, calls, kinds_of, states)  # WHILE/IF: what callees and callers hold
    for sub in report.memory.subgraphs:
        sg = model.subgraphs[sub.subgraph]
        kinds = kinds_of[sg.index]
        plan = plan_subgraph(sg, sizes[sg.index], kinds)
        ours = (sub.arena_bytes, sub.persistent_bytes, sub.activations_total_bytes, sub.buffers, sub.shared_tensors)
        assert ours == (plan.arena_bytes, plan.persistent_bytes, plan.activations_total_bytes, len(plan.offsets),
                        len(plan.shared))
        assert [o.live_bytes for o in report.ops if o.subgraph == sg.index] == list(plan.live)
    assert report.memory.tflm_arena_bytes == tflm_arena(model, 0, sizes, constant)
    if name == "variable":  # the variable is persistent, SHAPE's output prepared; RESHAPE may not write
        # over x (a subgraph input), ADD writes y over r (read once, same size)
        assert kinds[3] == "arena_rw_persistent" and kinds[1] == "persistent_ro" and plan.shared == {4: 2}


# ---- the real planners ----------------------------------------------------------------------------

_TFLM_SCRIPT = """
import sys
from tflite_micro.python.tflite_micro import runtime
interpreter = runtime.Interpreter.from_bytes(open(sys.argv[1], "rb").read())
interpreter.print_allocations()
"""


# TFLM runs no dynamic shapes, no float16 DEQUANTIZE, no hybrid kernels and fewer ops: it cannot
# run cnn_fp16, cnn_dynamic_range, fcn_dynamic or transformer_block. The others must run there.
TFLM_SAMPLES = [s for s in SAMPLES if s not in ("cnn_fp16", "cnn_dynamic_range", "fcn_dynamic", "transformer_block")]


@pytest.mark.micro
@pytest.mark.slow
@pytest.mark.parametrize("name", TFLM_SAMPLES)
def test_tflm_arena_matches_the_micro_interpreter(samples_dir, name):
    path = str(samples_dir / f"{name}.tflite")
    # The interpreter prints its RecordingMicroAllocator summary from C++; run it in a subprocess.
    run = subprocess.run([sys.executable, "-c", _TFLM_SCRIPT, path], capture_output=True, text=True, timeout=120)
    head = re.search(r"Arena allocation head (\d+) bytes", run.stdout + run.stderr)
    assert run.returncode == 0 and head is not None, run.stderr[-500:]
    ours = tflite_flops.analyze(path).memory.tflm_arena_bytes
    # The head is the planned tensors plus kernel scratch buffers; these models' kernels ask for none.
    assert abs(ours - int(head.group(1))) <= 0.05 * int(head.group(1))
    assert ours == int(head.group(1))


def _litert_offsets(path: str) -> dict[int, tuple[int, int]]:
    """{tensor: (buffer address, bytes)} of subgraph 0 after allocate_tensors, builtin kernels only."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(model_path=path,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    out = {}
    for d in interpreter.get_tensor_details():
        try:
            array = interpreter.tensor(d["index"])()
        except ValueError:
            continue
        if isinstance(array, np.ndarray) and array.nbytes:  # a rank-0 tensor comes back as a scalar copy
            out[d["index"]] = (array.ctypes.data, array.nbytes)
    return out


def _our_plan(path: str):
    model = load_model(path)
    state = resolve_shapes(model)[0]
    sg = model.subgraphs[0]
    sizes = tensor_sizes(sg, state.shapes)
    kinds = allocation_kinds(sg, sizes, subgraph_tensors(sg, state).constant, state.derived_constant)
    return sg, plan_subgraph(sg, sizes, kinds)


def _temporary_free_model(tmp_path) -> str:
    """Dense, ReLU, Add, Reshape, Softmax, Concatenate: kernels that ask for no temporaries."""
    import tensorflow as tf

    from tflite_flops.convert import to_tflite

    x = tf.keras.Input((16,), batch_size=1, name="x")
    a = tf.keras.layers.Dense(32, activation="relu")(x)
    b = tf.keras.layers.Dense(32)(a)
    c = tf.keras.layers.Add()([a, b])
    d = tf.keras.layers.Softmax()(tf.keras.layers.Reshape((4, 8))(c))
    e = tf.keras.layers.Concatenate()([tf.keras.layers.Reshape((32,))(d), c])
    model = tf.keras.Model(x, tf.keras.layers.Dense(10)(e))
    path = tmp_path / "chain.tflite"
    path.write_bytes(to_tflite(model))
    return str(path)


@pytest.mark.runtime
@pytest.mark.tf
def test_arena_offsets_match_litert_on_a_model_without_kernel_temporaries(tmp_path):
    path = _temporary_free_model(tmp_path)
    sg, plan = _our_plan(path)
    real = _litert_offsets(path)
    assert all(t < len(sg.tensors) for t in real)  # no kernel temporaries in this model
    base = real[sg.inputs[0]][0] - plan.offsets[sg.inputs[0]]
    for t, offset in plan.offsets.items():  # every arena buffer where LiteRT put it
        assert real[t][0] - base == offset, sg.tensors[t].name
    for out, src in plan.shared.items():  # in-place outputs share their input's buffer
        assert real[out][0] == real[src][0]
    assert len(plan.shared) >= 4  # ADD, RESHAPE, SOFTMAX, RESHAPE written in place
    extent = max(a - base + n for t, (a, n) in real.items() if t in plan.offsets)
    assert extent == plan.arena_bytes == tflite_flops.analyze(path).memory.arena_bytes


@pytest.mark.runtime
@pytest.mark.parametrize("name, real_arena", [("transformer_block", 12_288), ("cnn_float", 72_704)])
def test_arena_against_litert_on_samples(samples_dir, name, real_arena):
    path = str(samples_dir / f"{name}.tflite")
    sg, plan = _our_plan(path)
    real = _litert_offsets(path)
    # Both models' kernels ask for temporaries (BATCH_MATMUL and MEAN scratch, CONV_2D im2col), which
    # LiteRT plans in the same arena and we do not: ours is the tensors' part. In the transformer
    # block the temporaries fit in gaps of the tensors' plan; in the CNN, im2col buffers of
    # 36,864 B and 27,648 B push the arena from 61,440 B (the tensors) to 72,704 B.
    assert any(t >= len(sg.tensors) for t in real)
    base = real[sg.inputs[0]][0] - plan.offsets[sg.inputs[0]]
    # The arena's extent as LiteRT laid it out: where its last tensor ends (the persistent arena and
    # the temporaries' other buffers are separate allocations, anywhere in the address space).
    extent = max(real[t][0] - base + real[t][1] for t in plan.offsets if t in real)
    assert extent == real_arena
    assert plan.arena_bytes <= extent
    assert plan.arena_bytes == {"transformer_block": 12_288, "cnn_float": 61_440}[name]


def test_dequantize_of_a_densify_output_is_an_arena_tensor():
    """dequantize.cc Prepare keeps its output in the persistent arena only when its input is a file
    constant (IsConstantTensor: kTfLiteMmapRo); a DENSIFY output is a persistent arena tensor, not a
    file constant, so its DEQUANTIZE writes an arena tensor at every run."""
    FLOAT16, DENSIFY, DEQUANTIZE = 1, 124, 6
    codes = [ADD, DENSIFY, DEQUANTIZE]
    w = np.arange(16, dtype=np.float16).tobytes()
    # x [1,16] f32 in; w [1,16] f16 const; d = DENSIFY(w); f = DEQUANTIZE(d); g = DEQUANTIZE(w);
    # y = ADD(x, f); z = ADD(y, g) out
    tensors = [{"name": "x", "shape": [1, 16], "type": FLOAT32}, {"name": "w", "shape": [1, 16], "type": FLOAT16,
                                                                  "buffer": 1},
               {"name": "d", "shape": [1, 16], "type": FLOAT16}, {"name": "f", "shape": [1, 16], "type": FLOAT32},
               {"name": "g", "shape": [1, 16], "type": FLOAT32}, {"name": "y", "shape": [1, 16], "type": FLOAT32},
               {"name": "z", "shape": [1, 16], "type": FLOAT32}]
    ops = [(DENSIFY, [1], [2]), (DEQUANTIZE, [2], [3]), (DEQUANTIZE, [1], [4]), (ADD, [0, 3], [5]), (ADD, [5, 4], [6])]
    sg = {"tensors": tensors, "operators": [{"opcode": codes.index(c), "inputs": i, "outputs": o} for c, i, o in ops],
          "inputs": [0], "outputs": [6], "name": "main"}
    model = load_model(build_model([sg], codes, buffers=[None, w]))
    state = resolve_shapes(model)[0]
    sgm = model.subgraphs[0]
    sizes = tensor_sizes(sgm, state.shapes)
    kinds = allocation_kinds(sgm, sizes, subgraph_tensors(sgm, state).constant, state.derived_constant)
    assert kinds[2] == "arena_rw_persistent" and kinds[4] == "arena_rw_persistent"  # DENSIFY(w), DEQUANTIZE(w)
    assert kinds[3] == "arena_rw"  # DEQUANTIZE(d)
    # persistent arena: g (64 B, from op 2) and d (32 B, from op 0), largest first: g@0, d@64 -> 96
    # (f there too would make it 160)
    assert tflite_flops.analyze(model).memory.persistent_arena_bytes == 96
