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

UPDATE = "python tests/golden_outputs.py --update"


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


@pytest.mark.parametrize("name", list(cases()))
def test_output_is_the_recorded_one(name, chain):
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
