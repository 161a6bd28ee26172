"""Shape resolution and propagation: spec parsing, user shapes vs the model, per-op shape and value
functions built by hand, whole-model propagation on the sample models, and the CLI options.

The interpreter cross-check (every tensor of every test model against LiteRT) is in
test_shapes_runtime.py; the counts here are derived by hand in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import cli_process
import numpy as np
import pytest

import tflite_flops
from tflite_flops.errors import InputSpecError, ShapeError
from tflite_flops.reader.load import load_model
from tflite_flops.ops.registry import OpContext, TensorInfo, lookup_shape, lookup_value
from tflite_flops.analysis import propagated_shapes, unresolved_tensors
from tflite_flops.analysis.shapes import normalize_input_shapes, parse_shape_spec, resolve_inputs

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
FCN = str(SAMPLES / "fcn_dynamic.tflite")
MLP = str(SAMPLES / "mlp_dynamic_batch.tflite")
CNN = str(SAMPLES / "cnn_float.tflite")
TRANSFORMER = str(SAMPLES / "transformer_block.tflite")


# --------------------------------------------------------------------------------------------
# Helpers: build one op by hand and run its shape and value functions.

def t(shape, value=None, dtype=None, index=0):
    """A tensor as a formula sees it; ``value`` makes it a known (constant or folded) tensor."""
    arr = None if value is None else np.asarray(value)
    if dtype is None:
        dtype = "INT32" if arr is not None and arr.dtype.kind in "iu" else "FLOAT32"
    return TensorInfo(index=index, name=f"t{index}", dtype=dtype, shape=tuple(shape),
                      is_constant=arr is not None, value=arr)


def shape_of(op_type, inputs, options=None, n_out=1):
    """Output shapes from the registry's shape function."""
    ctx = OpContext(op_type, options or {}, tuple(inputs), tuple(t(()) for _ in range(n_out)))
    return [tuple(s) for s in lookup_shape(op_type)(ctx)]


def value_of(op_type, inputs, options=None, out_dtype="INT32"):
    """Output shapes then folded values (shape function first, as the propagation does)."""
    shapes = shape_of(op_type, inputs, options)
    outs = tuple(TensorInfo(index=0, name="o", dtype=out_dtype, shape=s) for s in shapes)
    ctx = OpContext(op_type, options or {}, tuple(inputs), outs)
    fold = lookup_value(op_type)
    return [None if v is None else np.asarray(v).tolist() for v in fold(ctx)]


def ss(x_shape, begin, end, strides, value=None, **masks):
    """STRIDED_SLICE by hand: output shape and (for a known input) the folded value."""
    opts = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0,
            "offset": False, **masks}
    inputs = [t(x_shape, value), t((len(begin),), begin), t((len(end),), end), t((len(strides),), strides)]
    shape = shape_of("STRIDED_SLICE", inputs, opts)[0]
    folded = value_of("STRIDED_SLICE", inputs, opts)[0] if value is not None else None
    return shape, folded


# --------------------------------------------------------------------------------------------
# Spec parsing


def test_parse_shape_spec_forms():
    assert parse_shape_spec("1x224x224x3") == {None: (1, 224, 224, 3)}
    assert parse_shape_spec(["image=1x64x64x3"]) == {"image": (1, 64, 64, 3)}
    assert parse_shape_spec("0=2x8") == {0: (2, 8)}
    assert parse_shape_spec("a=1x64,b=1x32") == {"a": (1, 64), "b": (1, 32)}  # one point, two inputs
    assert parse_shape_spec("x=") == {"x": ()}  # a scalar input
    assert normalize_input_shapes({"x": [1, 2]}) == {"x": (1, 2)}
    assert normalize_input_shapes((1, 8, 8, 3)) == {None: (1, 8, 8, 3)}


@pytest.mark.parametrize("bad", ["1x6a", "1xx2", "image=1x0x64x3", "a=1,a=2"])
def test_parse_shape_spec_rejects(bad):
    with pytest.raises(InputSpecError):
        parse_shape_spec(bad)


def test_bare_shape_with_named_ones_is_rejected():
    with pytest.raises(InputSpecError, match="bare shape"):
        parse_shape_spec(["1x64", "a=1x64"])


# --------------------------------------------------------------------------------------------
# User shapes against the model


def _resolve(path, spec, batch=None):
    model = load_model(path)
    return resolve_inputs(model, model.main, normalize_input_shapes(spec), batch)


def test_resolve_inputs_name_index_bare_and_batch():
    idx = load_model(FCN).main.inputs[0]
    for spec in ("image=2x32x48x3", "0=2x32x48x3", "2x32x48x3"):
        shapes, resolved, warnings, assumed = _resolve(FCN, spec)
        assert shapes[idx] == (2, 32, 48, 3) and resolved[idx] and not warnings and not assumed.notes
    shapes, resolved, warnings, assumed = _resolve(MLP, None, batch=4)
    assert list(shapes.values()) == [(4, 64)] and all(resolved.values()) and not warnings
    assert assumed.batch is None and not assumed.notes and not assumed.settings


def test_dynamic_input_without_shape_warns_with_the_fix():
    _, resolved, warnings, assumed = _resolve(FCN, None)
    assert not any(resolved.values()) and assumed.batch is None
    (w,) = warnings
    assert "'image'" in w and "[0, 1, 2]" in w and "--input-shape image=1x224x224x3" in w
    # with --batch, the example carries that batch (a shape of another batch would contradict it)
    (w,) = _resolve(FCN, None, batch=2)[2]
    assert "[1, 2]" in w and "--input-shape image=2x224x224x3" in w


@pytest.mark.parametrize("spec, error, match", [
    ("1x64x64", ShapeError, "rank 3, the model expects rank 4"),        # wrong rank
    ("1x64x64x4", ShapeError, "dim 3 is 4, but the model fixes it at 3"),  # conflicting static dim
    ("nope=1x64x64x3", InputSpecError, "no input named 'nope'"),       # unknown input name
    ("3=1x64x64x3", InputSpecError, "no input named 3"),               # unknown input index
])
def test_inconsistent_user_shape_is_an_error(spec, error, match):
    with pytest.raises(error, match=match) as raised:
        _resolve(FCN, spec)
    assert isinstance(raised.value, InputSpecError) and raised.value.exit_code == 2  # every one an input error


def test_zero_dim_in_a_mapping_is_an_error():
    with pytest.raises(InputSpecError, match="below 1"):
        _resolve(FCN, {"image": (1, 0, 64, 3)})


def test_batch_contradicting_a_given_shape_is_an_error():
    with pytest.raises(InputSpecError, match="contradicts"):
        _resolve(FCN, "image=1x64x64x3", batch=2)
    _resolve(FCN, "image=2x64x64x3", batch=2)  # agreeing is fine


def test_static_batch_one_model_accepts_batch():
    # A static [1,16,32] input: the batch dim 1 may be changed (LiteRT resizes it), others may not.
    shapes, _, _, _ = _resolve(TRANSFORMER, "tokens=3x16x32")
    assert list(shapes.values()) == [(3, 16, 32)]
    with pytest.raises(ShapeError, match="fixes it at 16"):
        _resolve(TRANSFORMER, "tokens=1x17x32")


# --------------------------------------------------------------------------------------------
# Shape functions by hand


def test_strided_slice_plain_and_negative():
    # x[1:-1, ::2] of a 6x7 tensor: rows 1..4 (4), cols 0,2,4,6 (4)
    assert ss((6, 7), [1, 0], [-1, 0], [1, 2], end_mask=0b10)[0] == (4, 4)
    # reverse: x[::-1] of length 5 -> 5 elements; x[3:0:-1] -> 3,2,1
    assert ss((5,), [0], [0], [-1], value=[0, 1, 2, 3, 4], begin_mask=1, end_mask=1) == ((5,), [4, 3, 2, 1, 0])
    assert ss((5,), [3], [0], [-1], value=[0, 1, 2, 3, 4]) == ((3,), [3, 2, 1])
    # out-of-range ends clamp, as in the kernel: x[2:100] of length 5 -> 3
    assert ss((5,), [2], [100], [1])[0] == (3,)
    # offset: end is relative to begin: [1, 1+2)
    assert ss((5,), [1], [2], [1], value=[9, 8, 7, 6, 5], offset=True) == ((2,), [8, 7])


def test_strided_slice_shrink_ellipsis_new_axis():
    x = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    # x[..., 1]: ellipsis covers dims 0-1, shrink the last -> (2, 3)
    shape, val = ss((2, 3, 4), [0, 1], [0, 2], [1, 1], value=x, ellipsis_mask=0b01, shrink_axis_mask=0b10)
    assert shape == (2, 3) and val == x[..., 1].tolist()
    # x[:, None, 1:]: new axis at position 1 -> (2, 1, 2, 4)
    shape, val = ss((2, 3, 4), [0, 0, 1], [0, 0, 0], [1, 1, 1], value=x, begin_mask=0b001, end_mask=0b101,
                    new_axis_mask=0b010)
    assert shape == (2, 1, 2, 4) and val == x[:, None, 1:].tolist()
    # x[None, ..., ::2]: new axis first, ellipsis, stride 2 on the last -> (1, 2, 3, 2)
    shape, val = ss((2, 3, 4), [0, 0, 0], [0, 0, 0], [1, 1, 2], value=x, begin_mask=0b100, end_mask=0b100,
                    new_axis_mask=0b001, ellipsis_mask=0b010)
    assert shape == (1, 2, 3, 2) and val == x[None, ..., ::2].tolist()
    # the converter's dynamic-batch idiom: shape[0] with shrink -> a scalar
    assert ss((4,), [0], [1], [1], value=[7, 10, 12, 3], shrink_axis_mask=1) == ((), 7)


def test_gather_axis_and_batch_dims():
    # params [2, 5, 3], indices [2, 4], axis 1, batch_dims 1 -> [2] + [4] + [3]
    params = np.arange(30).reshape(2, 5, 3)
    idx = np.array([[0, 1, 2, 4], [4, 4, 0, 1]])
    opts = {"axis": 1, "batch_dims": 1}
    assert shape_of("GATHER", [t(params.shape), t(idx.shape, idx)], opts) == [(2, 4, 3)]
    got = value_of("GATHER", [t(params.shape, params), t(idx.shape, idx)], opts)[0]
    expected = [[params[b, i].tolist() for i in idx[b]] for b in range(2)]
    assert got == expected
    # negative axis, no batch dims: params [4, 6], indices [2, 3], axis -1 -> [4, 2, 3]
    assert shape_of("GATHER", [t((4, 6)), t((2, 3), np.zeros((2, 3), int))], {"axis": -1}) == [(4, 2, 3)]


def test_reshape_from_computed_shape_and_option():
    x = t((2, 10, 16))
    assert shape_of("RESHAPE", [x, t((2,), [-1, 16])]) == [(20, 16)]  # 320 / 16 = 20
    assert shape_of("RESHAPE", [x], {"new_shape": [4, -1]}) == [(4, 80)]
    assert shape_of("RESHAPE", [t((1,))], {"new_shape": [0]}) == [()]  # legacy scalar
    with pytest.raises(ShapeError):  # a 1-D shape tensor whose value is unknown: never guess from options
        shape_of("RESHAPE", [x, t((2,))], {"new_shape": [20, 16]})
    with pytest.raises(ShapeError, match="cannot reshape"):
        shape_of("RESHAPE", [x, t((2,), [-1, 7])])


def test_space_batch_nd_and_dilated_conv_chain():
    # SPACE_TO_BATCH_ND [1, 32, 32, 8], block [2, 2], pads [[2, 2], [2, 2]] -> [4, 18, 18, 8]
    assert shape_of("SPACE_TO_BATCH_ND", [t((1, 32, 32, 8)), t((2,), [2, 2]), t((2, 2), [[2, 2], [2, 2]])]) \
        == [(4, 18, 18, 8)]
    # BATCH_TO_SPACE_ND [4, 16, 16, 8], block [2, 2], crops [[0, 0], [0, 0]] -> [1, 32, 32, 8]
    assert shape_of("BATCH_TO_SPACE_ND", [t((4, 16, 16, 8)), t((2,), [2, 2]), t((2, 2), [[0, 0], [0, 0]])]) \
        == [(1, 32, 32, 8)]
    with pytest.raises(ShapeError, match="not a multiple"):
        shape_of("SPACE_TO_BATCH_ND", [t((1, 5, 4, 1)), t((2,), [2, 2]), t((2, 2), [[0, 0], [0, 0]])])


def test_broadcast_args_fill_split_unpack():
    assert value_of("BROADCAST_ARGS", [t((3,), [5, 1, 4]), t((2,), [7, 1])]) == [[5, 7, 4]]
    assert shape_of("FILL", [t((2,), [3, 4]), t((), 2.0)]) == [(3, 4)]
    assert shape_of("SPLIT", [t((), 2), t((2, 4, 9))], n_out=3) == [(2, 4, 3)] * 3
    assert shape_of("SPLIT_V", [t((2, 10)), t((3,), [3, -1, 2]), t((), 1)], n_out=3) == [(2, 3), (2, 5), (2, 2)]
    assert shape_of("UNPACK", [t((4, 3))], {"axis": 0}, n_out=4) == [(3,)] * 4


def test_reduce_keep_dims_and_folding():
    x = t((2, 5, 7, 3))
    assert shape_of("MEAN", [x, t((2,), [1, 2])], {"keep_dims": True}) == [(2, 1, 1, 3)]
    assert shape_of("MEAN", [x, t((2,), [-3, -2])], {"keep_dims": False}) == [(2, 3)]
    # Keras' Tensordot: prod(shape[:2]) -> 2·5 = 10
    assert value_of("REDUCE_PROD", [t((2,), [2, 5]), t((1,), [0])], {"keep_dims": False}) == [10]
    assert value_of("SUM", [t((3,), [1, 2, 3]), t((1,), [0])], {"keep_dims": True}) == [[6]]


def test_elementwise_folding_for_shape_arithmetic():
    # a resize by 1.5: cast(cast([h, w], f32) * 1.5, i32)
    scaled = value_of("MUL", [t((2,), np.array([6, 8], np.float32)), t((), np.float32(1.5))], out_dtype="FLOAT32")
    assert scaled == [[9.0, 12.0]]
    assert value_of("DIV", [t((2,), [7, -7]), t((), 2)]) == [[3, -3]]  # integer DIV truncates toward zero
    assert value_of("FLOOR_DIV", [t((2,), [7, -7]), t((), 2)]) == [[3, -4]]
    assert value_of("LESS", [t((2,), [1, 5]), t((), 3)], out_dtype="BOOL") == [[True, False]]


def test_unsorted_segment_prod_folding():
    # Keras' EinsumDense output shape: prod of [1, 7, 4, 8] over segments [0, 1, 2, 2] -> [1, 7, 32]
    got = value_of("UNSORTED_SEGMENT_PROD", [t((4,), [1, 7, 4, 8]), t((4,), [0, 1, 2, 2]), t((), 3)])
    assert got == [[1, 7, 32]]


def test_conv_and_pool_output_dims():
    # CONV_2D 3x3 stride 2 SAME on 33x47: ceil(33/2) = 17, ceil(47/2) = 24
    x, w = t((2, 33, 47, 3)), t((8, 3, 3, 3))
    assert shape_of("CONV_2D", [x, w], {"padding": "SAME", "stride_h": 2, "stride_w": 2}) == [(2, 17, 24, 8)]
    # VALID 5x5 stride 3 dilation 2 (effective 9): (33-9)//3+1 = 9, (47-9)//3+1 = 13
    w5 = t((8, 5, 5, 3))
    opts = {"padding": "VALID", "stride_h": 3, "stride_w": 3, "dilation_h_factor": 2, "dilation_w_factor": 2}
    assert shape_of("CONV_2D", [x, w5], opts) == [(2, 9, 13, 8)]
    # an input smaller than the window is an error, not an empty tensor
    with pytest.raises(ShapeError, match="too small"):
        shape_of("CONV_2D", [t((1, 4, 4, 3)), w5], {"padding": "VALID"})
    assert shape_of("MAX_POOL_2D", [t((1, 9, 9, 4))], {"padding": "VALID", "filter_height": 3,
                                                       "filter_width": 3, "stride_h": 2, "stride_w": 2}) \
        == [(1, 4, 4, 4)]  # (9-3)//2+1 = 4


# --------------------------------------------------------------------------------------------
# Whole models


@pytest.mark.parametrize("path", sorted(str(p) for p in SAMPLES.glob("*.tflite")))
def test_shape_functions_reproduce_the_converter_on_static_shapes(path):
    """With trust_stored=False every op's shape function runs: at the stored shapes of a static
    model (or a dynamic one with its concrete shape), it must give exactly the converter's stored
    shapes for every tensor that has a static signature."""
    model = load_model(path)
    sg = model.main
    spec = {}
    for pos, tidx in enumerate(sg.inputs):  # the stored placeholder shape, made explicit
        spec[pos] = sg.tensors[tidx].shape
    ours = propagated_shapes(model, spec, trust_stored=False)
    for i, tensor in enumerate(sg.tensors):
        if not tensor.is_dynamic:
            assert ours[i] == tensor.shape, (i, tensor.name)


def test_fcn_macs_scale_with_the_input_and_match_the_hand_count():
    # fcn_dynamic at H×W (H, W multiples of 4), MACs per layer:
    #   stem conv 3x3/s2 3->8: (H/2)(W/2)·8·27 = 54·HW;  depthwise 3x3: (H/2)(W/2)·8·9 = 18·HW
    #   pointwise 8->8: (H/2)(W/2)·64 = 16·HW;  conv 3x3 8->16 after pool: (H/4)(W/4)·16·72 = 72·HW
    #   head 1x1 16->4 after resize x2: (H/2)(W/2)·64 = 16·HW        total 176·H·W
    m64 = tflite_flops.analyze(FCN, input_shapes="1x64x64x3").totals.macs
    m128 = tflite_flops.analyze(FCN, input_shapes={"image": (1, 128, 128, 3)}).totals.macs
    assert m64 == 176 * 64 * 64 == 720_896
    assert m128 == 4 * m64 == 2_883_584
    assert tflite_flops.analyze(FCN, input_shapes="1x96x160x3").totals.macs == 176 * 96 * 160  # 2,703,360


@pytest.mark.parametrize("path", [MLP, TRANSFORMER, FCN])
def test_batch_4_is_exactly_4x(path):
    base = {FCN: "1x64x64x3"}.get(path)
    one = tflite_flops.analyze(path, input_shapes=base, batch=None if base else 1)
    four = tflite_flops.analyze(path, input_shapes=base and "4" + base[1:], batch=None if base else 4)
    assert four.totals.macs == 4 * one.totals.macs > 0
    assert four.totals.flops == 4 * one.totals.flops or path == FCN  # FCN: +2 int32 FLOPs of shape arithmetic
    assert not four.warnings


def test_dynamic_model_without_shape_warns_and_flags_ops():
    report = tflite_flops.analyze(FCN)
    assert any("dynamic dims" in w and "--input-shape image=" in w for w in report.warnings)
    flagged = [o for o in report.ops if not o.shapes_resolved]
    assert flagged and all("placeholder" in o.note for o in flagged)
    assert unresolved_tensors(FCN)  # ... and the tensors behind them
    assert not unresolved_tensors(FCN, "1x64x64x3")


def test_unfollowable_batch_is_flagged_not_silently_wrong():
    # The CNN's TRANSPOSE_CONV hard-codes output_shape [1, 16, 16, 8]: batch 3 cannot run there
    # (LiteRT refuses too, see test_shapes_runtime.py); we say so instead of counting it.
    report = tflite_flops.analyze(CNN, batch=3)
    assert any("TRANSPOSE_CONV" in w and "hard-codes output_shape" in w for w in report.warnings)
    assert any(not o.shapes_resolved for o in report.ops)


# --------------------------------------------------------------------------------------------
# CLI


def run(*args):
    return cli_process.run(args, cwd=ROOT, timeout=120)


def test_cli_input_shape_forms_and_batch():
    macs = {}
    for args in (["--input-shape", "image=2x64x64x3"], ["--input-shape", "0=2x64x64x3"],
                 ["--input-shape", "2x64x64x3"], ["--input-shape", "1x64x64x3", "--batch", "1"]):
        r = run("analyze", FCN, "-f", "json", *args)
        assert r.returncode == 0, r.stderr
        assert "warning" not in r.stderr
        macs[" ".join(args)] = json.loads(r.stdout)["totals"]["macs"]
    # 176·2·64·64 = 1,441,792 for batch 2; 720,896 for batch 1
    assert sorted(macs.values()) == [720_896, 1_441_792, 1_441_792, 1_441_792]
    r = run("analyze", MLP, "-f", "json", "--batch", "4")
    assert r.returncode == 0 and json.loads(r.stdout)["totals"]["macs"] == 4 * 17_024  # 64·128+128·64+64·10 = 17,024


@pytest.mark.parametrize("args, code, message", [
    # a shape the model refuses is an input error, as an unknown input name is: exit 2 (issue 31)
    (["--input-shape", "1x64x64"], 2, "error: input 'image': shape [1,64,64] has rank 3"),
    (["--input-shape", "1x64x64x4"], 2, "error: input 'image': dim 3 is 4, but the model fixes it at 3"),
    (["--input-shape", "foo=1x64x64x3"], 2, "error: no input named 'foo' (inputs: image)"),
    (["--input-shape", "1x6a"], 2, "error: cannot read '1x6a' as a shape"),
    (["--input-shape", "image=1x64x64x3", "--batch", "2"], 2, "contradicts the given shape"),
])  # --batch 0 is a usage error (exit 2 with the subcommand's usage): tests/test_cli.py
def test_cli_inconsistent_shapes_give_one_line(args, code, message):
    r = run("analyze", FCN, *args)
    assert r.returncode == code, (r.returncode, r.stderr)
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_dynamic_model_warns_on_stderr():
    r = run("analyze", FCN, "-f", "json")
    assert r.returncode == 0
    assert "warning: input 'image' has dynamic dims [0, 1, 2]" in r.stderr
    assert "--input-shape image=1x224x224x3" in r.stderr
    assert any("dynamic dims" in w for w in json.loads(r.stdout)["warnings"])
