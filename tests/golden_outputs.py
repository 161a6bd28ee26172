"""Every static output of the tool on the sample models, recorded as text under tests/golden/.

    python tests/golden_outputs.py --update     # record today's outputs (and delete stale files)
    python tests/golden_outputs.py              # compare, print a diff of each changed output
    python tests/golden_outputs.py --dump DIR   # write every output to DIR (same layout)

A refactor must leave every report, compare, batch, sweep and ops output byte-identical to its file
under ``tests/golden/`` (``tests/test_golden.py``). When a change is meant to alter an output, run
``--update`` and commit the files with the change: the reviewer reads the outputs' diff.

Each case is one command (``cases()``); its stdout is stored as ``tests/golden/<command>/<name><ext>``,
the extension the tool itself gives the format (``.txt`` table, ``.json``, ``.csv``, ``.md``,
``.html``, ``.me.json`` Model Explorer), so a file opens as what it is. Every case must exit with 0,
unless ``EXIT_CODES`` says otherwise. Only static analysis is covered (latency differs at every
run). Commands run from the repository root with relative paths, so that paths in the outputs are the
same everywhere; the one figure that changes from run to run, the seconds each model of ``batch``
took, is replaced by ``S``, and the generated 600-op chain's temporary path by ``chain_600.tflite``.

An HTML page is stored in two files that a reviewer can read (``stored_form``): the page, with its
embedded JSON (one line of 10,000+ characters) replaced by :data:`DATA_MARKER` and a line break
after every table header cell, row, chart bar and placement-strip op; and the JSON pretty-printed
beside it (``x.html`` and ``x.html.json``). The check reassembles the page (``from_stored``) and
compares it with the output byte for byte; a changed figure then shows as a short diff of one row
and one JSON line.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import tempfile
from pathlib import Path

import cli_process

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SAMPLES = ["cnn_float", "cnn_int8", "cnn_fp16", "cnn_dynamic_range", "fcn_dynamic", "mlp_dynamic_batch",
           "transformer_block", "lstm", "tiny_decoder", "tiny_decoder_kv"]
REPORT_FORMATS = ["table", "json", "csv", "md", "html", "model-explorer"]
EXTENSIONS = {"table": ".txt", "json": ".json", "csv": ".csv", "md": ".md", "html": ".html", "model-explorer": ".me.json"}
EXIT_CODES: dict[str, int] = {}  # case -> its exit status, for a case that must not exit with 0
CHAIN = "chain_600.tflite"  # how the generated chain is named in the outputs
GOLDEN_TARGET = "x86-avx512"  # the CPU target every recorded output is for (--target)


def cases(chain: str = CHAIN) -> dict[str, list[str]]:
    """{case name: CLI arguments}; ``chain`` is the generated 600-op model (relative to the root)."""
    out: dict[str, list[str]] = {}
    for name in SAMPLES:
        for fmt in REPORT_FORMATS:
            out[f"analyze/{name}.{fmt}"] = ["analyze", f"sample_models/{name}.tflite", "--format", fmt]
    out["analyze/fcn_dynamic-224.json"] = ["analyze", "sample_models/fcn_dynamic.tflite", "--format", "json",
                                           "--input-shape", "image=1x224x224x3"]
    for fmt in ["table", "json", "md"]:  # the what-if without a profile: placement and memory of each precision
        out[f"analyze/fcn_dynamic-what-if.{fmt}"] = ["analyze", "sample_models/fcn_dynamic.tflite", "--what-if",
                                                     "--input-shape", "image=1x64x64x3", "--format", fmt]
    out["analyze/mlp_dynamic_batch-b8.table"] = ["analyze", "sample_models/mlp_dynamic_batch.tflite", "--batch", "8"]
    out["analyze/tiny_decoder-all.json"] = ["analyze", "sample_models/tiny_decoder.tflite", "--all-signatures",
                                            "--format", "json"]
    out["analyze/tiny_decoder-all.html"] = ["analyze", "sample_models/tiny_decoder.tflite", "--all-signatures",
                                            "--format", "html"]
    for fmt in ["table", "json", "md", "html"]:  # a LiteRT-LM bundle: its sections, metadata, every signature
        out[f"analyze/tiny_decoder-bundle.{fmt}"] = ["analyze", "sample_models/tiny_decoder.litertlm",
                                                     "--all-signatures", "--all-sections", "--format", fmt]
    for fmt in ["table", "json", "csv", "md", "html"]:
        out[f"compare/float-int8.{fmt}"] = ["compare", "sample_models/cnn_float.tflite",
                                           "sample_models/cnn_int8.tflite", "--format", fmt]
    for fmt in ["table", "json", "csv", "html"]:
        out[f"sweep/fcn.{fmt}"] = ["sweep", "sample_models/fcn_dynamic.tflite", "--input-shape", "1x64x64x3",
                                   "--input-shape", "1x96x128x3", "--input-shape", "1x128x128x3",
                                   "--input-shape", "1x160x96x3", "--format", fmt]
    out["sweep/mlp-batch.table"] = ["sweep", "sample_models/mlp_dynamic_batch.tflite", "--batch", "1,2,4,8"]
    out["sweep/kv.table"] = ["sweep", "sample_models/tiny_decoder_kv.tflite", "--kv-length", "32,64,128"]
    for fmt in ["table", "csv", "json"]:
        out[f"batch/samples.{fmt}"] = ["batch", "sample_models", "-j", "1", "--format", fmt]
    for fmt in ["table", "csv", "md"]:
        out[f"ops/catalog.{fmt}"] = ["ops", "--format", fmt]
    for fmt in ["table", "json"]:
        out[f"analyze/chain_600.{fmt}"] = ["analyze", chain, "--format", fmt]
    # a fixed CPU target, never this machine's: the outputs are the same on every CI host
    return {name: args if args[0] == "ops" else [*args, "--target", GOLDEN_TARGET] for name, args in out.items()}


def golden_path(name: str) -> Path:
    """The file of case ``name`` ("analyze/cnn_float.table" -> tests/golden/analyze/cnn_float.txt)."""
    stem, fmt = name.rsplit(".", 1)
    return GOLDEN / f"{stem}{EXTENSIONS[fmt]}"


def golden_paths(name: str) -> list[Path]:
    """Every file case ``name`` is stored in: its page and, for HTML, the embedded JSON beside it."""
    path = golden_path(name)
    return [path, data_path(path)] if path.suffix == ".html" else [path]


def data_path(path: Path) -> Path:
    """The file beside an HTML golden that holds its embedded JSON, pretty-printed (x.html -> x.html.json)."""
    return path.with_name(path.name + ".json")


def golden_files() -> list[Path]:
    """Every file recorded under tests/golden/ (the .gitattributes aside)."""
    return sorted(p for p in GOLDEN.rglob("*") if p.is_file() and p.name != ".gitattributes")


# ---- the stored form of an HTML page: its JSON beside it, a line per table row -------------------------

_DATA = re.compile(rb'(<script type="application/json" id="report-data">)(.*?)(</script>)', re.S)
DATA_MARKER = b"@report-data: pretty-printed in the .html.json file beside this one@"
# a line break is stored after each table header cell, table row and chart bar, and before each op of a
# placement strip. None of them can overlap another or be made by joining two lines, so removing the
# breaks (in the reverse order) gives the page back.
_LINE_ENDS = (b"</th>", b"</tr>", b"</rect>")
_LINE_START = b'<span class="op" '



def _compact(pretty: bytes) -> bytes:
    """The embedded form of pretty-printed JSON: compact, with ``&``, ``<``, ``>`` escaped (as the page writes it)."""
    text = json.dumps(json.loads(pretty), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return text.encode()


def stored_form(path: Path, data: bytes) -> dict[Path, bytes]:
    """``{file: bytes}`` as case output ``data`` is stored under ``path``: as it is, or for an HTML page
    its two readable files (see the module docstring)."""
    if path.suffix != ".html":
        return {path: data}
    found = _DATA.search(data)
    pretty = b""
    if found is not None:
        pretty = json.dumps(json.loads(found.group(2)), indent=2, ensure_ascii=False).encode() + b"\n"
        data = data[:found.start(2)] + DATA_MARKER + data[found.end(2):]
    for end in _LINE_ENDS:
        data = data.replace(end, end + b"\n")
    data = data.replace(_LINE_START, b"\n" + _LINE_START)
    return {path: data, data_path(path): pretty}


def from_stored(path: Path) -> bytes:
    """The output that the files of ``path`` record (the inverse of :func:`stored_form`); b"" when missing."""
    if not path.exists():
        return b""
    beside = data_path(path)
    files = {p: p.read_bytes() for p in (path, beside) if p.exists()}
    return joined(path, files)


def joined(path: Path, files: dict[Path, bytes]) -> bytes:
    """The output whose stored form (:func:`stored_form`) under ``path`` is ``files``."""
    data = files[path]
    if path.suffix != ".html":
        return data
    data = data.replace(b"\n" + _LINE_START, _LINE_START)
    for end in _LINE_ENDS:
        data = data.replace(end + b"\n", end)
    pretty = files.get(data_path(path), b"")
    if DATA_MARKER in data and pretty:
        data = data.replace(DATA_MARKER, _compact(pretty), 1)
    return data


def make_chain(folder: Path) -> str:
    """The static-speed benchmark's 600-op chain, written under ``folder`` (inside the root)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from static_speed import make_chain as build

    path = folder / CHAIN
    path.write_bytes(build(600))
    return path.relative_to(ROOT).as_posix()


_SECONDS = [re.compile(rb'("seconds": )[0-9.]+'), re.compile(rb",[0-9.]+$", re.M)]  # batch's wall time


def run(args: list[str], chain: str = CHAIN) -> tuple[bytes, int]:
    """(stdout, exit status) of ``python -m tflite_flops ARGS`` run from the root, normalised."""
    proc = cli_process.run(args, cwd=ROOT, text=False, timeout=600)
    out = proc.stdout
    if args[0] == "batch":  # the time each model took is the one figure that changes from run to run
        out = _SECONDS[0].sub(rb"\1S", out)
        if "csv" in args:
            out = _SECONDS[1].sub(b",S", out)
    return out.replace(chain.encode(), CHAIN.encode()), proc.returncode


class Chain:
    """The generated chain in a temporary folder inside the root (ignored by git), for ``with``."""

    def __enter__(self) -> str:
        self.tmp = tempfile.TemporaryDirectory(dir=ROOT, prefix=".golden-")
        return make_chain(Path(self.tmp.name))

    def __exit__(self, *exc: object) -> None:
        self.tmp.cleanup()


def outputs() -> dict[str, tuple[bytes, int]]:
    """Every case's (stdout, exit status)."""
    with Chain() as chain:
        return {name: run(args, chain) for name, args in cases(chain).items()}


def diff(name: str, expected: bytes, found: bytes, lines: int = 60) -> str:
    """A unified diff of a golden file and today's output (the first ``lines`` lines), for a failure:
    of their stored forms (an HTML page's JSON pretty-printed beside it)."""
    out = []
    old, new = stored_form(golden_path(name), expected), stored_form(golden_path(name), found)
    for path in new:
        rel = path.relative_to(ROOT).as_posix()
        out += list(difflib.unified_diff(old.get(path, b"").decode("utf-8", "replace").splitlines(),
                                         new[path].decode("utf-8", "replace").splitlines(),
                                         f"{rel} (recorded)", f"{rel} (now)", lineterm=""))
    clipped = [line if len(line) <= 300 else line[:300] + " …" for line in out[:lines]]
    more = f"\n… {len(out) - lines} more diff lines" if len(out) > lines else ""
    return "\n".join(clipped) + more


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--update", action="store_true", help="record today's outputs in tests/golden/")
    p.add_argument("--dump", metavar="DIR", help="write every output to DIR instead")
    a = p.parse_args(argv)
    found = outputs()
    bad = {name: code for name, (_, code) in found.items() if code != EXIT_CODES.get(name, 0)}
    if bad:
        print(f"unexpected exit status (EXIT_CODES in {Path(__file__).name} lists the expected ones): {bad}",
              file=sys.stderr)
        return 1
    if a.dump:
        for name, (data, _) in found.items():
            target = Path(a.dump) / golden_path(name).relative_to(GOLDEN)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return 0
    if a.update:
        keep = {p for name in found for p in golden_paths(name)}
        for stale in set(golden_files()) - keep:
            stale.unlink()
        for name, (data, _) in found.items():
            for target, stored in stored_form(golden_path(name), data).items():
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists() or target.read_bytes() != stored:
                    target.write_bytes(stored)
            if from_stored(golden_path(name)) != data:
                print(f"{name}: its stored form does not give the output back", file=sys.stderr)
                return 1
        return 0
    changed = 0
    for name, (data, _) in found.items():
        expected = from_stored(golden_path(name))
        if data != expected:
            changed += 1
            print(diff(name, expected, data, lines=200), end="\n\n")
    stale = sorted(set(golden_files()) - {p for name in found for p in golden_paths(name)})
    for path in stale:
        print(f"stale: {path.relative_to(ROOT).as_posix()} (no case writes it)")
    print(f"{changed} of {len(found)} outputs differ from tests/golden/; {len(stale)} stale file(s)")
    return 1 if changed or stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
