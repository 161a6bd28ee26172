"""Work bounded by the input: crafted files whose content would make the reader, the walk, or the
signature and section loops do work out of proportion to their size are refused with one line, and
the refusal itself costs work in proportion to the file.

Work is counted (``work_counter.count_calls`` with a limit), never timed. The bounds are stated in the
code: ``columnar.TABLES_PER_FILE`` and ``TYPE_LIMITS`` (tables, subgraphs and operators per byte),
``bounds.MAX_NESTING`` and ``WALK_VISITS`` (the control-flow walk), ``bounds.SIGNATURE_WORK``
(``--all-signatures``), ``bundle.MAX_SECTIONS`` and non-overlapping model sections (``--all-sections``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import cli_process
import pytest
from bundle_helpers import TFLITE_MODEL, bundle_bytes
from redteam import if_chain, many_signatures, repeated_sections_bundle, repeated_subgraphs, shared_operator
from work_counter import count_calls

import tflite_flops
from tflite_builder import ADD, INT32, WHILE, build_model, control_flow_model
from tflite_flops.errors import ModelFormatError
from tflite_flops.reader import columnar
from tflite_flops.reader.bundle import MAX_SECTIONS, read_bundle
from tflite_flops.reader.bounds import MAX_NESTING
from tflite_flops.reader.load import load_model

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "sample_models" / "mlp_dynamic_batch.tflite"


def while_chain(depth: int, pad: int = 0) -> bytes:
    """``depth`` WHILE loops, each the body of the one before (subgraph i: WHILE cond=depth+i body=i+1),
    and ``pad`` bytes of buffer data."""
    n = 2 * depth
    sgs = []
    for i in range(n):
        if i < depth - 1:
            op = {"opcode": 1, "inputs": [0], "outputs": [1],
                  "options": ("WhileOptions", {"cond_subgraph_index": depth + i, "body_subgraph_index": i + 1})}
        else:
            op = {"opcode": 0, "inputs": [0, 0], "outputs": [1]}
        sgs.append({"tensors": [{"shape": [1], "type": INT32}, {"shape": [1], "type": INT32}],
                    "operators": [op], "inputs": [0], "outputs": [1]})
    return build_model(sgs, [ADD, WHILE], buffers=[None, bytes(pad)] if pad else None)


def refused(fn, *args, limit: int, needle: str, **kwargs) -> int:
    """Run ``fn`` under a work limit; it must raise ModelFormatError containing ``needle``. The calls made."""
    counted = count_calls(fn, *args, limit=limit, **kwargs)
    assert isinstance(counted.error, ModelFormatError), counted.error or counted.result
    assert needle in str(counted.error) and "\n" not in str(counted.error), counted.error
    return counted.calls


# ---------------------------------------------------------------------------------------------
# The reader: tables, subgraphs and operators in proportion to the file


@pytest.mark.slow
def test_one_subgraph_table_named_240k_times_is_refused_before_it_is_read():
    # 960 KB: one subgraph per 4 bytes, where a real model needs several KiB (columnar.TYPE_LIMITS).
    # Before the bound: 42 s and 1.7 GB.
    data = repeated_subgraphs(240_000)
    assert len(data) < 1_000_000
    refused(load_model, data, limit=200_000, needle="tables in a 960,")


def test_subgraphs_and_operators_past_their_own_limits_are_refused():
    base, per = columnar.TYPE_LIMITS["SubGraph"]
    ok = repeated_subgraphs(base)  # the base alone is read (a small file may hold that many)
    assert len(load_model(ok).subgraphs) == base
    refused(load_model, repeated_subgraphs(base + base // 16), limit=500_000, needle="SubGraph tables")
    base, per = columnar.TYPE_LIMITS["Operator"]
    assert len(load_model(shared_operator(base)).subgraphs[0].operators) == base
    refused(load_model, shared_operator(base + base // 16), limit=500_000, needle="Operator tables")


# ---------------------------------------------------------------------------------------------
# The walk: nesting and visits


def test_chained_ifs_are_refused_with_work_linear_in_the_file():
    # 4.4 KB of chained IFs took 26 s and 509 MB (the walk stopped only at 2M visits); now the
    # walk's visits are bounded by 16,384 + 2 per operator, checked before the walk.
    data = if_chain(22)
    assert len(data) < 4_500
    refused(tflite_flops.analyze, data, limit=300_000, needle="expand into a walk over more than 16,428 operators")


@pytest.mark.slow
def test_nesting_past_the_limit_is_one_clear_error_not_a_recursion_error():
    refused(tflite_flops.analyze, while_chain(MAX_NESTING + 1), limit=300_000,
            needle=f"subgraphs nest more than {MAX_NESTING} levels deep through control flow")
    refused(tflite_flops.analyze, while_chain(1500), limit=2_000_000, needle="SubGraph tables")  # too many for its size


@pytest.mark.slow  # a 2 MB model of 3,000 subgraphs: about a second
def test_a_chain_of_1500_nested_whiles_is_one_clear_error_not_a_recursion_error():
    # (it raised RecursionError); with room for its subgraphs it is refused for its depth
    refused(tflite_flops.analyze, while_chain(1500, pad=2_000_000), limit=2_000_000,
            needle=f"subgraphs nest more than {MAX_NESTING} levels deep through control flow")


@pytest.mark.slow  # three CLI runs over 128 subgraphs: about a second
def test_the_deepest_nesting_accepted_runs_every_pass(tmp_path):
    """MAX_NESTING levels of WHILE go through every recursion over subgraphs (the walk, the memory plans,
    TFLM's, XNNPACK's placement, the outputs) in a fresh process, with Python's default stack."""
    path = tmp_path / "deep.tflite"
    path.write_bytes(while_chain(MAX_NESTING))
    for fmt in ("json", "html", "table"):
        r = cli_process.run(["analyze", str(path), "-f", fmt, "--while-trips", "2"], cwd=ROOT, timeout=120)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    path.write_bytes(while_chain(MAX_NESTING + 1))
    r = cli_process.run(["analyze", str(path)], cwd=ROOT, timeout=60)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 1 and len(errors) == 1 and f"more than {MAX_NESTING} levels" in errors[0], r.stderr


def test_a_chain_that_subgraph_0_does_not_reach_is_refused_at_load():
    # Subgraph 0 is tiny; subgraph 1 (a signature's entry, say) starts a chain of IFs that doubles per level.
    # The load checks the walk from subgraph 0, then from each subgraph nothing walked yet, in order.
    data = control_flow_model({i: ("IfOptions", {"then_subgraph_index": i + 1, "else_subgraph_index": i + 1})
                               for i in range(1, 30)}, 31)
    refused(load_model, data, limit=300_000, needle="expand into a walk")


# ---------------------------------------------------------------------------------------------
# --all-signatures and --all-sections


@pytest.mark.slow
def test_signatures_out_of_proportion_are_refused_for_all_signatures_and_analyzed_alone():
    data = many_signatures(2_000)  # 168 KB
    refused(tflite_flops.analyze, data, all_signatures=True, limit=1_000_000, needle="2,000 signatures over 1 operators")
    assert tflite_flops.analyze(data).totals.macs == 12  # one signature: fine
    few = tflite_flops.analyze(many_signatures(8), all_signatures=True)
    assert len(few.signatures) == 8 and all(s.totals.macs == 12 for s in few.signatures.values())


@pytest.mark.slow  # building 20,000 signatures: about a second
def test_20k_signatures_are_refused_for_allmany_signatures():
    # 1.7 MB; --all-signatures took 100 s. Its work is bounded by bounds.SIGNATURE_WORK.
    refused(tflite_flops.analyze, many_signatures(20_000), all_signatures=True, limit=3_000_000,
            needle="20,000 signatures over 1 operators")


def test_repeated_and_overlapping_sections_are_refused():
    # 100k repeated section entries took more than 60 s with --all-sections.
    refused(read_bundle, repeated_sections_bundle(MAX_SECTIONS + 1), limit=200_000, needle=f"(limit {MAX_SECTIONS})")
    refused(read_bundle, repeated_sections_bundle(2), limit=200_000, needle="model sections 0 and 1 overlap")
    one = read_bundle(repeated_sections_bundle(1))
    assert [s.kind for s in one.sections] == ["TFLiteModel"]
    model = MLP.read_bytes()
    two = bundle_bytes([(TFLITE_MODEL, model, {}), (TFLITE_MODEL, model, {})])  # apart: fine
    assert len(read_bundle(two).model_sections) == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a fresh process")
@pytest.mark.slow
def test_the_cli_says_one_line_for_each_bound(tmp_path):
    cases = {"ifs.tflite": (if_chain(22), "expand into a walk"),
             "subgraphs.tflite": (repeated_subgraphs(240_000), "refusing to walk further")}
    for name, (data, needle) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        r = cli_process.run(["analyze", str(path)], cwd=ROOT, timeout=60)
        errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert r.returncode == 1 and len(errors) == 1 and needle in errors[0], r.stderr


@pytest.mark.slow
def test_html_draws_at_most_its_row_limit_and_embeds_every_op():
    """A model with more ops than the HTML page lists (the crafted shared operator): the per-op table, the
    placement strips and the FLOPs chart stop at ``HTML_OP_ROWS`` with a note, the memory chart draws one
    point per bin of ops, and the embedded data still holds every op (the JSON contract)."""
    import json
    import re

    from tflite_flops.render import render
    from tflite_flops.render.formats import html

    n = html.HTML_OP_ROWS + 7
    report = tflite_flops.analyze(shared_operator(n, pad=128 * n))
    page = render(report, "html")
    assert page.count('<tr data-op="') == html.HTML_OP_ROWS
    assert f"The first {html.HTML_OP_ROWS:,} of {n:,} ops are listed" in page
    assert f"The first {html.HTML_OP_ROWS:,} of {n:,} ops are drawn" in page
    assert "Each point is the highest of 2 consecutive ops." in page
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    assert len(data["ops"]) == n and data == json.loads(json.dumps(report.to_dict()))
