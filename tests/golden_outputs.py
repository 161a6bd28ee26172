"""Every static output of the tool on the sample models, for the golden-file test (tests/test_golden.py).

    python tests/golden_outputs.py --update     # record the digests of today's outputs
    python tests/golden_outputs.py --dump DIR   # write every output to DIR (to diff two versions)

A refactor must leave every report, compare, batch, sweep and ops output byte-identical: the
test compares the sha256 of each output with ``tests/golden/digests.json``. When a change is
meant to alter an output, dump the outputs before and after, read the diff, then ``--update``.
Only static analysis is covered (latency differs at every run). Commands run in a subprocess from
the repository root with relative paths, so that paths in the outputs are the same everywhere.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = Path(__file__).resolve().parent / "golden" / "digests.json"
SAMPLES = ["cnn_float", "cnn_int8", "cnn_fp16", "cnn_dynamic_range", "fcn_dynamic", "mlp_dynamic_batch",
           "transformer_block", "lstm", "tiny_decoder", "tiny_decoder_kv"]
REPORT_FORMATS = ["table", "json", "csv", "md", "html", "model-explorer"]


def cases(chain: str | None = None) -> dict[str, list[str]]:
    """{case name: CLI arguments}; ``chain`` is a generated 600-op model (relative to the root) or None."""
    out: dict[str, list[str]] = {}
    for name in SAMPLES:
        for fmt in REPORT_FORMATS:
            out[f"analyze/{name}.{fmt}"] = ["analyze", f"sample_models/{name}.tflite", "--format", fmt]
    out["analyze/fcn_dynamic-224.json"] = ["analyze", "sample_models/fcn_dynamic.tflite", "--format", "json",
                                           "--input-shape", "image=1x224x224x3"]
    out["analyze/mlp_dynamic_batch-b8.table"] = ["analyze", "sample_models/mlp_dynamic_batch.tflite", "--batch", "8"]
    out["analyze/tiny_decoder-all.json"] = ["analyze", "sample_models/tiny_decoder.tflite", "--all-signatures",
                                            "--format", "json"]
    out["analyze/tiny_decoder-all.html"] = ["analyze", "sample_models/tiny_decoder.tflite", "--all-signatures",
                                            "--format", "html"]
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
    if chain is not None:
        for fmt in ["table", "json"]:
            out[f"analyze/chain_600.{fmt}"] = ["analyze", chain, "--format", fmt]
    return out


def make_chain(folder: Path) -> str:
    """The static-speed benchmark's 600-op chain, written under ``folder`` (inside the root)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from static_speed import make_chain as build

    path = folder / "chain_600.tflite"
    path.write_bytes(build(600))
    return path.relative_to(ROOT).as_posix()


_SECONDS = [re.compile(rb'("seconds": )[0-9.]+'), re.compile(rb",[0-9.]+$", re.M)]  # batch's wall time


def run(args: list[str]) -> bytes:
    """The stdout of ``python -m tflite_flops ARGS`` run from the root (any exit code: budget, partial)."""
    proc = subprocess.run([sys.executable, "-m", "tflite_flops", *args], cwd=ROOT, capture_output=True, timeout=600)
    out = proc.stdout
    if args[0] == "batch":  # the time each model took is the one figure that changes from run to run
        out = _SECONDS[0].sub(rb"\1S", out)
        if "csv" in args:
            out = _SECONDS[1].sub(b",S", out)
    return out + f"\n[exit {proc.returncode}]\n".encode()


def outputs() -> dict[str, bytes]:
    """Every case's output."""
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".golden-") as tmp:  # ignored by git
        chain = make_chain(Path(tmp))
        # the chain's path differs per run: name it the same in every output
        return {name: run(args).replace(chain.encode(), b"chain_600.tflite")
                for name, args in cases(chain).items()}


def digests(found: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in sorted(found.items())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--update", action="store_true", help="record today's digests in tests/golden/digests.json")
    p.add_argument("--dump", metavar="DIR", help="write every output to DIR")
    a = p.parse_args(argv)
    found = outputs()
    if a.dump:
        for name, data in found.items():
            target = Path(a.dump) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    if a.update:
        DIGESTS.parent.mkdir(exist_ok=True)
        DIGESTS.write_text(json.dumps(digests(found), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
