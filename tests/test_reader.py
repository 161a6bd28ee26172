"""Parser tests on tiny models built in memory with the flatbuffers Builder and the ``tflite``
generated builder functions (the approach of TFLite's own ``flatbuffer_utils`` tests).

The builder is in ``tflite_builder.py``.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import tflite
from flatbuffers import flexbuffers

import tflite_flops
from tflite_flops.reader import columnar, schema
from tflite_flops.reader.flatbuffer_layout import plain
from tflite_flops.errors import ModelFormatError
from tflite_flops.reader.flatbuffer_layout import UNION, UNKNOWN, Span
from tflite_flops.reader.load import load_model

from redteam import flex_bomb
from reference_verifier import decode_options
from tflite_builder import ADD, CUSTOM, FLOAT32, FULLY_CONNECTED, INT8, build_model, control_flow_model, fc_model
from work_counter import count_calls

# ---------------------------------------------------------------------------------------------


def test_fc_model_reads_and_costs():
    model = load_model(fc_model())
    sg = model.main
    assert model.description == "fc test model"
    assert [t.name for t in sg.tensors] == ["x", "w", "b", "y"]
    op = sg.operators[0]
    assert op.op_type == "FULLY_CONNECTED"
    assert op.options["fused_activation_function"] == "RELU"
    assert op.options["keep_num_dims"] is False
    np.testing.assert_array_equal(model.constant(sg.tensors[1]), np.arange(12, dtype=np.float32).reshape(3, 4))
    report = tflite_flops.analyze(fc_model())
    assert report.totals.macs == 12  # 1·3 outputs · 4 inputs = 12


def test_old_file_with_only_deprecated_builtin_code():
    # Files written before schema v3a have no builtin_code field: the code is in the int8 field.
    data = fc_model({"builtin": None, "deprecated": FULLY_CONNECTED})
    assert load_model(data).main.operators[0].op_type == "FULLY_CONNECTED"


def test_builtin_code_above_127_uses_the_int32_field():
    # Codes >= 127 store the placeholder 127 in deprecated_builtin_code and the real code in builtin_code.
    code = schema.BUILTIN_CODES["GELU"]
    assert code >= 127
    op = load_model(fc_model({"builtin": code, "deprecated": 127})).main.operators[0]
    assert op.op_type == "GELU" and op.builtin_code == code


def test_opcode_beyond_the_enum_is_unsupported_not_an_error():
    data = fc_model({"builtin": 250, "deprecated": 127})
    op = load_model(data).main.operators[0]
    assert op.op_type == "UNKNOWN_250"
    report = tflite_flops.analyze(data)
    assert report.ops[0].status == "unsupported"
    assert report.unsupported == {"UNKNOWN_250": 1}


def test_unknown_options_union_type_is_accepted_and_not_decoded():
    def table(b):
        tflite.AddOptionsStart(b)
        return tflite.AddOptionsEnd(b)

    sg = {"tensors": [{"shape": [2]}, {"shape": [2]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1], "raw_options": (250, table)}]}
    op = load_model(build_model([sg], [ADD])).main.operators[0]
    assert op.op_type == "ADD" and dict(op.options) == {}


def test_byte_vector_of_options_is_a_tuple_of_ints():
    # StableHLOCompositeOptions.composite_attributes: a byte vector the verifier decodes (and
    # counts against its budget) instead of returning a span; two ops share the table
    shared: list[int] = []

    def table(b):
        if not shared:
            attributes = b.CreateByteVector(bytes([1, 2, 250]))
            name = b.CreateString("odml.rms_norm")
            tflite.StableHLOCompositeOptionsStart(b)
            tflite.StableHLOCompositeOptionsAddName(b, name)
            tflite.StableHLOCompositeOptionsAddCompositeAttributes(b, attributes)
            tflite.StableHLOCompositeOptionsAddDecompositionSubgraphIndex(b, 1)
            shared.append(tflite.StableHLOCompositeOptionsEnd(b))
        return shared[0]

    op = {"opcode": 0, "inputs": [0], "outputs": [1], "raw_options_2": (21, table)}  # 21: StableHLOCompositeOptions
    sgs = [{"tensors": [{"shape": [2]}, {"shape": [2]}], "inputs": [0], "outputs": [1], "operators": ops}
           for ops in ([op, op], [])]
    data = build_model(sgs, [206])  # STABLEHLO_COMPOSITE
    ops = load_model(data).main.operators
    fop = tflite.Model.GetRootAs(data, 0).Subgraphs(0).Operators(0)
    assert ops[0].options["composite_attributes"] == (1, 2, 250)
    assert dict(ops[0].options) == dict(ops[1].options) == dict(decode_options(fop, len(data)))


def test_custom_op_name_and_flexbuffer_options():
    fbb = flexbuffers.Builder()
    with fbb.Map():
        fbb.Int("k", 7)
        fbb.String("mode", "fast")
    sg = {"tensors": [{"name": "x", "shape": [1, 8]}, {"name": "y", "shape": [1, 8]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1], "custom_options": bytes(fbb.Finish())}]}
    data = build_model([sg], [{"builtin": CUSTOM, "custom": "MyUnregisteredOp"}])
    op = load_model(data).main.operators[0]
    assert op.op_type == "CUSTOM:MyUnregisteredOp"
    assert op.custom_code == "MyUnregisteredOp"
    assert dict(op.options) == {"k": 7, "mode": "fast"}
    # A model the runtime cannot load (unregistered custom op) still gets its static report.
    report = tflite_flops.analyze(data)
    assert report.unsupported == {"CUSTOM:MyUnregisteredOp": 1}
    assert report.ops[0].op_type == "CUSTOM:MyUnregisteredOp"


def test_flexbuffer_options_whose_children_are_shared_are_refused_with_linear_work():
    # A 780-byte file whose custom options share children used to decode for minutes and hundreds of MB.
    assert flexbuffers.Loads(flex_bomb(3)) == [[[1, 1], [1, 1]], [[1, 1], [1, 1]]]  # the encoding is real
    sg = {"tensors": [{"name": "x", "shape": [1, 8]}, {"name": "y", "shape": [1, 8]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1], "custom_options": flex_bomb(20)}]}
    data = build_model([sg], [{"builtin": CUSTOM, "custom": "Bomb"}])  # 2**20 leaves in 103 bytes of options
    counted = count_calls(load_model, data, limit=2_000_000)  # linear in the file: stops at 4 values a byte
    assert isinstance(counted.error, ModelFormatError), counted.error
    assert "decodes to more than" in str(counted.error) and "share children" in str(counted.error)
    deep = dict(sg, operators=[dict(sg["operators"][0], custom_options=flex_bomb(40))])
    with pytest.raises(ModelFormatError, match="nested more than 32 levels"):
        load_model(build_model([deep], [{"builtin": CUSTOM, "custom": "Bomb"}]))
    small = dict(sg, operators=[dict(sg["operators"][0], custom_options=flex_bomb(4))])
    assert load_model(build_model([small], [{"builtin": CUSTOM, "custom": "Bomb"}])).main.operators[0].options == {}


def test_large_custom_options_stored_outside_the_flatbuffer():
    payload = b"\x01\x02\x03\x04"
    sg = {"tensors": [{"shape": [1]}, {"shape": [1]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1], "large_custom_options": (1 << 20, 4)}]}
    first = build_model([sg], [{"builtin": CUSTOM, "custom": "Big"}])
    sg["operators"][0]["large_custom_options"] = (len(first), 4)
    data = build_model([sg], [{"builtin": CUSTOM, "custom": "Big"}])
    assert len(data) == len(first)
    op = load_model(data + payload).main.operators[0]
    assert op.custom_options == (len(data), 4)
    with pytest.raises(ModelFormatError, match="custom options"):
        load_model(data)  # the payload is missing: the range lies outside the file


def test_buffers_stored_by_offset_and_size_after_the_flatbuffer():
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    bias = np.ones(3, dtype=np.float32)

    def build(offsets):
        sg = {"tensors": [{"name": "x", "shape": [1, 4]}, {"name": "w", "shape": [3, 4], "buffer": 1},
                          {"name": "b", "shape": [3], "buffer": 2}, {"name": "y", "shape": [1, 3]}],
              "operators": [{"opcode": 0, "inputs": [0, 1, 2], "outputs": [3]}], "inputs": [0], "outputs": [3]}
        return build_model([sg], [FULLY_CONNECTED], buffers=[None, (offsets[0], 48), (offsets[1], 12)])

    head = build((1 << 40, 1 << 40))
    pad = (-len(head)) % 16
    data = build((len(head) + pad, len(head) + pad + 48))
    assert len(data) == len(head)
    blob = data + b"\0" * pad + w.tobytes() + bias.tobytes()
    model = load_model(blob)
    t = model.main.tensors[1]
    assert (t.data_offset, t.data_size) == (len(head) + pad, 48)
    np.testing.assert_array_equal(model.constant(t), w)
    np.testing.assert_array_equal(model.constant(model.main.tensors[2]), bias)
    assert tflite_flops.analyze(blob).totals.macs == 12
    with pytest.raises(ModelFormatError, match="outside"):
        load_model(data)  # the data after the flatbuffer is missing


def test_shape_signature_marks_dynamic_dims():
    sg = {"tensors": [{"name": "x", "shape": [1, 4], "shape_signature": [-1, 4]},
                      {"name": "y", "shape": [1, 4], "shape_signature": [-1, 4]}],
          "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1]}], "inputs": [0], "outputs": [1]}
    model = load_model(build_model([sg], [ADD]))
    x = model.main.tensors[0]
    assert x.shape == (1, 4) and x.shape_signature == (-1, 4) and x.is_dynamic
    static = load_model(fc_model()).main.tensors[0]
    assert static.shape_signature is None and not static.is_dynamic


def test_per_axis_and_per_tensor_quantization():
    w = np.zeros((3, 4), dtype=np.int8)
    sg = {"tensors": [{"name": "x", "shape": [1, 4], "type": INT8, "quant": {"scale": [0.5], "zero_point": [-3]}},
                      {"name": "w", "shape": [3, 4], "type": INT8, "buffer": 1,
                       "quant": {"scale": [0.25, 0.5, 0.75], "zero_point": [0, 0, 0], "axis": 0}},
                      {"name": "y", "shape": [1, 3], "type": INT8, "quant": {"scale": [1.0], "zero_point": [0]}}],
          "operators": [{"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]}], "inputs": [0], "outputs": [2]}
    model = load_model(build_model([sg], [FULLY_CONNECTED], buffers=[None, w.tobytes()]))
    x, wt, _ = model.main.tensors
    assert (x.quantization.kind, x.quantization.scale, x.quantization.zero_point) == ("per_tensor", 0.5, -3)
    q = wt.quantization
    assert (q.kind, q.axis, q.num_scales, q.scale) == ("per_axis", 0, 3, 0.25)
    assert model.main.operators[0].inputs == (0, 1, -1)  # -1: the omitted bias


def test_sparsity_parameters():
    sparse = {"traversal_order": [0, 1, 2, 3], "block_map": [0, 1],
              "dims": [(0, 2, None, None), (1, 0, [0, 1, 2], [0, 1]), (0, 2, None, None), (0, 2, None, None)]}
    sg = {"tensors": [{"name": "w", "shape": [4, 4], "buffer": 1, "sparsity": sparse}, {"shape": [4, 4]}],
          "operators": [{"opcode": 0, "inputs": [0], "outputs": [1]}], "inputs": [], "outputs": [1]}
    model = load_model(build_model([sg], [schema.BUILTIN_CODES["DENSIFY"]], buffers=[None, b"\0" * 32]))
    s = model.main.tensors[0].sparsity
    assert s.traversal_order == (0, 1, 2, 3) and s.block_map == (0, 1)
    assert s.dim_formats == ("DENSE", "SPARSE_CSR", "DENSE", "DENSE")
    assert s.dense_sizes == (2, 0, 2, 2)


def test_signature_defs_and_description():
    data = build_model(
        [{"tensors": [{"name": "x", "shape": [2]}, {"name": "y", "shape": [2]}], "inputs": [0], "outputs": [1],
          "operators": [{"opcode": 0, "inputs": [0, 0], "outputs": [1]}]}],
        [ADD], description="signed", signatures=[{"key": "serving_default", "inputs": {"input_x": 0},
                                                  "outputs": {"output_y": 1}}])
    model = load_model(data)
    assert model.description == "signed"
    (sig,) = model.signatures
    assert (sig.key, sig.subgraph_index, dict(sig.inputs), dict(sig.outputs)) == (
        "serving_default", 0, {"input_x": 0}, {"output_y": 1})



def test_acyclic_control_flow_loads():
    data = control_flow_model({0: ("WhileOptions", {"cond_subgraph_index": 1, "body_subgraph_index": 2}),
                                2: ("CallOnceOptions", {"init_subgraph_index": 3})}, 4)
    assert len(load_model(data).subgraphs) == 4


@pytest.mark.parametrize("edges", [
    {0: ("WhileOptions", {"cond_subgraph_index": 1, "body_subgraph_index": 0})},  # direct self-call
    {0: ("WhileOptions", {"cond_subgraph_index": 1, "body_subgraph_index": 2}),  # 0 -> 2 -> 3 -> 2
     2: ("IfOptions", {"then_subgraph_index": 3, "else_subgraph_index": 1}),
     3: ("CallOnceOptions", {"init_subgraph_index": 2})},
    {1: ("CallOnceOptions", {"init_subgraph_index": 2}), 2: ("CallOnceOptions", {"init_subgraph_index": 1})},
], ids=["self", "while-if-call_once", "unreached-pair"])
def test_subgraph_reference_cycles_are_refused_at_load(edges):
    with pytest.raises(ModelFormatError, match="cycle"):
        load_model(control_flow_model(edges, 4))


def _if_chain(n: int) -> bytes:
    """IF(then=i+1, else=i+1) chained ``n`` deep: a walk would visit 2**n subgraphs."""
    return control_flow_model(
        {i: ("IfOptions", {"then_subgraph_index": i + 1, "else_subgraph_index": i + 1}) for i in range(n - 1)}, n)


def test_exponential_call_graph_is_refused_with_linear_work():
    # Work, not time: the function calls load_model makes (the same count on every machine).
    # 4 times the subgraphs may cost at most ~4 times the calls; an expanded walk would cost 2**48
    # times more, and WorkLimitExceeded stops it long before. (64: the deepest nesting accepted.)
    load_model(_if_chain(2))  # first-use costs (caches, lazy imports) are not counted below
    work = {}
    for n in (16, 64):
        counted = count_calls(load_model, _if_chain(n), limit=1_000_000)
        assert isinstance(counted.error, ModelFormatError) and "expand" in str(counted.error)
        work[n] = counted.calls
    assert work[64] <= 4.5 * work[16], work
    counted = count_calls(load_model, _if_chain(160), limit=1_000_000)  # deeper: refused for its depth
    assert isinstance(counted.error, ModelFormatError) and "nest more than 64 levels" in str(counted.error)


def test_out_of_range_indices_are_refused():
    bad_tensor = fc_model()
    sg = {"tensors": [{"shape": [1]}], "operators": [{"opcode": 0, "inputs": [0, 5], "outputs": [0]}],
          "inputs": [0], "outputs": [0]}
    with pytest.raises(ModelFormatError, match="tensor 5"):
        load_model(build_model([sg], [ADD]))
    sg["operators"][0] = {"opcode": 3, "inputs": [0, 0], "outputs": [0]}
    with pytest.raises(ModelFormatError, match="opcode index 3"):
        load_model(build_model([sg], [ADD]))
    sg["operators"][0] = {"opcode": 0, "inputs": [0, 0], "outputs": [0]}
    sg["tensors"][0]["buffer"] = 9
    with pytest.raises(ModelFormatError, match="buffer index 9"):
        load_model(build_model([sg], [ADD]))
    assert load_model(bad_tensor)  # the unmodified model is fine


# -- the verifier itself ------------------------------------------------------------------------


def _find_vector(data: bytes, values: list[int]) -> int:
    """Byte offset of the length field of the int32 vector holding ``values``."""
    needle = struct.pack(f"<I{len(values)}i", len(values), *values)
    pos = data.find(needle)
    assert pos >= 0
    return pos


def test_absurd_vector_length_is_refused_before_allocation():
    data = bytearray(fc_model())
    pos = _find_vector(bytes(data), [3, 4])  # the shape vector of "w"
    struct.pack_into("<I", data, pos, 2**31)
    # Memory and work, not time: 2**31 int32 elements would be 8 GB; the refusal comes first, so
    # the reader allocates no more than for a small file, and does no more work than reading the
    # intact model.
    intact = count_calls(load_model, fc_model())
    assert intact.error is None
    tracemalloc.start()
    try:
        counted = count_calls(load_model, bytes(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(counted.error, ModelFormatError) and "claims 2147483648 elements" in str(counted.error)
    assert peak < 1 << 20, peak
    assert counted.calls <= intact.calls


@pytest.mark.parametrize("patch, message", [
    (lambda d: struct.pack_into("<I", d, 0, len(d) + 100), "root table offset"),
    (lambda d: d.__setitem__(slice(4, 8), b"TFL2"), "file identifier"),
    (lambda d: struct.pack_into("<I", d, 0, 6), "root table offset"),
])
def test_header_corruption(patch, message):
    data = bytearray(fc_model())
    patch(data)
    with pytest.raises(ModelFormatError, match=message):
        load_model(bytes(data))


def test_vtable_and_alignment_checks():
    data = bytearray(fc_model())
    (root,) = struct.unpack_from("<I", data, 0)
    bad = bytearray(data)
    struct.pack_into("<i", bad, root, -(1 << 30))  # vtable far past the end
    with pytest.raises(ModelFormatError, match="vtable"):
        load_model(bytes(bad))
    bad = bytearray(data)
    struct.pack_into("<I", bad, 0, root + 1)  # misaligned root table
    with pytest.raises(ModelFormatError, match="misaligned"):
        load_model(bytes(bad))


def test_string_without_terminator_is_refused():
    data = bytearray(fc_model())
    pos = bytes(data).find(b"fc test model\0")
    data[pos + len("fc test model")] = ord("!")
    with pytest.raises(ModelFormatError, match="terminating zero"):
        load_model(bytes(data))


def test_table_count_and_depth_limits():
    data = fc_model()
    with pytest.raises(ModelFormatError, match="more than 5 tables"):
        columnar.decode(data, schema.MODEL_SCHEMA, max_tables=5)
    with pytest.raises(ModelFormatError, match="deeper than 2"):
        columnar.decode(data, schema.MODEL_SCHEMA, max_depth=2)
    assert columnar.decode(data, schema.MODEL_SCHEMA)["description"] == "fc test model"


def test_weights_are_spans_not_values():
    root = plain(columnar.decode(fc_model(), schema.MODEL_SCHEMA))
    data = root["buffers"][1]["data"]
    assert isinstance(data, Span) and data.count == 48


def test_layouts_cover_every_options_table():
    # Every options class of both unions yields a layout; the probe understood every accessor.
    for union in ("BuiltinOptions", "BuiltinOptions2"):
        field = next(f for f in schema.table_layout("Operator") if f.kind == UNION and
                     f.name == ("builtin_options" if union == "BuiltinOptions" else "builtin_options2"))
        assert len(field.union) > 10
        for name in field.union.values():
            assert all(f.kind != UNKNOWN for f in schema.table_layout(name)), name


def test_schema_tables_file_is_what_the_bindings_give():
    # schema_tables.json stands in for the bindings when a model is read (no import of their ~200
    # modules); it must be exactly what they give: rewrite it with schema.write_snapshot().
    import json

    with open(schema._TABLES_FILE, encoding="utf-8") as f:
        kept = json.load(f)
    assert kept == json.loads(json.dumps(schema.bindings_snapshot())), "run schema.write_snapshot()"
    for name, rows in kept["tables"].items():  # the defaults keep their type (0 and 0.0 and False)
        assert tuple(schema._field(r) for r in rows) == tuple(schema._binding_layout(name)), name
        assert [type(schema._field(r).default) for r in rows] == [type(f.default) for f in schema._binding_layout(name)]
    bound = tuple({code: cls.__name__ for code, cls in classes.items()}
                  for classes in (schema._OPTIONS_1, schema._OPTIONS_2))  # plus the tables newer than the bindings
    assert schema._OPTIONS_NAMES == (bound[0], {**schema._EXTRA_OPTIONS_2, **bound[1]})
    try:  # and it ships with the package
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
        assert "schema_tables.json" in tomllib.load(f)["tool"]["setuptools"]["package-data"]["tflite_flops.reader"]


def test_sample_models_match_the_bindings(samples_dir):
    # Cross-check the verifier's decoding against the generated bindings on real files.
    from tflite.Model import Model as FbModel
    for path in sorted(samples_dir.glob("*.tflite")):
        data = path.read_bytes()
        model = load_model(path)
        fb = FbModel.GetRootAs(data, 0)
        assert len(model.subgraphs) == fb.SubgraphsLength()
        for i, sg in enumerate(model.subgraphs):
            fsg = fb.Subgraphs(i)
            assert len(sg.tensors) == fsg.TensorsLength()
            for j, t in enumerate(sg.tensors):
                ft = fsg.Tensors(j)
                assert t.name == ft.Name().decode()
                assert t.shape == tuple(ft.ShapeAsNumpy().tolist()) if ft.ShapeLength() else t.shape == ()
                assert t.buffer == ft.Buffer()
            for j, op in enumerate(sg.operators):
                fop = fsg.Operators(j)
                assert op.inputs == tuple(fop.InputsAsNumpy().tolist())
                assert dict(op.options) == dict(decode_options(fop, len(data))) or op.op_type.startswith(
                    "CUSTOM:")


def test_decoded_element_budget(monkeypatch):
    monkeypatch.setattr(columnar, "MAX_DECODED", 3)
    with pytest.raises(ModelFormatError, match="vector elements"):
        load_model(fc_model())


@pytest.mark.slow  # a fresh process and a 64 MiB file: about a second
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_memory_does_not_grow_with_weights(tmp_path):
    # A 64 MiB weight: analysis in a fresh process must stay far below that above its baseline
    # (the reader never touches weight pages; zero counting releases them chunk by chunk).
    w = np.full((4096, 4096), 0.5, dtype=np.float32)
    sg = {"tensors": [{"name": "x", "shape": [1, 4096]}, {"name": "w", "shape": [4096, 4096], "buffer": 1},
                      {"name": "y", "shape": [1, 4096]}],
          "operators": [{"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]}], "inputs": [0], "outputs": [2]}
    path = tmp_path / "big.tflite"
    path.write_bytes(build_model([sg], [FULLY_CONNECTED], buffers=[None, w.tobytes()]))
    del w
    code = ("import sys, tflite_flops\n"
            "def kb(k):\n    return int(next(l for l in open('/proc/self/status') if l.startswith(k)).split()[1])\n"
            "base = kb('VmRSS'); r = tflite_flops.analyze(sys.argv[1]); assert r.totals.macs == 4096 * 4096\n"
            "print((kb('VmHWM') - base) // 1024)\n")
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr
    grown_mb = int(proc.stdout.strip().splitlines()[-1])
    assert grown_mb < 32, f"analysis grew RSS by {grown_mb} MB on a 64 MB model"


def test_batched_zero_counts_match_numpy():
    # Model.count_nonzeros (one pass over the range holding many weights) against NumPy on the
    # arrays the file was built from: float32 with -0.0 (a zero) and NaN (not one), int8 with a
    # zero point, weights too scattered or too big for the batch, and a tensor with no values.
    rng = np.random.default_rng(7)
    arrays = []
    for k in range(12):
        w = rng.standard_normal((8, 5 + k)).astype(np.float32)
        w[w < 0.3] = 0.0
        w[0, 0], w[1, 1] = -0.0, np.nan
        arrays.append(w)
    arrays += [rng.integers(-4, 4, size=(6, 7)).astype(np.int8) for _ in range(6)]
    tensors = [{"name": f"w{i}", "shape": list(a.shape), "buffer": i + 1,
                "type": INT8 if a.dtype == np.int8 else FLOAT32} for i, a in enumerate(arrays)]
    tensors.append({"name": "act", "shape": [1, 4]})
    data = build_model([{"tensors": tensors, "operators": [], "inputs": [], "outputs": []}], [FULLY_CONNECTED],
                       buffers=[None] + [a.tobytes() for a in arrays])
    model = load_model(data)
    ts = model.main.tensors
    for zero in (0, -2):
        requests = [(t, zero) for t in ts] * 2  # repeats too
        expected = [int(np.count_nonzero(a != zero)) for a in arrays] + [None]
        assert model.count_nonzeros(requests) == expected * 2
        assert [model.count_nonzero(t, zero) for t in ts] == expected
        assert model.count_nonzeros(requests, chunk_bytes=64) == expected * 2  # one by one, chunked


def test_float_zero_counts_on_their_bits_match_numpy():
    # count_nonzero counts floats on their bits (the integer of the same size): the same as NumPy's
    # float count for float16/32/64, with and without a -0.0 (a zero, the integer minimum) and a NaN,
    # whole and in chunks that hold the -0.0 or not (arrays large enough to be counted on their bits)
    from tflite_flops.reader.model import _BITS_FROM

    float16, float64 = 1, 10  # TensorType
    rng = np.random.default_rng(3)
    arrays = []
    for dtype in (np.float16, np.float32, np.float64):
        for signed_zero in (False, True):
            w = rng.standard_normal((64, 72)).astype(dtype)
            assert w.size >= _BITS_FROM
            w[w < 0.2] = 0.0
            w[3, 4] = np.nan
            if signed_zero:
                w[10, 2] = -0.0
            arrays.append(w)
    arrays.append(np.full((64, 72), -0.0, np.float32))  # all -0.0: no non-zero
    codes = {np.dtype(np.float16): float16, np.dtype(np.float32): FLOAT32, np.dtype(np.float64): float64}
    tensors = [{"name": f"w{i}", "shape": list(a.shape), "buffer": i + 1, "type": codes[a.dtype]}
               for i, a in enumerate(arrays)]
    data = build_model([{"tensors": tensors, "operators": [], "inputs": [], "outputs": []}], [FULLY_CONNECTED],
                       buffers=[None] + [a.tobytes() for a in arrays])
    model = load_model(data)
    expected = [int(np.count_nonzero(a)) for a in arrays]
    assert expected[-1] == 0
    for chunk in (8 << 20, 4096):
        assert [model.count_nonzero(t, chunk_bytes=chunk) for t in model.main.tensors] == expected


def test_zero_counts_stop_when_enough_non_zeros_are_found():
    # count_nonzero(..., enough=e): exact below e, at least e otherwise (a lower bound); chunked too
    w = np.zeros((40, 10), np.float32)
    w[:5] = 1.0  # 50 non-zeros, all in the first 50 of 400 elements
    data = build_model([{"tensors": [{"name": "w", "shape": [40, 10], "buffer": 1}], "operators": [],
                         "inputs": [], "outputs": []}], [FULLY_CONNECTED], buffers=[None, w.tobytes()])
    (t,) = load_model(data).main.tensors
    model = load_model(data)
    for chunk in (8 << 20, 64):
        assert model.count_nonzero(t, chunk_bytes=chunk) == 50
        assert model.count_nonzero(t, chunk_bytes=chunk, enough=51) == 50  # never reached: exact
        assert model.count_nonzero(t, chunk_bytes=chunk, enough=20) >= 20  # reached: stopped
        assert model.count_nonzero(t, chunk_bytes=chunk, enough=20) <= 50
        assert model.count_nonzeros([(t, 0)], chunk_bytes=chunk, enough=[20])[0] >= 20


def test_sha256_in_background_matches(tmp_path, samples_dir):
    import hashlib

    from tflite_flops.files import FileDigest

    data = (samples_dir / "cnn_float.tflite").read_bytes()
    path = tmp_path / "padded.tflite"
    path.write_bytes(data + bytes(300_000))  # over the size that hashes on a thread
    model = load_model(path)
    model.hasher().start()  # on a thread of its own from now on
    assert model.sha256() == hashlib.sha256(path.read_bytes()).hexdigest()
    adopted = load_model(path)  # the command line's way: a digest started before the model was read
    adopted.hasher().start(FileDigest(path))
    assert adopted.sha256() == model.sha256()
    assert load_model(data).sha256() == hashlib.sha256(data).hexdigest()
