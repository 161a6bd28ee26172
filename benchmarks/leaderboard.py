"""The tool against real phones: LiteRT's leaderboard rows (issue 43 parts 8-10).

Three checks on the rebuilt leaderboard files (``benchmarks/torch_models.py --leaderboard DIR``: torchvision
graphs with random weights, converted by litert-torch, named as the rows' ``file``; latency and memory do not
depend on weight values), each against the device's own figures in the same rows:

1. **Latency from whole-model results** (``calibrate --from-results``): each CPU row of ``--device`` predicted by
   a profile fitted, on ``--base``'s laws, to the device's other rows (leave one model out), beside one scale
   fitted the same way. Twice: on the float models (the set the one-scale baseline of the issue was measured on),
   and on every rebuilt model (quantized ones too: a precision only one model has cannot be told by leaving it
   out, its class falls back to the common factor).
2. **XNNPACK's placement**: the ops, delegated ops and node subsets the analysis gives at ``--target`` against
   the row's ``nodes_total``, ``nodes_delegated`` and ``partitions`` (benchmark_model's log counts every node
   subset of the partitioning, the delegated ones and the CPU ones between them), where the rebuilt graph has
   the row's node count.
3. **Memory**: the memory headline at ``--target`` against the row's ``memory_mb.overall_footprint``
   (benchmark_model's peak resident memory growth, in MiB).

    python benchmarks/leaderboard.py --rows LEADERBOARD.jsonl --models DIR --base HOST.json
        [--device "Pixel 9 Pro"] [--target arm-i8mm]

The rows of other devices are the project's held-out check: nothing here fits or tunes on them.
Prints tables only; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tflite_flops  # noqa: E402
from tflite_flops.latency.profile import DeviceProfile  # noqa: E402
from tflite_flops.latency.results import fit_from_results, read_results, within  # noqa: E402

FLOAT = ("float32", "float16")


def _pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f}%"


def latency(rows: list, models: str, base: DeviceProfile, device: str, target: str) -> None:
    floats = [r for r in rows if _is_float(os.path.join(models, r.file))]
    for title, chosen in (("float models", floats), ("every rebuilt model", rows)):
        fit = fit_from_results(chosen, models, device, base, target)
        f = fit.fitted
        print(f"\n## Latency, {title}: {device} CPU, each model left out of the fit that predicts it")
        print(f"{'model':40s} {'measured':>10s} {'classes':>9s} {'one scale':>10s}")
        for x in f:
            print(f"{x.file:40s} {x.measured_ms:10.2f} {_pct(x.loo_ms, x.measured_ms):>9s} "
                  f"{_pct(x.loo_scale_ms, x.measured_ms):>10s}")
        m = [x.measured_ms for x in f]
        n_class, n_scale = within([x.loo_ms for x in f], m), within([x.loo_scale_ms for x in f], m)
        med_c = statistics.median(x.loo_ms / x.measured_ms - 1 for x in f) * 100
        med_s = statistics.median(x.loo_scale_ms / x.measured_ms - 1 for x in f) * 100
        print(f"within ±10%: classes {n_class} of {len(f)} (median {med_c:+.1f}%), one scale {n_scale} of {len(f)} "
              f"(median {med_s:+.1f}%); factors fitted on all: "
              + ", ".join(f"{c} ×{v:.3g}" for c, v in fit.factors.items()))
        for why in fit.left_out:
            print(f"  left out: {why}")


def _is_float(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    r = tflite_flops.analyze(path)
    return all(o.precision in FLOAT or o.precision in ("-", "", None) for o in r.ops)


def placement_and_memory(rows_file: str, models: str, device: str, target: str) -> None:
    rows = [json.loads(line) for line in Path(rows_file).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("device") == device and r.get("accelerator") == "cpu"]
    print(f"\n## XNNPACK placement and memory at --target {target}: {device} CPU rows")
    print(f"{'model':40s} {'ops/nodes':>10s} {'delegated':>12s} {'subsets':>10s} {'memory MiB':>18s} {'ratio':>6s}")
    ratios = []
    for r in rows:
        path = os.path.join(models, r["file"])
        if not os.path.isfile(path):
            continue
        d = tflite_flops.analyze(path, target=target).to_dict()
        x = d["delegation"]["xnnpack"]
        ops = sum(1 for o in d["ops"] if o.get("subgraph", 0) == 0)
        same = ops == r["nodes_total"]
        subsets = x["subsets"]  # every node subset, as benchmark_model's "partitions" counts them
        head = d["memory"]["runtime_total_bytes"] / 2**20
        foot = r["memory_mb"]["overall_footprint"]
        ratios.append(head / foot)
        print(f"{r['file']:40s} {ops:>4d}/{r['nodes_total']:<5d} "
              f"{x['delegated_ops']:>5d}/{r['nodes_delegated']:<6d} {str(subsets):>4s}/{r['partitions']:<5d} "
              f"{head:8.1f}/{foot:<9.1f} {head / foot:6.3f}" + ("" if same else "  (graph differs)"))
    if ratios:
        print(f"memory within ±10%: {sum(abs(q - 1) <= 0.10 for q in ratios)} of {len(ratios)}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", required=True, help="the leaderboard's JSON Lines rows")
    p.add_argument("--models", required=True, help="the rebuilt files (torch_models.py --leaderboard DIR)")
    p.add_argument("--base", required=True, help="a profile of this host (calibrate -o HOST.json)")
    p.add_argument("--device", default="Pixel 9 Pro")
    p.add_argument("--target", default="arm-i8mm", help="the device's CPU target (Tensor G4: Cortex-X4/A720/A520)")
    args = p.parse_args()
    device, rows = read_results([args.rows], args.device)
    latency(rows, args.models, DeviceProfile.load(args.base), device, args.target)
    placement_and_memory(args.rows, args.models, device, args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
