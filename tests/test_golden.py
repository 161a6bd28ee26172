"""Golden outputs: every static report, compare, batch, sweep and ops output is byte-identical to its
recorded text file under tests/golden/ (layout and normalisation in ``golden_outputs.py``).

A refactor must not change what users see. When a change is meant to, record the new outputs with
``python tests/golden_outputs.py --update`` and commit them with the change: the diff of
tests/golden/ is what the reviewer reads. An HTML page is stored with its embedded JSON
pretty-printed beside it and a line per table row (``golden_outputs.stored_form``); the page the
files reassemble to is compared with the output byte for byte.
"""

from __future__ import annotations

import pytest

from golden_outputs import (CHAIN, EXIT_CODES, ROOT, Chain, cases, diff, from_stored, golden_files, golden_path,
                            golden_paths, joined, run, stored_form)
from lanes import slow_cases

UPDATE = "python tests/golden_outputs.py --update"


# The quick lane's sample of the cases (pytest -m "not slow"): every format of one model, every other sample
# model in JSON (all its figures), and one case of each other command and option; CI compares every case.
QUICK = {*(f"analyze/cnn_float.{fmt}" for fmt in ("table", "json", "csv", "md", "html", "model-explorer")),
         *(f"analyze/{name}.json" for name in ("cnn_int8", "cnn_fp16", "cnn_dynamic_range", "fcn_dynamic",
                                               "mlp_dynamic_batch", "transformer_block", "lstm", "tiny_decoder",
                                               "tiny_decoder_kv")),
         "analyze/fcn_dynamic-what-if.table", "analyze/mlp_dynamic_batch-b8.table", "analyze/tiny_decoder-bundle.table",
         "compare/float-int8.table", "sweep/mlp-batch.table", "ops/catalog.table"}


@pytest.fixture(scope="module")
def chain():
    with Chain() as path:
        yield path


def test_every_golden_file_belongs_to_a_case():
    recorded = set(golden_files())
    expected = {p for name in cases() for p in golden_paths(name)}
    assert not expected - recorded, f"cases without a golden file (record them with {UPDATE}): " + ", ".join(
        sorted(p.relative_to(ROOT).as_posix() for p in expected - recorded))
    assert not recorded - expected, f"stale golden files (no case writes them; {UPDATE} deletes them): " + ", ".join(
        sorted(p.relative_to(ROOT).as_posix() for p in recorded - expected))


def test_the_quick_sample_names_cases():
    assert QUICK <= set(cases()), sorted(QUICK - set(cases()))


@pytest.mark.parametrize("name", slow_cases(cases(), set(cases()) - QUICK))
def test_output_is_the_recorded_one(name, request):
    # the generated chain is made (once for the module) for the cases that read it, not for the quick lane's
    chain = request.getfixturevalue("chain") if CHAIN in cases()[name] else CHAIN
    args = cases(chain)[name]
    found, status = run(args, chain)
    assert status == EXIT_CODES.get(name, 0)
    path = golden_path(name)
    expected = from_stored(path)
    assert found == expected, (f"tflite-flops {' '.join(args).replace(chain, CHAIN)}: the output differs from "
                               f"the recorded one; if that is meant, {UPDATE}\n" + diff(name, expected, found))
    for stored, data in stored_form(path, found).items():  # the readable form is the canonical one
        assert stored.read_bytes() == data, f"{stored.relative_to(ROOT)} is not in its stored form: {UPDATE}"


def test_the_stored_form_of_a_page_gives_it_back():
    """Splitting a page into its readable files and joining them again loses nothing, whatever its rows hold."""
    page = ('<table><tr><td>a</td></tr>\n<tr><td>b</td></tr><span class="op" x></span></table><div>\n'
            '<span class="op" y></span><span class="op" z></span></div>\n<script type="application/json" '
            'id="report-data">{"k":"x\\u003c/tr\\u003e \\u0026 y","v":[1.5,-0.0,1e+16,null]}</script>\n').encode()
    path = golden_path("analyze/cnn_float.html")
    stored = stored_form(path, page)
    assert b"</tr>\n" in stored[path] and b'"v": [' in stored[path.with_name(path.name + ".json")]
    assert joined(path, stored) == page
