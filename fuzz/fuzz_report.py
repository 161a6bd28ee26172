"""Coverage-guided fuzzing of the saved-report loader with atheris (libFuzzer for Python).

Every input must either be refused with ``ReportFormatError`` (``Report.from_json``: the schema walk of
``tflite_flops/report/loading.py``) or load and render everywhere: ``repr``, the notebook view, ``to_json`` (read
back equal), the table, CSV, Markdown and HTML, and its comparison with the sample CNN's report in every compare
format (no NaN or infinity in compare's JSON). Anything else escaping is a crash that libFuzzer reports and saves as
``crash-<sha1>``; hangs are reported by ``-timeout``, memory by ``-rss_limit_mb``.

    pip install atheris
    python fuzz/fuzz_report.py --seed fuzz/report_corpus      # the saved reports of tests/golden/analyze
    python fuzz/fuzz_report.py fuzz/report_corpus -timeout=10 -rss_limit_mb=2048 -max_total_time=3600
    TFLITE_FLOPS_FUZZ_STAGE=load python fuzz/fuzz_report.py fuzz/report_corpus   # load and to_json only

Most mutations are made on the JSON value (a custom mutator): one value replaced by another of a hostile kind (a
string, NaN, an infinity, -1, 1e400, a float, a huge integer, a list, an object, deep nesting), a key removed or
added; the rest are libFuzzer's byte mutations of the text. See fuzz/README.md.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["tflite_flops"]):
    from tflite_flops.errors import ReportFormatError
    from tflite_flops.render import render
    from tflite_flops.render.compare import render_compare_table, render_comparison
    from tflite_flops.report import Report
    from tflite_flops.report.compare import compare_reports

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "analyze"
STAGE = os.environ.get("TFLITE_FLOPS_FUZZ_STAGE", "render")  # "load": from_json, repr and to_json only
BASE = Report.from_json((GOLDEN / "cnn_float.json").read_text(encoding="utf-8"))

# what a value is replaced by (JSON text): the kinds a hand-edited, truncated or hostile report holds
HOSTILE = ['"x"', '""', "NaN", "Infinity", "-Infinity", "-1", "0", "1e400", "-1e400", "1.5", "-0.5", "true", "null",
           "[]", "{}", '{"a": 1}', "[1, 2]", '[[1, -1]]', "1" + "0" * 40, "1" + "0" * 400, '"\\u001b[2J\\udcff"',
           "[" * 40 + "]" * 40, '"ok"', '"inference"', '"float32"', '"0:0"']


def seed(target: Path) -> None:
    """Copy the golden JSON reports (every sample, every signature, a bundle) into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(GOLDEN.glob("*.json")):
        if not path.name.endswith((".me.json", ".html.json")) and path.stat().st_size <= 256 << 10:
            shutil.copyfile(path, target / path.name)
    print(f"{len(list(target.iterdir()))} files in {target}")


def _nodes(value, out, parent=None, key=None):
    out.append((parent, key))
    if isinstance(value, dict):
        for k, v in value.items():
            _nodes(v, out, value, k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _nodes(v, out, value, i)
    return out


def mutate(data: bytes, max_size: int, seed_value: int) -> bytes:
    """One mutation: on the JSON value (four in five) or libFuzzer's on the bytes."""
    rng = random.Random(seed_value)
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return atheris.Mutate(data, max_size)
    nodes = _nodes(value, [])[1:]
    if not nodes or rng.random() < 0.2:
        return atheris.Mutate(data, max_size)
    parent, key = rng.choice(nodes)
    action = rng.random()
    if action < 0.1 and isinstance(parent, dict):
        del parent[key]
    elif action < 0.2 and isinstance(parent, dict):
        parent[f"k{rng.randrange(10)}"] = "__X__"
    else:
        parent[key] = "__X__"
    text = json.dumps(value).replace('"__X__"', rng.choice(HOSTILE), 1).encode()
    return text if len(text) <= max_size else atheris.Mutate(data, max_size)


def test_one_input(data: bytes) -> None:
    """One libFuzzer iteration."""
    try:
        report = Report.from_json(data)
    except ReportFormatError:
        return  # a clean refusal
    repr(report)
    report._repr_html_()
    assert Report.from_json(report.to_json()) == report, "what was loaded is not written back the same"
    if STAGE == "load":
        return
    for fmt in ("table", "csv", "md", "html"):
        render(report, fmt)
    for c in (compare_reports(BASE, report), compare_reports(report, BASE)):
        render_compare_table(c)
        for fmt in ("csv", "md", "html"):
            render_comparison(c, fmt)
        json.loads(render_comparison(c, "json"), parse_constant=lambda name: _fail(f"{name} in compare's JSON"))


def _fail(why: str) -> None:
    raise AssertionError(why)


def main() -> None:
    """Entry point: ``--seed DIR``, or libFuzzer's options and corpus directories."""
    if sys.argv[1:2] == ["--seed"]:
        seed(Path(sys.argv[2]))
        return
    atheris.Setup(sys.argv, test_one_input, custom_mutator=mutate)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
