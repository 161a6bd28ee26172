"""Every BuiltinOperator has an entry (formula, zero or not-costed with a reason), and the op table
in docs/conventions.md matches the registry.
"""

from __future__ import annotations

import re
from pathlib import Path

import cli_process
import pytest

from tflite_flops.reader import schema
from tflite_flops.ops import lookup, supported_ops
from tflite_flops.ops.catalog import catalog

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conventions.md"
BEGIN, END = "<!-- op-table:begin -->", "<!-- op-table:end -->"


def _enum() -> dict[int, str]:
    """The BuiltinOperator enum as the installed bindings define it, plus codes newer than them."""
    codes = dict(schema.builtin_bindings_codes())
    codes.update(schema.BUILTIN_OPS)
    return codes


def test_enum_is_complete():
    codes = _enum()
    # codes 0..209 without the PLACEHOLDER_FOR_GREATER_OP_CODES sentinel (127)
    assert set(codes) >= set(range(127)) | set(range(128, 210))
    assert 127 not in codes


def test_every_builtin_op_has_an_entry():
    missing = sorted(f"{code} {name}" for code, name in _enum().items() if lookup(name) is None)
    assert not missing, f"{len(missing)} builtin op(s) without a formula, zero or not-costed entry: {missing}"


def _user_registered() -> set[str]:
    """Formulas a user (or a test) added with register_cost: not part of the built-in registry."""
    return {name for name, spec in supported_ops().items() if spec.reference == "user"}


def test_entries_are_well_formed():
    builtin_names = set(_enum().values())
    for name, spec in supported_ops().items():
        if name in _user_registered():
            continue
        assert name in builtin_names or name.startswith("CUSTOM:"), f"registered name {name!r} is no op"
        assert spec.status in ("ok", "zero", "not_costed", "opaque"), name
        if spec.status == "ok":
            assert spec.cost is not None and spec.formula, name
            assert spec.cost.__doc__, f"{name}: the formula function has no docstring"
        else:
            assert spec.note, f"{name}: a {spec.status} entry needs a reason"


def test_catalog_lists_every_op_and_nothing_is_missing():
    rows = catalog()
    assert {r["op"] for r in rows} >= set(_enum().values())
    assert not [r["op"] for r in rows if r["status"] == "MISSING"]


def test_cli_ops_lists_every_op():
    r = cli_process.run(["ops"], cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "MISSING" not in r.stdout
    for name in ("CONV_2D", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STABLEHLO_CASE", "CUSTOM:TFLite_Detection_PostProcess"):
        assert name in r.stdout


def _doc_rows() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        pytest.fail(f"{DOC.name} has no {BEGIN} ... {END} block")
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = []
    for line in block.splitlines():
        line = line.strip()
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| code "):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        rows.append(cells)
    return rows


def test_conventions_doc_table_matches_the_registry():
    """docs/conventions.md's op table is `python -m tflite_flops ops --format md`, pasted between the markers."""
    doc = {(r[1], r[2], r[3]) for r in _doc_rows()}
    registry = {(r["op"], r["status"], r["formula"]) for r in catalog() if r["op"] not in _user_registered()}
    stale, new = sorted(doc - registry), sorted(registry - doc)
    assert not stale and not new, (
        f"docs/conventions.md is out of date with the registry (regenerate the table with "
        f"`python -m tflite_flops ops --format md`): rows only in the doc {stale[:5]}, only in the registry {new[:5]}")


def test_catalog_table_shows_every_note_even_the_first_rows():
    from tflite_flops.render.catalog import catalog_table

    rows = [{"code": "0", "op": "A", "status": "zero", "formula": "0", "note": "first"},
            {"code": "1", "op": "B", "status": "ok", "formula": "FLOPs = n", "note": ""}]
    lines = catalog_table(rows).splitlines()
    assert lines[0].split() == ["code", "op", "status", "formula", "(note)"]
    assert lines[1].endswith("0  (first)") and lines[2].rstrip().endswith("FLOPs = n")
