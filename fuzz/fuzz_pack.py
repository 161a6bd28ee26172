"""Coverage-guided fuzzing of a calibration pack's import (``calibrate --import``) with atheris.

The harness exports one small pack once (a RESHAPE law's points and the one-ADD chain: 6 runs of 3 models), times its runs as a
phone would (a benchmark_model log each) and writes a ``device.txt``. Every input then replaces, in a copy of
that pack, the manifest (JSON text as it is, one input in four, or the exported manifest with one to four
fields set to what the input's bytes choose: huge or negative integers, NaN and the infinities, strings with
control characters or ``..`` paths, lists, objects, null, a deleted field), the ``device.txt`` (text as it is)
or one run's log. The import must either refuse it with ``ProfileError`` (one printable line) or give a profile
whose notes and machine print no control character. Anything else escaping is a crash that libFuzzer reports
and saves as ``crash-<sha1>``.

    pip install atheris
    python fuzz/fuzz_pack.py fuzz/pack_corpus -timeout=20 -rss_limit_mb=2048 -max_total_time=600

The slow lane runs it for 200 seeded inputs (tests/test_hostile_packs.py). See fuzz/README.md.
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
import tempfile
from pathlib import Path

import atheris
from mutations import mutate

with atheris.instrument_imports(include=["tflite_flops"]):
    from tflite_flops.latency.pack import export_pack, import_pack
    from tflite_flops.latency.profile import ProfileError
    from tflite_flops.measure.runtime import RuntimeSettings
    from tflite_flops.units import printable

WORK = Path(tempfile.mkdtemp(prefix="fuzz-pack-"))
BASE = WORK / "base"
MANIFEST = export_pack(str(BASE), RuntimeSettings(), True, ("RESHAPE-float32", "overhead-add1"))
LOG = ("INFO: Graph: [models/{model}]\nINFO: Use xnnpack: [{xnn}]\n"
       "INFO: count=40 first=120 curr=120 min=118 max=125 avg=120 std=1 p5=118 median=120 p95=124\n\n"
       "INFO: Inference timings in us: Init: 900, First inference: 130, Warmup (avg): 121, Inference (avg): 120\n")
(BASE / "profiles").mkdir(exist_ok=True)
for _entry in MANIFEST["points"]:
    (BASE / _entry["log"]).write_text(LOG.format(model=Path(_entry["model"]).name, xnn=int(_entry["delegate"])))
(BASE / "profiles" / "device.txt").write_text("cores=8\nmodel=fuzz phone\nmachine=aarch64\ntool=benchmark_model\n"
                                               "features= fp asimd asimddp i8mm\ncache_L2=512K\n")


PATHS = ("../manifest.json", "/etc/passwd", "models/../../x", "models/a\nb.tflite", "profiles/../models/x.tflite",
         "models/overhead-add1.tflite")  # paths out of the pack, and the pack's own


def _pack(fdp: atheris.FuzzedDataProvider) -> Path:
    """A copy of the base pack with its manifest, device.txt or a log replaced as the input says."""
    folder = WORK / "case"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(BASE, folder)
    which = fdp.ConsumeIntInRange(0, 5)
    if which == 0:
        (folder / "manifest.json").write_bytes(fdp.ConsumeBytes(fdp.remaining_bytes()))
    elif which == 1:
        (folder / "profiles" / "device.txt").write_bytes(fdp.ConsumeBytes(fdp.remaining_bytes()))
    elif which == 2:
        entry = MANIFEST["points"][fdp.ConsumeIntInRange(0, len(MANIFEST["points"]) - 1)]
        (folder / entry["log"]).write_bytes(fdp.ConsumeBytes(fdp.remaining_bytes()))
    else:
        d = mutate(copy.deepcopy(MANIFEST), fdp, PATHS)
        try:
            text = json.dumps(d)
        except (ValueError, OverflowError):
            text = "{"
        (folder / "manifest.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    return folder


def test_one_input(data: bytes) -> None:
    """One libFuzzer iteration."""
    folder = _pack(atheris.FuzzedDataProvider(data))
    try:
        profile = import_pack(str(folder))
    except ProfileError as exc:
        assert "\n" not in printable(str(exc))
        return
    for text in (*profile.notes, profile.machine.cpu, profile.machine.system, profile.machine.runtime):
        assert printable(text) == text, text


def main() -> None:
    """Entry point: libFuzzer options and corpus directories come from the command line."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
