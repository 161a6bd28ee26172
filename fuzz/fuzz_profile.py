"""Coverage-guided fuzzing of the device profile reader and the prediction with atheris (libFuzzer for Python).

Every input is a device profile: either JSON text as it is (one input in four), or the hand-written test profile
(``tests/fixtures/predict_profile.json``) with one to four of its fields set to what the input's bytes choose (a
huge or negative integer, any float with NaN and the infinities, a string with control characters, a list, an
object, null, a deleted field). It must either be refused with ``ProfileError`` or load, and a profile that loads
must predict the sample CNN with no NaN or infinity in the report's JSON and no control character in the lines
the table prints. Anything else escaping is a crash that libFuzzer reports and saves as ``crash-<sha1>``.

    pip install atheris
    python fuzz/fuzz_profile.py fuzz/profile_corpus -timeout=5 -rss_limit_mb=2048 -max_total_time=600

The slow lane runs it for 300 seeded inputs (tests/test_hostile_profiles.py). See fuzz/README.md.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import atheris
from mutations import mutate

with atheris.instrument_imports(include=["tflite_flops"]):
    import tflite_flops
    from tflite_flops.latency.predict import add_prediction
    from tflite_flops.latency.profile import DeviceProfile, ProfileError
    from tflite_flops.reader.load import load_model
    from tflite_flops.render.prediction import prediction_lines
    from tflite_flops.units import printable

ROOT = Path(__file__).resolve().parent.parent
BASE = json.loads((ROOT / "tests" / "fixtures" / "predict_profile.json").read_text())
BASE["cache_curve"] = [[1024, 0.0001, 0.01, 0.1], [1 << 20, 0.001, 0.1, 1.0]]
BASE["reference"] = {"CONV_2D@x": 12.5}
MODEL = load_model(str(ROOT / "sample_models" / "cnn_float.tflite"))
REPORT = tflite_flops.analyze(MODEL)


def _document(fdp: atheris.FuzzedDataProvider):
    """The input's profile: JSON text as it is, or the base profile with a few fields set or deleted."""
    if fdp.ConsumeIntInRange(0, 3) == 0:
        try:
            return json.loads(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()))
        except (ValueError, RecursionError):
            return None  # read_json refuses these (tests/test_hostile_profiles.py)
    return mutate(copy.deepcopy(BASE), fdp)


def _no_nan(token: str):
    raise AssertionError(f"{token} in a report's JSON")


def test_one_input(data: bytes) -> None:
    """One libFuzzer iteration."""
    d = _document(atheris.FuzzedDataProvider(data))
    if d is None:
        return
    try:
        profile = DeviceProfile.from_dict(d, where="fuzz.json")
    except ProfileError as exc:
        assert "\n" not in printable(str(exc))
        return
    report = add_prediction(REPORT, MODEL, profile, forced="fuzz")
    json.loads(report.to_json(), parse_constant=_no_nan)
    for line in prediction_lines(report):
        assert printable(line) == line, line


def main() -> None:
    """Entry point: libFuzzer options and corpus directories come from the command line."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
