"""Golden outputs: every static report, compare, batch, sweep and ops output is byte-identical to its
recorded text file under tests/golden/ (layout and normalisation in ``golden_outputs.py``).

A refactor must not change what users see. When a change is meant to, record the new outputs with
``python tests/golden_outputs.py --update`` and commit them with the change: the diff of
tests/golden/ is what the reviewer reads.
"""

from __future__ import annotations

import pytest

from golden_outputs import CHAIN, EXIT_CODES, ROOT, Chain, cases, diff, golden_files, golden_path, run

UPDATE = "python tests/golden_outputs.py --update"


@pytest.fixture(scope="module")
def chain():
    with Chain() as path:
        yield path


def test_every_golden_file_belongs_to_a_case():
    recorded = set(golden_files())
    expected = {golden_path(name) for name in cases()}
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
    expected = path.read_bytes() if path.exists() else b""
    assert found == expected, (f"tflite-flops {' '.join(args).replace(chain, CHAIN)}: the output differs from "
                               f"the recorded one; if that is meant, {UPDATE}\n" + diff(name, expected, found))
