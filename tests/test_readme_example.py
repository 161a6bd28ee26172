"""README.md's example output is the tool's output on the sample, so it cannot drift.

    python tests/test_readme_example.py --update   # rewrite the README's example block from the tool
    python tests/test_readme_example.py            # say whether it is up to date (exit 1 and a diff if not)

The example is the README's code block that begins with ``$ python -m tflite_flops analyze sample_models/...``
under "## Example": its first line is the command, the rest is what the command prints on stdout, run
from the repository root. When a change alters that output, run ``--update`` and commit README.md
with the change (the golden files, tests/golden_outputs.py, hold every other output).
"""

from __future__ import annotations

import difflib
import re
import shlex
import sys
from pathlib import Path

import cli_process

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
_BLOCK = re.compile(r"^## Example\n\n```\n(\$ python -m tflite_flops (analyze sample_models/[^\n]*))\n(.*?)```\n",
                    re.M | re.S)


def example(text: str) -> re.Match:
    """The example block of the README's text (its command line, the arguments, the output shown)."""
    m = _BLOCK.search(text)
    if m is None:
        raise AssertionError("README.md has no '## Example' block starting with "
                             "'$ python -m tflite_flops analyze sample_models/...'")
    return m


PINNED_TARGET = "x86-avx512"  # the README shows an AVX-512 host's output: XNNPACK's own bytes are the target's


def output(args: str) -> str:
    """What ``tflite-flops ARGS`` prints on stdout, run from the repository root, on the README's target
    (``--target x86-avx512`` added unless the command names one: the test passes on any CI host)."""
    argv = shlex.split(args)
    if "--target" not in argv:
        argv += ["--target", PINNED_TARGET]
    r = cli_process.run(argv, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def updated(text: str) -> str:
    """The README's text with the example's output made anew."""
    m = example(text)
    return text[:m.start(3)] + output(m.group(2)) + text[m.end(3):]


def test_the_readme_example_is_the_tools_output():
    text = README.read_text(encoding="utf-8")
    m = example(text)
    assert m.group(3) == output(m.group(2)), \
        "README.md's example output is stale: run python tests/test_readme_example.py --update"


def test_the_readme_example_shows_what_a_reader_needs():
    shown = example(README.read_text(encoding="utf-8")).group(3)
    for part in ("Totals per inference", "Memory at run time", "XNNPACK on", "XNNPACK's own", "Where it runs",
                 "Top 5 ops by FLOPs"):
        assert part in shown, part


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    new = updated(text)
    if "--update" in argv:
        README.write_text(new, encoding="utf-8")
        print("README.md: example updated" if new != text else "README.md: example already up to date")
        return 0
    if new == text:
        print("README.md: example up to date")
        return 0
    sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), "README.md", "now"))
    return 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
