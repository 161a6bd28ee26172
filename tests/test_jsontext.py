"""report.jsontext writes exactly what json.dumps(indent=2, ensure_ascii=False) writes.

The reference is the standard library's encoder: every sample's report (and with --all-signatures), and
random nested values with the awkward scalars (NaN, infinities, -0.0, big ints, unicode, escapes, bools
beside ints, int and float keys, empty containers, tuples).
"""

from __future__ import annotations

import enum
import json
import math
import random
from pathlib import Path

import pytest

from lanes import slow_cases
import tflite_flops
from tflite_flops.report import jsontext

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "sample_models").glob("*.tflite"))


def reference(value, level=0):
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * level)


SCALARS = [0, 1, -7, 2**70, -(2**64), True, False, None, 0.0, -0.0, 1.5, 1e-310, 1e300, math.nan, math.inf,
           -math.inf, "", "a", "é€😀", 'quote " and \\ back', "tab\tnew\nline\x00\x1f\u2028"]


def random_value(rng: random.Random, depth: int):
    if depth == 0 or rng.random() < 0.4:
        return rng.choice(SCALARS)
    kind = rng.randrange(4)
    n = rng.randrange(0, 5)
    if kind == 0:
        return [random_value(rng, depth - 1) for _ in range(n)]
    if kind == 1:
        return tuple(rng.randrange(-5, 10**6) for _ in range(n))  # a shape
    keys = [rng.choice(["k", "ops", "é", "x\"y", "1"]) + str(i) for i in range(n)]
    if kind == 3:
        keys = [rng.choice([1, 2.5, True, None, "s"]) for _ in range(n)]
    return {k: random_value(rng, depth - 1) for k in keys}


@pytest.mark.parametrize("seed", range(40))
def test_random_values_match_json_dumps(seed):
    rng = random.Random(seed)
    for _ in range(25):
        value = random_value(rng, 5)
        level = rng.randrange(3)
        assert jsontext.dumps(value, level) == reference(value, level)


def test_int_and_str_subclasses_and_raw_lists():
    class Kind(enum.IntEnum):
        A = 3

    value = {"kind": Kind.A, "items": [Kind.A, 2]}
    assert jsontext.dumps(value) == reference(value)
    items = [{"a": [1, 2], "nul": "\0"}, {"b": None}]
    head = {"x\0": 1, "ops": None, "after": ["\0"]}
    assert jsontext.dumps_with_list(head, "ops", iter(items), "\n") == reference({**head, "ops": items}) + "\n"
    assert jsontext.dumps_with_list(head, "ops", iter([])) == reference({**head, "ops": []})


def test_not_serializable_raises_type_error():
    with pytest.raises(TypeError):
        jsontext.dumps({"x": object()})
    with pytest.raises(TypeError):
        jsontext.dumps({(1, 2): 3})


@pytest.mark.parametrize("path", slow_cases(SAMPLES, {"tiny_decoder_kv"}, key=lambda p: p.stem),
                         ids=[p.stem for p in SAMPLES])
def test_every_sample_report_matches_json_dumps(path):
    report = tflite_flops.analyze(str(path))
    assert report.to_json() == json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
