"""Mutation fuzzing of the reader and the analysis, with a fixed seed and a time budget.

Each case takes a seed model (the files in ``sample_models/`` plus small models built in
memory), applies one to three random mutations (bit flips, byte overwrites, "interesting"
32-bit values such as 0, -1 or 2**31 written over offsets and lengths, truncations,
deletions, duplications and splices with another model), then runs it through
``load_model`` and, if that succeeds, through ``analyze`` and ``Report.to_json``. Every case
must either succeed or raise ``TfliteFlopsError``; anything else escaping, or one case
taking longer than the per-case limit (a hang), fails the test.

Two tests share the harness:

* ``test_fuzz_smoke``: a few seconds, always selected (also with ``-m "not slow"``).
* ``test_fuzz_budget``: marked ``slow``. CI runs it (CI runs everything); developers can
  deselect it with ``-m "not slow"``.

Environment variables:

* ``TFLITE_FLOPS_FUZZ_SECONDS``: budget of ``test_fuzz_budget`` (default 30; keep <= 60 in CI).
* ``TFLITE_FLOPS_FUZZ_SEED``: the seed (default 20261122). Same seed + same budget on the
  same machine gives the same sequence of mutations (the count reached depends on speed).
* ``TFLITE_FLOPS_FUZZ_CASE_SECONDS``: per-case hang limit (default 2).

Run with ``-s`` to see how many mutations ran and the outcome tally. The ``fuzz/``
directory has an atheris harness for longer, coverage-guided runs.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
import traceback
from collections import Counter
from pathlib import Path

import pytest
from fuzz_corpus import mutate, seed_corpus

import tflite_flops
from tflite_flops.errors import TfliteFlopsError
from tflite_flops.reader.load import load_model

SEED = int(os.environ.get("TFLITE_FLOPS_FUZZ_SEED", "20261122"))
BUDGET = float(os.environ.get("TFLITE_FLOPS_FUZZ_SECONDS", "30"))
CASE_LIMIT = float(os.environ.get("TFLITE_FLOPS_FUZZ_CASE_SECONDS", "2"))
class _Hang(Exception):
    """Raised by the per-case alarm."""


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


def fuzz(budget: float, seed: int) -> tuple[int, Counter, list[str], float]:
    """Run mutations for ``budget`` seconds. Returns (count, tally, failures, slowest case seconds)."""
    rng = random.Random(seed)
    corpus = seed_corpus()
    tally: Counter = Counter()
    failures: list[str] = []
    slowest = 0.0
    use_alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def on_alarm(signum, frame):
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, on_alarm) if use_alarm else None
    count = 0
    deadline = time.monotonic() + budget
    try:
        while time.monotonic() < deadline:
            base = rng.randrange(len(corpus))
            data, what = mutate(rng, corpus[base], corpus)
            count += 1
            start = time.perf_counter()
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, CASE_LIMIT * 2)
            try:
                outcome = run_case(data)
            except _Hang:
                outcome = "hang"
                failures.append(f"case {count} (seed model {base}, {what}): hang (> {CASE_LIMIT * 2:.0f} s)")
            except Exception as exc:  # noqa: BLE001 - exactly what this test hunts for
                outcome = "escaped"
                where = traceback.extract_tb(exc.__traceback__)[-1]
                failures.append(f"case {count} (seed model {base}, {what}): {type(exc).__name__}: {exc} "
                                f"at {Path(where.filename).name}:{where.lineno}")
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            elapsed = time.perf_counter() - start
            if elapsed > CASE_LIMIT and outcome not in ("hang", "escaped"):
                # A slow input is slow every time; a busy machine is not: time it once more.
                again = time.perf_counter()
                run_case(data)
                elapsed = min(elapsed, time.perf_counter() - again)
                if elapsed > CASE_LIMIT:
                    failures.append(f"case {count} (seed model {base}, {what}): took {elapsed:.2f} s")
            slowest = max(slowest, elapsed)
            tally[outcome] += 1
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, previous)
    return count, tally, failures, slowest


def _check(budget: float) -> None:
    count, tally, failures, slowest = fuzz(budget, SEED)
    print(f"\nfuzz: seed {SEED}, {budget:.0f} s budget: {count} mutations; "
          + ", ".join(f"{k}: {v}" for k, v in sorted(tally.items()))
          + f"; slowest case {slowest * 1000:.0f} ms")
    assert count > 0
    assert not failures, "\n".join(failures[:20])


def test_fuzz_smoke():
    _check(min(3.0, BUDGET))


@pytest.mark.slow
def test_fuzz_budget():
    _check(BUDGET)
