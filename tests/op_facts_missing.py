"""The missing-facts listing: which op types lack which fact (``tflite_flops.ops.facts.missing_facts``),
as held in ``tests/op_facts_missing.txt`` and checked by ``tests/test_op_facts.py``.

``python tests/op_facts_missing.py`` prints the difference with the committed listing;
``python tests/op_facts_missing.py --update`` rewrites it. Adding an op type shows here what it still needs.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

LISTING = Path(__file__).resolve().parent / "op_facts_missing.txt"

HEADER = """\
# Op types and the facts they lack, from ``tflite_flops.ops.facts.missing_facts`` over every op type with a
# record and every builtin op code. Regenerate with ``python tests/op_facts_missing.py --update`` and review
# the diff: a line that grows means an op type lost a fact; a new line, an op type that still needs facts.
#
# cost: no cost entry (the op is reported unsupported); shape: no output-shape function;
# tflm: no TFLM arena facts (its TFLM figures are low); placement.<delegate>: no rule (never delegated);
# <fact>=default: the fact takes its named default (tflite_flops.ops.facts.DEFAULTS):
"""


def listing() -> str:
    """The listing's text, header first."""
    import tflite_flops.ops  # noqa: F401  # (every family registers its facts)
    from tflite_flops.latency.suite import suite
    from tflite_flops.ops.facts import DEFAULTS, missing_facts
    from tflite_flops.reader import schema

    calibrated = {point.family for point in suite(False)}
    lines = [HEADER.rstrip("\n")]
    lines += [f"#   {d.fact}: {d.value!r}, {d.reason}" for d in DEFAULTS.values()]
    lines += [f"{op}\t{' '.join(lacks)}" for op, lacks in missing_facts(schema.BUILTIN_OPS.values(), calibrated)
              .items()]
    return "\n".join(lines) + "\n"


def diff(expected: str, found: str) -> str:
    """A unified diff of two listings."""
    return "".join(difflib.unified_diff(expected.splitlines(True), found.splitlines(True),
                                        "op_facts_missing.txt (committed)", "op_facts_missing.txt (now)"))


def main(argv: list[str]) -> int:
    found = listing()
    if "--update" in argv:
        LISTING.write_text(found, encoding="utf-8")
        return 0
    expected = LISTING.read_text(encoding="utf-8") if LISTING.exists() else ""
    sys.stdout.write(diff(expected, found))
    return int(expected != found)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
