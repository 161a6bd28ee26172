"""The package's layers import only downwards (module-level and function-level imports alike).

Layers, bottom to top (docs/contributing.md): the leaves (errors, units, files, settings, targets, _version); the reader;
the op registry; the report (pure data); the analysis; measurement; studies; renderers; the
library front door (api, convert); the commands; the CLI and the package itself. A module may
import its own layer and the layers below it, never one above. On top of that:

* the latency package (``latency/``) spans two layers: its static modules (profile, features, predict, fit) are
  the prediction layer, below the analysis (which calls them), the ones that write and time models (suite,
  calibrate, pack) measurement;
* ``device/`` (benchmark_model's outputs, read and joined to a report) is on the measure layer;
* measurement never imports render (it draws no output of its own but a progress bar);
* the Report's records never import budget, completeness, compare or render (those read Reports);
* no module imports the package's own ``__init__`` (``from . import __version__`` and the like):
  that cycle through the package (package -> sweep -> analysis -> package) hid from the cycle test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import source_trees

PACKAGE = Path(__file__).resolve().parent.parent / "tflite_flops"
P = "tflite_flops"

# the latency package's modules that write and time models (the rest of latency/ is static: analysis layer)
LATENCY_MEASURE = (f"{P}.latency.suite", f"{P}.latency.suite_models", f"{P}.latency.calibrate", f"{P}.latency.pack",
                   f"{P}.latency.pack_manifest", f"{P}.latency.pack_files", f"{P}.latency.results")
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("leaves", (f"{P}._version", f"{P}.errors", f"{P}.units", f"{P}.files", f"{P}.settings", f"{P}.targets")),
    ("reader", (f"{P}.reader",)),
    ("ops", (f"{P}.ops",)),
    ("report", (f"{P}.report",)),
    # latency/'s static half (the profile, the features, the prediction and the fit run nothing) is below the
    # analysis: the analysis calls the prediction and hands it what it placed, never the reverse
    ("prediction", (f"{P}.latency",)),
    ("analysis", (f"{P}.analysis",)),
    ("measure", (f"{P}.measure", f"{P}.device", *LATENCY_MEASURE)),
    ("studies", (f"{P}.studies",)),
    ("render", (f"{P}.render",)),
    ("api", (f"{P}.api", f"{P}.convert")),
    ("commands", (f"{P}.commands",)),
    ("entry", (f"{P}.cli", f"{P}.__main__", P)),
]
FORBIDDEN = [  # (importer prefix, imported prefix): edges the layer order alone would allow
    (f"{P}.report.records", f"{P}.report.budget"),
    (f"{P}.report.records", f"{P}.report.completeness"),
    (f"{P}.report.records", f"{P}.report.compare"),
    (f"{P}.report", f"{P}.render"),
    (f"{P}.measure", f"{P}.render"),
    (f"{P}.device", f"{P}.render"),
    *((m, f"{P}.render") for m in LATENCY_MEASURE),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def layer(module: str) -> int:
    """The index of the module's layer: the longest matching prefix wins."""
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    if rank is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return rank


def edges(path: Path) -> set[tuple[str, int]]:
    """(imported package module, line) for every import of ``path``, anywhere in the file."""
    return _edges_in(source_trees.nodes(path), module_name(path), path.name == "__init__.py")


def edges_of(source: str, name: str, is_init: bool) -> set[tuple[str, int]]:
    """(imported package module, line) for every import in ``source``, the text of module ``name``.

    ``from X import a`` imports the module ``X.a`` when that is a module, else ``X`` itself
    (its ``__init__``): so ``from . import __version__`` in the package is an edge to the package.
    """
    return _edges_in(ast.walk(ast.parse(source)), name, is_init)


def _edges_in(nodes, name: str, is_init: bool) -> set[tuple[str, int]]:
    """:func:`edges_of` on the nodes of a module's syntax tree."""
    package = name if is_init else name.rpartition(".")[0]
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == P or node.module.startswith(P + ".")):
                target = node.module
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add((sub if sub in MODULES else target, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == P or alias.name.startswith(P + "."):
                    found.add((alias.name, node.lineno))
    return {(t, line) for t, line in found if t != name}


def test_every_module_is_in_a_layer():
    for name in MODULES:
        layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_downwards(name):
    path = MODULES[name]
    mine = layer(name)
    bad = []
    for target, line in sorted(edges(path)):
        if name != P and name != f"{P}.__main__" and target == P:
            bad.append(f"line {line}: imports the package's own __init__")
            continue
        theirs = layer(target)
        if theirs > mine:
            bad.append(f"line {line}: {LAYERS[mine][0]} imports {target} ({LAYERS[theirs][0]}, above it)")
        for importer, imported in FORBIDDEN:
            if (name == importer or name.startswith(importer + ".")) and \
                    (target == imported or target.startswith(imported + ".")):
                bad.append(f"line {line}: {name} must not import {target}")
    assert not bad, f"{name}:\n" + "\n".join(bad)


def test_the_checker_sees_function_level_imports_and_the_package_init():
    """The checker itself: an import inside a function counts, ``from . import __version__`` is an edge to
    the package, and ``from .. import runtimes`` an edge to that submodule, not to the package."""
    source = "def f():\n    from ..render import text\n\nfrom .. import __version__\nfrom . import runtimes\n"
    found = {t for t, _ in edges_of(source, f"{P}.measure.probe", is_init=False)}
    assert found == {f"{P}.render.text", P, f"{P}.measure.runtimes"}


# A module holds one concept, however long it takes (issue 42: a 700-line cap forced five concepts apart); what a
# newcomer must read in one go is a function, and that has a cap. The module cap only catches a file that has
# become several concepts.
MAX_FUNCTION_LINES = 160
MAX_MODULE_LINES = 1500
MAX_TOP_LEVEL_MODULES = 10  # the rest lives in the layer subpackages


def test_no_function_outgrows_a_reading_and_no_module_holds_several_concepts():
    long_functions, long_modules = {}, {}
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            long_modules[name] = len(text.splitlines())
        for node in source_trees.nodes(path):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long_functions[f"{name}.{node.name}"] = node.end_lineno - node.lineno + 1
    assert not long_functions, f"functions over {MAX_FUNCTION_LINES} lines (split along a seam of the logic): " \
                               f"{long_functions}"
    assert not long_modules, f"modules over {MAX_MODULE_LINES} lines (several concepts: one module each): " \
                             f"{long_modules}"


def test_few_modules_stay_at_the_package_top():
    top = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= MAX_TOP_LEVEL_MODULES, sorted(top)
