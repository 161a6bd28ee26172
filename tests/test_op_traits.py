"""Op facts used outside the cost formulas come from the registry (register_traits), never a hand-kept list."""

from __future__ import annotations

import pytest

from tflite_flops.ops import registry
from tflite_flops.ops.registry import (CALLER_OPS, CONTRACTION_OPS, INIT_ON_CONSTANT_OPS, NOT_ISOLATED_OPS,
                                       SPARSE_WEIGHT_OPS, lookup, register_traits)


def test_contractions_are_registered_with_their_formulas():
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL", "LSTM", "SVDF",
            "EMBEDDING_LOOKUP"} <= CONTRACTION_OPS
    assert CONTRACTION_OPS <= SPARSE_WEIGHT_OPS  # a contraction's MACs scale with its non-zero weights
    assert {"STABLEHLO_DOT_GENERAL", "CUSTOM:UNIDIRECTIONAL_SEQUENCE_GRU"} <= SPARSE_WEIGHT_OPS - CONTRACTION_OPS
    for op in CONTRACTION_OPS | SPARSE_WEIGHT_OPS:  # every one has a cost formula
        assert lookup(op) is not None and lookup(op).status == "ok", op


def test_control_flow_and_init_facts():
    assert set(CALLER_OPS) == {"WHILE", "STABLEHLO_WHILE", "IF", "STABLEHLO_CASE", "CALL_ONCE", "CALL",
                               "STABLEHLO_COMPOSITE"}
    assert set(INIT_ON_CONSTANT_OPS) == {"DEQUANTIZE", "DENSIFY"}
    assert CALLER_OPS <= NOT_ISOLATED_OPS.keys()
    assert NOT_ISOLATED_OPS["HASHTABLE_FIND"] == "stateful (hash table)"


def test_traits_registered_twice_raise_and_name_the_first_site():
    name = "CUSTOM:TraitsTwice"
    try:
        register_traits(name, contraction=True)
        assert name in CONTRACTION_OPS and name in SPARSE_WEIGHT_OPS
        with pytest.raises(ValueError, match="test_op_traits.py"):
            register_traits(name, sparse_weights=True)
    finally:
        registry._TRAIT_SITES.pop(name, None)
        for members in registry._TRAITS.values():
            members.discard(name)
