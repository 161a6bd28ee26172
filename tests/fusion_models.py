"""Small models for XNNPACK's fusion of 8-bit element-wise chains into one lookup table
(``xnn_subgraph_fuse_unary_quantized_into_lut``), shared by tests/test_predict_whole_model.py and
benchmarks/predict_fusions.py (which times them)."""

from __future__ import annotations

import numpy as np

from tflite_builder import INT8, build_model

LOGISTIC, MUL = 14, 18
SHAPE = [1, 56, 56, 32]


def swish_model(kind: str = "swish", dtype: int = INT8) -> bytes:
    """x[1,56,56,32] -> LOGISTIC -> ``kind``:

    * "logistic": nothing more (the baseline: one table lookup per element);
    * "swish": MUL(x, sigmoid(x)) (EfficientNet's swish: one lookup table in all, 8-bit);
    * "swish_two_readers": the same with the sigmoid also a model output (two consumers: no fusion);
    * "other_operand": MUL(x2, sigmoid(x)) with another input x2 (not a function of x alone: no fusion);
    * "scaled": MUL(x, 0.5) before the LOGISTIC (a constant scalar operand: a unary function; fused).
    """
    def t(name: str, scale: float, zero_point: int, **kw) -> dict:
        d = {"name": name, "shape": SHAPE, "type": dtype, **kw}
        if dtype == INT8:
            d["quant"] = {"scale": [scale], "zero_point": [zero_point]}
        return d

    tensors = [t("x", 0.05, 3), t("sig", 1 / 256, -128), t("y", 0.03, -110)]
    buffers: list = [None]
    ops = []
    inputs, outputs, x = [0], [2], 0
    if kind == "scaled":
        tensors += [t("half", 0.01, 0, shape=[], buffer=1), t("xs", 0.025, 3)]
        buffers.append(np.array([50], np.int8).tobytes() if dtype == INT8 else np.array([0.5], np.float32).tobytes())
        ops.append({"opcode": 1, "inputs": [0, 3], "outputs": [4], "options": ("MulOptions", {})})
        x = 4
    ops.append({"opcode": 0, "inputs": [x], "outputs": [1]})
    if kind == "logistic":
        outputs = [1]
    elif kind == "other_operand":
        tensors.append(t("x2", 0.05, 3))
        inputs = [0, len(tensors) - 1]
        ops.append({"opcode": 1, "inputs": [len(tensors) - 1, 1], "outputs": [2], "options": ("MulOptions", {})})
    else:
        ops.append({"opcode": 1, "inputs": [x, 1], "outputs": [2], "options": ("MulOptions", {})})
        if kind == "swish_two_readers":
            outputs = [2, 1]
    sg = {"tensors": tensors, "operators": ops, "inputs": inputs, "outputs": outputs, "name": "main"}
    return build_model([sg], [LOGISTIC, MUL], buffers=buffers)
