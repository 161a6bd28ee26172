"""Where the laws err in the space of op configurations, not of model families (issue 43, part 1).

    python benchmarks/law_coverage.py --profile HOST.json                    # 30 random configurations per cell
    python benchmarks/law_coverage.py --profile HOST.json --n 60 --seed 7 --families conv,conv1d --precisions int8
    python benchmarks/law_coverage.py --profile HOST.json --json out.json   # every sample, for a later fit

The calibration suite's shapes were chosen by hand, from the layers of ImageNet classifiers; the fresh families
that missed (wide 1-D convolutions over long sequences, large fully connected layers, point-wise stacks) sit
outside them. This script samples single-op models at random from a distribution wider than the suite's:

* ``conv``: CONV_2D, square input of 4-160 pixels, 3-768 channels in and 8-768 out (log-uniform; most of them
  multiples of 8, as converters' layers are), kernel 1, 3, 5 or 7, stride 1 or 2;
* ``conv1d``: CONV_2D as Keras' Conv1D converts ([1, 1, length, channels] * [out, 1, k, in]): length 16-2048,
  kernel 3-25, 16-512 channels;
* ``depthwise``: DEPTHWISE_CONV_2D, 4-160 pixels, 8-1024 channels, kernel 3, 5 or 7, stride 1 or 2;
* ``fc``: FULLY_CONNECTED, 1 row half the time (a classifier's head, a decoder's step), else 2-256, 16-4096 in and out;

in float32, full int8 and dynamic-range int8 ("hybrid"), XNNPACK on, each at most 1.5 GMACs and 32 MiB of weights.
Each model is timed as calibration times a point (``calibrate.time_model``) in ``--rounds`` interleaved rounds
(the median of the rounds' medians) and predicted by ``tflite_flops.analyze(path, predict=PROFILE)``. The
profile's drift reference is timed again at the start and at the end (``calibrate.check_drift``): a machine
faster or slower than at calibration moves every error alike, and the report says by how much.

The report gives, per family and precision, the share within ±10% and ±20%, the median signed error
(+: predicted slower) and its 10th and 90th percentiles; then the same by region (kernel, weight bytes against
the caches, MACs), and the worst samples with their configuration. Nothing here fits a law or changes the suite:
it says where points are missing, so that they can be added where the laws err rather than for a family.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

FAMILIES = ("conv", "conv1d", "depthwise", "fc")
PRECISIONS = ("float32", "int8", "hybrid")
MAX_MACS, MIN_MACS = 1_500_000_000, 20_000
MAX_WEIGHTS = 32 << 20


@dataclass(frozen=True)
class Sample:
    family: str
    precision: str
    config: dict[str, int]
    macs: int
    weight_bytes: int

    @property
    def name(self) -> str:
        return f"{self.family}-{self.precision}-" + "-".join(f"{k}{v}" for k, v in self.config.items())


def _log_int(rng: random.Random, lo: int, hi: int) -> int:
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _channels(rng: random.Random, lo: int, hi: int) -> int:
    c = _log_int(rng, lo, hi)
    return max(8, (c + 4) // 8 * 8) if rng.random() < 0.7 and c >= 8 else max(c, 1)


def _weight_bytes(n: int, precision: str) -> int:
    return n * (4 if precision == "float32" else 1)


def draw(rng: random.Random, family: str, precision: str) -> Sample | None:
    """One random configuration of ``family``, or None when it falls outside the bounds (drawn again)."""
    if family == "conv":
        h, k = _log_int(rng, 4, 160), rng.choice((1, 1, 1, 3, 3, 3, 5, 7))
        cin, cout, s = _channels(rng, 3, 768), _channels(rng, 8, 768), rng.choice((1, 1, 1, 1, 2))
        ho = -(-h // s)
        config = {"h": h, "w": h, "cin": cin, "cout": cout, "kh": k, "kw": k, "s": s}
        macs, weights = ho * ho * cout * k * k * cin, cout * k * k * cin
    elif family == "conv1d":
        length, k = _log_int(rng, 16, 2048), rng.choice((3, 5, 7, 9, 11, 15, 25))
        cin, cout, s = _channels(rng, 16, 512), _channels(rng, 16, 512), rng.choice((1, 1, 1, 2))
        lo = -(-length // s)
        config = {"h": 1, "w": length, "cin": cin, "cout": cout, "kh": 1, "kw": k, "s": s}
        macs, weights = lo * cout * k * cin, cout * k * cin
    elif family == "depthwise":
        h, c, k, s = _log_int(rng, 4, 160), _channels(rng, 8, 1024), rng.choice((3, 3, 5, 7)), rng.choice((1, 1, 2))
        ho = -(-h // s)
        config = {"h": h, "c": c, "k": k, "s": s}
        macs, weights = ho * ho * c * k * k, c * k * k
    elif family == "fc":
        m = 1 if rng.random() < 0.5 else _log_int(rng, 2, 256)
        k, n = _log_int(rng, 16, 4096), _log_int(rng, 16, 4096)
        config = {"m": m, "k": k, "n": n}
        macs, weights = m * k * n, k * n
    else:
        raise ValueError(family)
    wb = _weight_bytes(weights, precision)
    if not MIN_MACS <= macs <= MAX_MACS or wb > MAX_WEIGHTS:
        return None
    return Sample(family, precision, config, macs, wb)


def make(sample: Sample) -> Callable[[Any], Any]:
    """The single-op model of ``sample``, written as the calibration suite writes its points."""
    from tflite_flops.latency.suite_models import _act, _bias, _weights, depthwise, fully_connected
    from tflite_flops.measure.model_writer import ACTIVATIONS, PADDING

    c, prec = sample.config, sample.precision
    if sample.family == "depthwise":
        return depthwise(c["h"], c["c"], c["k"], c["s"], "NONE", prec)
    if sample.family == "fc":
        return fully_connected(c["m"], c["k"], c["n"], "NONE", prec)

    def conv(w: Any) -> tuple[list[int], list[int]]:  # a CONV_2D of any kernel and input shape, SAME padding
        x = _act(w, (1, c["h"], c["w"], c["cin"]), prec)
        wt = _weights(w, (c["cout"], c["kh"], c["kw"], c["cin"]), prec, 0)
        b = _bias(w, c["cout"], prec)
        sh = 1 if c["h"] == 1 else c["s"]
        y = _act(w, (1, -(-c["h"] // sh), -(-c["w"] // c["s"]), c["cout"]), prec, out=True)
        w.op("CONV_2D", [x, wt, b], [y], "Conv2DOptions", padding=PADDING["SAME"], strideW=c["s"], strideH=sh,
             fusedActivationFunction=ACTIVATIONS["NONE"], dilationWFactor=1, dilationHFactor=1)
        return [x], [y]
    return conv


def region(sample: Sample, caches: dict[str, int]) -> dict[str, str]:
    """The sample's place in the space, as the report groups it."""
    l2, l3 = caches.get("L2", 1 << 20), caches.get("L3", 32 << 20)
    wb = sample.weight_bytes
    weights = "weights < L2" if wb < l2 else "weights < L3/2" if wb < l3 // 2 else "weights >= L3/2"
    kernel = sample.config.get("kw", sample.config.get("k", 0))
    macs = "MACs < 1M" if sample.macs < 1e6 else "MACs < 30M" if sample.macs < 3e7 else "MACs >= 30M"
    out = {"weights": weights, "MACs": macs}
    if sample.family != "fc":
        out["kernel"] = f"{sample.family} k{kernel}"
    else:
        out["rows"] = "fc one row" if sample.config["m"] == 1 else "fc 2+ rows"
    return out


def summary(errors: list[float]) -> str:
    if not errors:
        return "-"
    within10 = sum(abs(e) <= 0.10 for e in errors)
    within20 = sum(abs(e) <= 0.20 for e in errors)
    qs = np.percentile(errors, [10, 50, 90])
    return (f"{len(errors):4d}  {within10:4d} ({within10 / len(errors):4.0%})  {within20 / len(errors):4.0%}  "
            f"{qs[1]:+7.1%}  {qs[0]:+7.1%} {qs[2]:+7.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", required=True, help="the device profile of this machine (calibrate -o)")
    parser.add_argument("--n", type=int, default=30, help="random configurations per family and precision")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--precisions", default=",".join(PRECISIONS))
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds (median of their medians)")
    parser.add_argument("--seconds", type=float, default=0.1, help="seconds of invokes per model and round")
    parser.add_argument("--json", help="write every sample (configuration, measured, predicted) here")
    args = parser.parse_args(argv)

    import tflite_flops
    from tflite_flops.latency.calibrate import check_drift, time_model
    from tflite_flops.latency.profile import DeviceProfile
    from tflite_flops.latency.suite import SuitePoint, build
    from tflite_flops.measure import runtimes
    from tflite_flops.measure.runtime import RuntimeSettings

    profile = DeviceProfile.load(args.profile)
    runtime = RuntimeSettings(profile.machine.runtime, profile.machine.threads, True)
    caches = dict(profile.machine.caches or {})
    rng = random.Random(args.seed)
    samples: list[Sample] = []
    for family in args.families.split(","):
        for precision in args.precisions.split(","):
            got = 0
            while got < args.n:
                s = draw(rng, family, precision)
                if s is not None:
                    samples.append(s)
                    got += 1
    fb = runtimes.schema_module(runtime.runtime)
    folder = tempfile.mkdtemp(prefix="law_coverage-")
    paths = {}
    for s in samples:
        path = os.path.join(folder, s.name + ".tflite")
        Path(path).write_bytes(build(fb, SuitePoint(s.name, s.family, s.precision, True, False, make(s))))
        paths[s.name] = path
    drift_start = check_drift(profile, runtime)
    times: dict[str, list[float]] = {s.name: [] for s in samples}
    for r in range(args.rounds):
        order = list(samples)
        random.Random(args.seed + r).shuffle(order)
        for s in order:
            times[s.name].append(time_model(Path(paths[s.name]).read_bytes(), runtime, seconds=args.seconds))
        print(f"round {r + 1} of {args.rounds} timed", file=sys.stderr)
    drift_end = check_drift(profile, runtime)
    rows = []
    for s in samples:
        report = tflite_flops.analyze(paths[s.name], predict=profile)
        predicted = report.prediction.latency_ms * 1e3 if report.prediction is not None else float("nan")
        measured = statistics.median(times[s.name])
        rows.append({"sample": s, "measured_us": measured, "predicted_us": predicted,
                     "error": predicted / measured - 1, "low_confidence": bool(report.prediction.low_confidence_ops)})
    for f in Path(folder).iterdir():
        f.unlink()
    os.rmdir(folder)

    def ratio(d: Any) -> str:
        return f"{d.factor:.3f}" if d is not None and d.applied and d.factor is not None else f"- ({d.why})"

    print(f"profile {args.profile}: {profile.machine.cpu}, {profile.machine.runtime} {profile.machine.runtime_version}; "
          f"drift reference now/at calibration: {ratio(drift_start)} at the start, {ratio(drift_end)} at the end")
    print(f"{len(rows)} random configurations, {args.rounds} rounds of {args.seconds} s each; error = predicted / "
          "measured - 1")
    head = f"{'':34s}     n  ±10%         ±20%   median      p10     p90"
    print("\n" + head)
    for family in args.families.split(","):
        for precision in args.precisions.split(","):
            errs = [r["error"] for r in rows if r["sample"].family == family and r["sample"].precision == precision]
            print(f"{family + ' ' + precision:34s} {summary(errs)}")
    print(f"{'all':34s} {summary([r['error'] for r in rows])}")
    print(f"{'  of which flagged low confidence':34s} {summary([r['error'] for r in rows if r['low_confidence']])}")
    groups: dict[str, list[float]] = {}
    for r in rows:
        for key, value in region(r["sample"], caches).items():
            groups.setdefault(f"{key}: {value}", []).append(r["error"])
    print("\nby region\n" + head)
    for name in sorted(groups):
        print(f"{name:34s} {summary(groups[name])}")
    print("\nworst 15")
    for r in sorted(rows, key=lambda r: -abs(r["error"]))[:15]:
        s = r["sample"]
        print(f"  {r['error']:+7.1%}  {r['measured_us']:10.1f} us measured {r['predicted_us']:10.1f} predicted  "
              f"{s.name}  {s.macs / 1e6:.1f} MMACs {s.weight_bytes / 2**20:.2f} MiB"
              f"{'  (low confidence)' if r['low_confidence'] else ''}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([{**{k: v for k, v in r.items() if k != "sample"}, "family": r["sample"].family,
                        "precision": r["sample"].precision, "config": r["sample"].config, "macs": r["sample"].macs,
                        "weight_bytes": r["sample"].weight_bytes} for r in rows], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
