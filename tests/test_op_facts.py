"""Each op type's facts live in its record (``tflite_flops.ops.facts``): the analysis holds no op-type literal
of its own, the missing-facts listing is the reviewed one, and a per-op fact that raises gives a warning,
never a silent 0 nor a crash."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import source_trees
import tflite_flops.ops  # noqa: F401  # (every family registers)
from op_facts_missing import LISTING, diff, listing
from tflite_flops.ops import registry, tflm
from tflite_flops.ops.facts import (DEFAULTS, XNNPACK_OPERATOR_DEFAULT, XnnpackFacts, facts_of, missing_facts,
                                    op_types, register_facts)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tflite_flops"
ANALYSIS = PACKAGE / "analysis"
# the modules that read op facts: analysis/, the latency model's static half, and the studies of many entries
# (those that moved out of analysis/: every signature, a bundle's sections); keyed by their name in analysis/,
# else by their path under tflite_flops/
SCANNED = {**{p.name: p for p in sorted(ANALYSIS.glob("*.py"))},
           **{f"{d}/{n}.py": PACKAGE / d / f"{n}.py" for d, names in (("latency", ("profile", "predict", "fit")),
                                                                      ("studies", ("signatures", "sections")))
              for n in names}}

# String constants in the SCANNED modules that name an op type but are no op fact a record should hold,
# each with its reason; (module, literal) -> reason. Reviewed: a new entry needs one.
ALLOWED: dict[tuple[str, str], str] = {}  # none today: every op-type fact of the scanned modules is in a record


def _op_type_names() -> set[str]:
    """Every op type with a record and every builtin op code's name (the schema's BuiltinOperator)."""
    from tflite_flops.reader import schema
    return set(op_types()) | set(schema.BUILTIN_OPS.values())


def _literals(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """(line, literal) of each string constant of ``path`` that is an op type's name."""
    return _literals_in(source_trees.nodes(path), names)


def _literals_of(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, literal) of each string constant of Python ``source`` that is an op type's name (a docstring
    is one constant, never equal to a name)."""
    return _literals_in(ast.walk(ast.parse(source)), names)


def _literals_in(nodes, names: set[str]) -> list[tuple[int, str]]:
    return [(node.lineno, node.value) for node in nodes
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names]


def test_the_analysis_holds_no_op_type_literal():
    names = _op_type_names()
    found = {}
    for key, path in SCANNED.items():
        for line, literal in _literals(path, names):
            if (key, literal) not in ALLOWED:
                found[f"{key}:{line}"] = literal
    assert not found, ("op-type literals in tflite_flops/analysis/, latency/ or studies/ (register the fact in the op's record, "
                       f"tflite_flops/ops/facts.py, or allow it with a reason): {found}")


def test_the_allow_list_has_no_stale_entry():
    names = _op_type_names()
    present = {(key, literal) for key, path in SCANNED.items() for _, literal in _literals(path, names)}
    assert set(ALLOWED) <= present, sorted(set(ALLOWED) - present)


def test_the_literal_scan_finds_a_literal():
    """The scan itself: a table like the ones the records replaced is found."""
    names = _op_type_names()
    source = 'GROUPS = {"conv": ("CONV_2D", "DEPTHWISE_CONV_2D")}\n'
    assert [v for _, v in _literals_of(source, names)] == ["CONV_2D", "DEPTHWISE_CONV_2D"]


def test_the_missing_facts_listing_is_the_reviewed_one():
    expected = LISTING.read_text(encoding="utf-8")
    found = listing()
    assert found == expected, ("the missing-facts listing changed; review it and record it with "
                               "python tests/op_facts_missing.py --update\n" + diff(expected, found))


def test_one_record_holds_every_fact_of_an_op_type():
    conv = facts_of("CONV_2D")
    assert conv.spec.status == "ok" and conv.shape is not None and conv.tflm is not None
    assert conv.temporaries is not None and "contraction" in conv.traits
    assert set(conv.placement) == {"xnnpack", "gpu"}
    assert conv.xnnpack.operator_bytes == 1_700 and conv.xnnpack.gemm and conv.law_group == "conv"
    assert facts_of("RESHAPE").memory is not None and facts_of("RESHAPE").memory.data_unmodified
    assert facts_of("WHILE").law_features[:2] == ("1", "trips")


def test_a_new_op_type_shows_what_it_still_needs(monkeypatch):
    from tflite_flops.ops import facts
    monkeypatch.setattr(facts, "_RECORDS", {**facts._RECORDS})
    monkeypatch.setattr(facts, "_BUILT", {})
    register_facts("MY_OP", law_group="binary")
    assert missing_facts()["MY_OP"] == ("cost", "shape", "tflm", "placement.xnnpack", "placement.gpu",
                                       "memory=default")
    with pytest.raises(ValueError, match="law_group of MY_OP registered twice"):
        register_facts("MY_OP", law_group="unary")
    with pytest.raises(TypeError, match="unknown op facts"):
        register_facts("MY_OP", latency="fast")


def test_a_user_s_own_op_is_not_in_the_package_s_listing(monkeypatch):
    from tflite_flops.ops import facts
    monkeypatch.setattr(facts, "_RECORDS", {**facts._RECORDS})
    monkeypatch.setattr(facts, "_BUILT", {})
    monkeypatch.setattr(registry, "_REGISTRY", {**registry._REGISTRY})
    registry.register_cost("CUSTOM:MyListedTestOp")(lambda ctx: registry.Cost())
    assert facts_of("CUSTOM:MyListedTestOp").spec.reference == "user"
    assert "CUSTOM:MyListedTestOp" not in missing_facts()


def test_every_default_is_named_with_its_reason():
    assert DEFAULTS["xnnpack.operator_bytes"] is XNNPACK_OPERATOR_DEFAULT
    assert XNNPACK_OPERATOR_DEFAULT.value == 696
    assert all(d.reason for d in DEFAULTS.values())
    assert XnnpackFacts().operator_bytes is None  # an unregistered size is the default, listed as such
    assert "xnnpack.operator_bytes=default" in missing_facts()["ABS"]


def _raising(*_args):
    raise AttributeError("'NoneType' object has no attribute 'shape'")


def test_a_failing_temporaries_fact_warns_and_does_not_crash(samples_dir, monkeypatch):
    from tflite_flops.api import analyze
    model = (samples_dir / "cnn_dynamic_range.tflite").read_bytes()
    before = analyze(model)
    assert before.memory.runtime.temporaries_bytes > 0 and not before.warnings
    used = {o.op_type for o in before.ops if o.temporaries_bytes}  # the op types whose kernels add some here
    for op_type in used:
        monkeypatch.setitem(registry._TEMPORARIES, op_type, _raising)
    after = analyze(model)
    lines = [w for w in after.warnings if "LiteRT kernel temporaries not counted (AttributeError" in w]
    assert lines and {w.split()[2].rstrip(":") for w in lines} == used
    assert after.memory.runtime.temporaries_bytes == 0  # what the fact gave is left out, and said so


def test_a_failing_tflm_fact_warns_and_names_the_op_type(samples_dir, monkeypatch):
    from tflite_flops.api import analyze
    model = (samples_dir / "cnn_float.tflite").read_bytes()
    before = analyze(model)
    assert "CONV_2D" not in before.memory.tflm_unmodelled_ops
    monkeypatch.setitem(tflm._TFLM, "CONV_2D", _raising)
    after = analyze(model)
    assert any("CONV_2D: TFLM arena facts not counted (AttributeError" in w for w in after.warnings)
    assert "CONV_2D" in after.memory.tflm_unmodelled_ops  # the figure says it is low


def test_a_failing_placement_rule_keeps_the_op_off_with_its_reason(samples_dir, monkeypatch):
    from tflite_flops.api import analyze
    from tflite_flops.ops import placement
    model = (samples_dir / "cnn_float.tflite").read_bytes()
    rule = placement._RULES[placement.XNNPACK]["CONV_2D"]
    monkeypatch.setitem(placement._RULES[placement.XNNPACK], "CONV_2D", rule._replace(rule=_raising))
    report = analyze(model)
    convs = [o for o in report.ops if o.op_type == "CONV_2D"]
    assert convs and all(not o.xnnpack for o in convs)
    assert all(o.xnnpack_reason.startswith("rule failed: the CONV_2D rule raised AttributeError") for o in convs)
