"""Mutation fuzzing of the reader and the analysis, with a fixed seed and a fixed number of cases.

Each case takes a seed model (the files in ``sample_models/`` plus small models built in
memory), applies one to three random mutations (bit flips, byte overwrites, "interesting"
32-bit values such as 0, -1 or 2**31 written over offsets and lengths, truncations,
deletions, duplications and splices with another model), then runs it through
``load_model`` and, if that succeeds, through ``analyze`` and ``Report.to_json``. Every case
must either succeed or raise ``TfliteFlopsError``; anything else escaping, or one case
doing more than the per-case work limit (a hang or a blow-up), fails the test.

Nothing here reads a clock. The number of cases is fixed, so every machine checks the same
files, and a case's work is the number of function calls it makes (``work_counter.count_calls``:
Python and builtin calls), which is the same on every machine and at every load. The
costliest seed model (``tiny_decoder``) makes ~480,000 calls; the limit is 10 times that. A
case that passes it is stopped at that point (a runaway loop or an exponential walk fails within
seconds instead of hanging), and the failure names it. An infinite loop that makes no function
call at all (none of the package's loops is one) would not be counted; CI's job timeout is the
backstop for that.

Two tests share the harness:

* ``test_fuzz_smoke``: 150 cases, always selected (also with ``-m "not slow"``).
* ``test_fuzz_budget``: marked ``slow``, 3,000 cases by default. CI runs it (CI runs
  everything); ``-m "not slow"`` deselects it.

Environment variables:

* ``TFLITE_FLOPS_FUZZ_CASES``: cases of ``test_fuzz_budget`` (default 3000).
* ``TFLITE_FLOPS_FUZZ_SEED``: the seed (default 20261122). The same seed gives the same
  sequence of mutations on every machine.
* ``TFLITE_FLOPS_FUZZ_CASE_CALLS``: the per-case work limit in function calls (default 5,000,000).

Run with ``-s`` to see the outcome tally and the costliest case. The ``fuzz/`` directory has an
atheris harness for longer, coverage-guided runs.
"""

from __future__ import annotations

import os
import random
import traceback
from collections import Counter
from pathlib import Path

import pytest
from fuzz_corpus import mutate, seed_corpus
from work_counter import WorkLimitExceeded, count_calls

import tflite_flops
from tflite_flops.errors import TfliteFlopsError
from tflite_flops.reader.load import load_model

SEED = int(os.environ.get("TFLITE_FLOPS_FUZZ_SEED", "20261122"))
SMOKE_CASES = 150
BUDGET_CASES = int(os.environ.get("TFLITE_FLOPS_FUZZ_CASES", "3000"))
CASE_CALLS = int(os.environ.get("TFLITE_FLOPS_FUZZ_CASE_CALLS", "5000000"))


def run_case(data: bytes) -> str:
    """Reader, then analysis; returns the outcome name. Non-package exceptions propagate."""
    try:
        model = load_model(data)
    except TfliteFlopsError:
        return "rejected by reader"
    try:
        report = tflite_flops.analyze(model)
        report.to_json()
    except TfliteFlopsError:
        return "loaded, rejected by analysis"
    return "analyzed"


def fuzz(cases: int, seed: int) -> tuple[Counter, list[str], int]:
    """Run ``cases`` mutations. Returns (outcome tally, failures, calls of the costliest case)."""
    rng = random.Random(seed)
    corpus = seed_corpus()
    tally: Counter = Counter()
    failures: list[str] = []
    costliest = 0
    for count in range(1, cases + 1):
        base = rng.randrange(len(corpus))
        data, what = mutate(rng, corpus[base], corpus)
        try:
            counted = count_calls(run_case, data, limit=CASE_CALLS)
        except WorkLimitExceeded:
            outcome = "over the work limit"
            failures.append(f"case {count} (seed model {base}, {what}): more than {CASE_CALLS:,} function calls")
        else:
            costliest = max(costliest, counted.calls)
            if counted.error is None:
                outcome = counted.result
            else:  # exactly what this test hunts for: anything but TfliteFlopsError escaping
                outcome = "escaped"
                exc = counted.error
                where = traceback.extract_tb(exc.__traceback__)[-1]
                failures.append(f"case {count} (seed model {base}, {what}): {type(exc).__name__}: {exc} "
                                f"at {Path(where.filename).name}:{where.lineno}")
        tally[outcome] += 1
    return tally, failures, costliest


def _check(cases: int) -> None:
    tally, failures, costliest = fuzz(cases, SEED)
    print(f"\nfuzz: seed {SEED}, {cases} mutations; "
          + ", ".join(f"{k}: {v}" for k, v in sorted(tally.items()))
          + f"; costliest case {costliest:,} calls")
    assert sum(tally.values()) == cases
    assert not failures, "\n".join(failures[:20])


@pytest.mark.slow  # ~2 s: the quick lane keeps the columnar and bundle fuzz smokes
def test_fuzz_smoke():
    _check(SMOKE_CASES)


@pytest.mark.slow
def test_fuzz_budget():
    _check(BUDGET_CASES)
