"""Coverage-guided fuzzing of the reader and the analysis with atheris (libFuzzer for Python).

Every input must either analyze or raise ``TfliteFlopsError``; anything else escaping is a
crash that libFuzzer reports and saves as ``crash-<sha1>``. Hangs are reported by
libFuzzer's ``-timeout`` (seconds per input).

    pip install atheris
    python fuzz/fuzz_analyze.py fuzz/corpus -timeout=5 -max_total_time=3600

See fuzz/README.md.
"""

from __future__ import annotations

import os
import sys

import atheris

with atheris.instrument_imports(include=["tflite_flops"]):
    import tflite_flops
    from tflite_flops.errors import TfliteFlopsError
    from tflite_flops.reader.load import load_model

# Which stages to run: "reader" (load_model only) or "analyze" (load_model + analyze + to_json).
STAGE = os.environ.get("TFLITE_FLOPS_FUZZ_STAGE", "analyze")


def test_one_input(data: bytes) -> None:
    """One libFuzzer iteration."""
    try:
        model = load_model(data)
        if STAGE != "reader":
            tflite_flops.analyze(model).to_json()
    except TfliteFlopsError:
        pass  # a clean refusal is the expected outcome for most inputs


def main() -> None:
    """Entry point: libFuzzer options and corpus directories come from the command line."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
