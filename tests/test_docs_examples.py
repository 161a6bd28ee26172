"""Every command example of README.md and sample_models/README.md runs (issue 12: they lacked `analyze`), and
every relative link of the docs leads to a file that exists (issue 31 moved measurement notes under docs/notes/)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import cli_process
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "sample_models" / "README.md"]
_COMMAND = re.compile(r"^\$?\s*(?:tflite-flops|python -m tflite_flops)\s+(.*)$")


def examples() -> list[tuple[str, str]]:
    """(doc, arguments) of every one-line example in a code block that runs on a bundled sample model."""
    found = []
    for doc in DOCS:
        in_code = False
        for line in doc.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                in_code = not in_code
                continue
            m = _COMMAND.match(line.strip()) if in_code else None
            if m and "sample_models/" in m.group(1) and "..." not in m.group(1):
                found.append((doc.relative_to(ROOT).as_posix(), m.group(1).split(" || ")[0]))
    return found


def test_the_docs_have_examples():
    docs = {doc for doc, _ in examples()}
    assert docs == {"README.md", "sample_models/README.md"}


@pytest.mark.parametrize("doc, args", examples())
def test_example_runs(doc, args):
    r = cli_process.run(shlex.split(args), cwd=ROOT, timeout=120)
    assert r.returncode == 0, f"{doc}: tflite-flops {args}\n{r.stderr}"
    assert r.stdout


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "sample_models" / "README.md"]


@pytest.mark.parametrize("doc", _markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc):
    broken = []
    in_code = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        for target in _LINK.findall(line):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue  # a web address or an anchor of the same page
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(target)
    assert not broken, f"{doc.relative_to(ROOT)}: links to nothing: {broken}"


def test_the_start_page_is_linked_first_from_the_readme():
    links = _LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert links[0] == "docs/start.md"
    start = (ROOT / "docs" / "start.md").read_text(encoding="utf-8")
    assert len(start.splitlines()) < 120  # one page
