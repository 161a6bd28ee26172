"""Control flow: WHILE-based recurrent layers against the hand formula, IF, unknown trip counts,
CALL_ONCE and CALL.

The recurrent cross-checks convert Keras layers with TensorFlow (the converter emits one WHILE
loop per layer) and compare with the textbook count, computed here by hand:

* LSTM: ``B·T·4·H·(I+H)`` MACs (four gates, each an [H, I+H] matrix per step);
* GRU (Keras ``reset_after=True``): ``B·T·3·H·(I+H)``;
* SimpleRNN: ``B·T·H·(I+H)``;
* a Dense head on the last state: ``B·H_in·units``.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import tflite_flops

from tflite_builder import FULLY_CONNECTED, build_model

CALL_ONCE, CALL = 129, 31

# Sizes of the Keras models below: batch 2, 6 steps, 5 features, 8 units, Dense(3) head.
B, T, I, H, U = 2, 6, 5, 8, 3


def test_two_layer_lstm_sample(samples_dir):
    # sample_models/lstm.tflite: input 1×8×4, LSTM(16, return_sequences) -> LSTM(16) -> Dense(3)
    # layer 1: 8·4·16·(4+16) = 10,240; layer 2: 8·4·16·(16+16) = 16,384; head 16·3 = 48 -> 26,672
    report = tflite_flops.analyze(samples_dir / "lstm.tflite")
    assert report.totals.macs == 10240 + 16384 + 48
    loops = [o for o in report.ops if o.op_type == "WHILE"]
    assert len(loops) == 2 and all("trip count 8 inferred" in o.note for o in loops)
    body_fc = [o for o in report.ops if o.op_type == "FULLY_CONNECTED" and o.subgraph != 0]
    assert body_fc and all(o.executions == 8 for o in body_fc)
    assert not [w for w in report.warnings if "trip count" in w]


# ---------------------------------------------------------------------------------------------
# TensorFlow conversions


def _convert(model) -> bytes:
    from tflite_flops.convert import to_tflite  # the package's one conversion recipe

    return to_tflite(model)


@pytest.fixture(scope="module")
def keras_rnns() -> dict[str, bytes]:
    import keras

    L = keras.layers
    keras.utils.set_random_seed(0)
    out = {}
    for name, make in {"lstm": lambda: L.LSTM(H), "bilstm": lambda: L.Bidirectional(L.LSTM(H)),
                       "gru": lambda: L.GRU(H), "simple_rnn": lambda: L.SimpleRNN(H),
                       "lstm2": None}.items():
        inp = keras.Input((T, I), batch_size=B)
        if make is None:  # two stacked LSTMs
            x = L.LSTM(H)(L.LSTM(H, return_sequences=True)(inp))
        else:
            x = make()(inp)
        out[name] = _convert(keras.Model(inp, L.Dense(U)(x)))
    return out


@pytest.mark.tf
@pytest.mark.parametrize("name, expected", [
    # 2·6·4·8·(5+8) = 4,992 + head 2·8·3 = 48
    ("lstm", 4992 + 48),
    # forward + backward 2·4,992 = 9,984 + head over the concatenated 16 units 2·16·3 = 96
    ("bilstm", 2 * 4992 + 96),
    # layer 1: 4,992; layer 2 (input 8): 2·6·4·8·(8+8) = 6,144; head 48
    ("lstm2", 4992 + 6144 + 48),
    # 2·6·3·8·13 = 3,744 + 48
    ("gru", 3744 + 48),
    # 2·6·8·13 = 1,248 + 48
    ("simple_rnn", 1248 + 48),
])
def test_keras_recurrent_layers_match_the_hand_formula(keras_rnns, name, expected):
    assert B * T * 4 * H * (I + H) == 4992  # the textbook LSTM count used above
    report = tflite_flops.analyze(keras_rnns[name])
    assert report.totals.macs == expected
    assert not report.unsupported
    assert not [w for w in report.warnings if "trip count" in w]
    loops = [o for o in report.ops if o.op_type == "WHILE"]
    assert loops and all(f"trip count {T} inferred" in o.note for o in loops)


def _convert_function(fn) -> bytes:
    import tensorflow as tf

    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn)
    with contextlib.redirect_stdout(io.StringIO()):
        return conv.convert()


@pytest.mark.tf
def test_if_counts_the_costlier_branch():
    import tensorflow as tf

    w = tf.constant(np.random.default_rng(0).random((8, 16), dtype=np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32), tf.TensorSpec([], tf.bool)])
    def f(x, p):
        return tf.cond(p, lambda: tf.matmul(x, w), lambda: tf.tile(x * 2.0, [1, 2]))

    report = tflite_flops.analyze(_convert_function(f))
    # the matmul branch: 1·8·16 = 128 MACs (the other branch: 8 MULs, 0 MACs)
    assert report.totals.macs == 128
    (op,) = [o for o in report.ops if o.op_type == "IF"]
    assert "upper bound" in op.note


@pytest.mark.tf
def test_while_with_unknown_trip_count_is_flagged_per_iteration():
    import tensorflow as tf

    eye = tf.constant(np.eye(8, dtype=np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32), tf.TensorSpec([], tf.int32)])
    def g(x, n):
        def body(i, y):
            return i + 1, tf.matmul(y, eye)

        return tf.while_loop(lambda i, y: i < n, body, [tf.constant(0), x])[1]

    data = _convert_function(g)
    report = tflite_flops.analyze(data)
    # one iteration by default: 1·8·8 = 64 MACs
    assert report.totals.macs == 64
    (loop,) = [o for o in report.ops if o.op_type == "WHILE"]
    assert "per iteration" in loop.note
    assert any("could not be inferred" in w for w in report.warnings)
    assert tflite_flops.analyze(data, while_trips=5).totals.macs == 5 * 64


# ---------------------------------------------------------------------------------------------
# In-memory models: CALL_ONCE and CALL


def _fc_subgraph(name: str, weight_buffer: int) -> dict:
    """x[1,4] · W[3,4]ᵀ -> y[1,3]: 12 MACs."""
    return {"tensors": [{"shape": [1, 4]}, {"shape": [3, 4], "buffer": weight_buffer}, {"shape": [1, 3]}],
            "operators": [{"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]}], "inputs": [0], "outputs": [2],
            "name": name}


def test_call_once_is_init_time_and_call_is_per_inference():
    w = np.ones((3, 4), np.float32).tobytes()
    main = {"tensors": [{"shape": [1, 4]}, {"shape": [3, 4], "buffer": 1}, {"shape": [1, 3]}, {"shape": [1, 3]}],
            "operators": [
                {"opcode": 1, "inputs": [], "outputs": [], "options": ("CallOnceOptions", {"init_subgraph_index": 1})},
                {"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]},
                {"opcode": 2, "inputs": [0], "outputs": [3], "options": ("CallOptions", {"subgraph": 2})}],
            "inputs": [0], "outputs": [2, 3]}
    data = build_model([main, _fc_subgraph("init", 2), _fc_subgraph("called", 3)],
                       [FULLY_CONNECTED, CALL_ONCE, CALL], buffers=[None, w, w, w])
    report = tflite_flops.analyze(data)
    phases = {(o.subgraph, o.op_type): o.phase for o in report.ops}
    assert phases[(1, "FULLY_CONNECTED")] == "init"
    assert phases[(2, "FULLY_CONNECTED")] == "inference"
    # per inference: the main FC (12) + the called FC (12); init: the CALL_ONCE subgraph's FC (12)
    assert report.totals.macs == 24
    assert report.init_totals.macs == 12


def test_subgraph_also_called_from_an_unreached_subgraph_keeps_its_count():
    # subgraph 0 CALLs subgraph 1 (FC, 12 MACs); subgraph 2 (another entry, not analyzed) CALLs it too.
    # Walking the unreached subgraph 2 afterwards must not reset subgraph 1's per-inference count.
    w = np.ones((3, 4), np.float32).tobytes()

    def caller(name: str) -> dict:
        return {"tensors": [{"shape": [1, 4]}, {"shape": [1, 3]}],
                "operators": [{"opcode": 1, "inputs": [0], "outputs": [1], "options": ("CallOptions", {"subgraph": 1})}],
                "inputs": [0], "outputs": [1], "name": name}

    data = build_model([caller("main"), _fc_subgraph("shared", 1), caller("other")], [FULLY_CONNECTED, CALL],
                       buffers=[None, w])
    report = tflite_flops.analyze(data)
    shared = next(o for o in report.ops if o.subgraph == 1)
    assert (shared.phase, shared.executions, shared.macs) == ("inference", 1, 12)
    assert report.totals.macs == 12


# ---------------------------------------------------------------------------------------------
# STABLEHLO_CASE: a vector of branch subgraphs (StablehloCaseOptions.branch_subgraph_indices,
# builtin_options_2 member 23), input 0 the branch index, the other inputs the branches' inputs.

STABLEHLO_CASE = 209


def _case_options(branches: list[int]):
    """A StablehloCaseOptions table: ``branch_subgraph_indices`` is its field 0 (a vector of int32)."""
    def build(b):
        vec = b.CreateNumpyVector(np.asarray(branches, np.int32))
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, vec, 0)
        return b.EndObject()
    return 23, build


def _case_model(branches: list[int], n_subgraphs: int | None = None) -> bytes:
    """Subgraph 0: y = CASE(i, x) over ``branches``; subgraph 1: y = x·Wᵀ (FC, W [256, 256]);
    subgraph 2: y = x + x; any further subgraph: CASE over ``branches`` again (for cycles)."""
    w = np.ones((256, 256), np.float32).tobytes()
    case = {"tensors": [{"shape": [], "type": 2}, {"shape": [1, 256]}, {"shape": [1, 256]}],
            "operators": [{"opcode": 2, "inputs": [0, 1], "outputs": [2], "raw_options_2": _case_options(branches)}],
            "inputs": [0, 1], "outputs": [2]}
    fc = {"tensors": [{"shape": [1, 256]}, {"shape": [256, 256], "buffer": 1}, {"shape": [1, 256]}],
          "operators": [{"opcode": 0, "inputs": [0, 1, -1], "outputs": [2]}], "inputs": [0], "outputs": [2]}
    add = {"tensors": [{"shape": [1, 256]}, {"shape": [1, 256]}],
           "operators": [{"opcode": 1, "inputs": [0, 0], "outputs": [1]}], "inputs": [0], "outputs": [1]}
    sgs = [case, fc, add] + [case] * ((n_subgraphs or 3) - 3)
    return build_model(sgs, [FULLY_CONNECTED, 0, STABLEHLO_CASE], buffers=[None, w])


def test_stablehlo_case_counts_its_costlier_branch():
    report = tflite_flops.analyze(_case_model([2, 1]))
    # branch subgraph 1: FC 1·256·256 = 65,536 MACs; branch subgraph 2: one ADD of 256 elements, 0 MACs.
    assert report.totals.macs == 65_536
    (case,) = [o for o in report.ops if o.op_type == "STABLEHLO_CASE"]
    assert "upper bound" in case.note and "subgraph 1" in case.note
    fc = next(o for o in report.ops if o.op_type == "FULLY_CONNECTED")
    assert (fc.phase, fc.executions, fc.macs) == ("inference", 1, 65_536)
    add = next(o for o in report.ops if o.op_type == "ADD")
    assert add.executions == 0  # costed, not counted: the other branch


def test_stablehlo_case_branches_are_read_and_cycle_checked():
    from tflite_flops.errors import ModelFormatError
    from tflite_flops.reader.load import load_model

    model = load_model(_case_model([2, 1]))
    (op,) = model.subgraphs[0].operators
    assert op.options["branch_subgraph_indices"] == (2, 1)
    assert list(op.subgraph_refs.values()) == [2, 1]
    with pytest.raises(ModelFormatError, match="cycle: 0 -> 0"):
        load_model(_case_model([1, 0]))  # a branch that is the CASE's own subgraph
    with pytest.raises(ModelFormatError, match="cycle: 3 -> 3"):
        load_model(_case_model([1, 3], n_subgraphs=4))  # the same, in a subgraph nothing reaches
    with pytest.raises(ModelFormatError, match="out of range"):
        load_model(_case_model([1, 7]))
