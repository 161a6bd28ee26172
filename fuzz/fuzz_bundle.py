"""Coverage-guided fuzzing of the LiteRT-LM bundle reader with atheris (libFuzzer for Python).

Every input must either read (the header, its section table and metadata, then every model section
loaded and analysed) or raise ``TfliteFlopsError``; anything else escaping is a crash that libFuzzer
reports and saves as ``crash-<sha1>``. Hangs are reported by libFuzzer's ``-timeout``, memory by
``-rss_limit_mb``.

    pip install atheris
    python fuzz/seed_corpus.py fuzz/corpus
    python fuzz/fuzz_bundle.py fuzz/corpus -timeout=5 -rss_limit_mb=2048 -max_total_time=3600
    TFLITE_FLOPS_FUZZ_STAGE=header python fuzz/fuzz_bundle.py fuzz/corpus   # read_bundle only

An input that does not start with the bundle magic gets it prepended, so that every mutation reaches
the bundle reader rather than the .tflite one (fuzz/fuzz_analyze.py covers that). See fuzz/README.md.
"""

from __future__ import annotations

import os
import sys

import atheris

with atheris.instrument_imports(include=["tflite_flops"]):
    import tflite_flops
    from tflite_flops.errors import TfliteFlopsError
    from tflite_flops.reader.bundle import MAGIC, read_bundle
    from tflite_flops.reader.load import load_model

# Which stages to run: "header" (read_bundle only) or "analyze" (load_model + analyze of every section + to_json).
STAGE = os.environ.get("TFLITE_FLOPS_FUZZ_STAGE", "analyze")


def test_one_input(data: bytes) -> None:
    """One libFuzzer iteration."""
    if not data.startswith(MAGIC):
        data = MAGIC + data
    try:
        if STAGE == "header":
            read_bundle(data)
            return
        model = load_model(data)
        tflite_flops.analyze(model, all_sections=model.bundle is not None).to_json()
    except TfliteFlopsError:
        pass  # a clean refusal is the expected outcome for most inputs


def main() -> None:
    """Entry point: libFuzzer options and corpus directories come from the command line."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
