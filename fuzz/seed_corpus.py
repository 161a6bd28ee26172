"""Fill a libFuzzer corpus directory with the sample models (the seeds the fuzzer mutates).

    python fuzz/seed_corpus.py fuzz/corpus
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


def main(argv: list[str]) -> int:
    """Copy every ``sample_models/*.tflite`` and ``*.litertlm`` into the directory given as the only argument."""
    if len(argv) != 1:
        print("usage: python fuzz/seed_corpus.py CORPUS_DIR", file=sys.stderr)
        return 2
    target = Path(argv[0])
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted([*SAMPLES.glob("*.tflite"), *SAMPLES.glob("*.litertlm")]):
        shutil.copyfile(path, target / path.name)
    print(f"{len(list(target.iterdir()))} files in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
